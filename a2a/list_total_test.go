package a2a_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wunder/wunder/a2a"
)

// ListTasks' totalSize counts every task the filter selects, on every
// page, and only the caller's.
func TestListTasksTotalSizeExact(t *testing.T) {
	e := newEnv(t, nil)
	c := sdkClient(t, e)
	first, err := c.SendMessage(t.Context(), userMsg("one"))
	if err != nil {
		t.Fatal(err)
	}
	ctxID := first.(*sdk.Task).ContextID
	for _, q := range []string{"two", "three"} {
		req := userMsg(q)
		req.Message.ContextID = ctxID
		if _, err := c.SendMessage(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SendMessage(t.Context(), userMsg("elsewhere")); err != nil {
		t.Fatal(err)
	}
	// Another user's task is not counted.
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"bob's"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Wunder-User", "bob")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	token := ""
	var seen []string
	for page := 1; page <= 3; page++ {
		list, err := c.ListTasks(t.Context(), &sdk.ListTasksRequest{ContextID: ctxID, PageSize: 1, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if list.TotalSize != 3 || len(list.Tasks) != 1 {
			t.Fatalf("page %d: totalSize %d with %d tasks, want 3 and 1", page, list.TotalSize, len(list.Tasks))
		}
		if slices.Contains(seen, string(list.Tasks[0].ID)) {
			t.Fatalf("page %d shows task %s again", page, list.Tasks[0].ID)
		}
		seen = append(seen, string(list.Tasks[0].ID))
		token = list.NextPageToken
	}
	if token != "" {
		t.Fatalf("a fourth page is announced: %q", token)
	}
	all, err := c.ListTasks(t.Context(), &sdk.ListTasksRequest{PageSize: 2})
	if err != nil || all.TotalSize != 4 {
		t.Fatalf("all of the caller's tasks: %+v, %v; want totalSize 4", all, err)
	}
	done, err := c.ListTasks(t.Context(), &sdk.ListTasksRequest{Status: sdk.TaskStateCompleted, PageSize: 1})
	if err != nil || done.TotalSize != 4 {
		t.Fatalf("completed tasks: %+v, %v; want totalSize 4", done, err)
	}
}

// noCount is a backend without CountRuns.
type noCount struct{ a2a.Backend }

// Without a count, totalSize is the documented lower bound: the tasks on
// this page, plus one when there is a next page.
func TestListTasksTotalSizeLowerBound(t *testing.T) {
	e := newEnv(t, nil)
	h := a2a.New(noCount{e.o}, nil)
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rpc := func(body string) json.RawMessage {
		t.Helper()
		r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out rpcResp
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
			t.Fatalf("%s: %v %+v", body, err, out.Error)
		}
		return out.Result
	}
	for range 3 {
		rpc(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)
	}
	var list struct {
		TotalSize     int    `json:"totalSize"`
		NextPageToken string `json:"nextPageToken"`
	}
	if err := json.Unmarshal(rpc(`{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"pageSize":1}}`), &list); err != nil {
		t.Fatal(err)
	}
	if list.TotalSize != 2 || list.NextPageToken == "" {
		t.Fatalf("lower bound: %+v, want totalSize 2 with a next page", list)
	}
}
