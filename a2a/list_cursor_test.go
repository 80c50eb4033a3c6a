package a2a_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wunder/wunder/orchestrator"
)

// ListTasks pages by the core's one cursor: a pageToken of another list,
// of this list with another filter or caller, an offset (the form tokens
// had before keyset pages) or garbage is invalid params (-32602) naming
// pageToken on JSON-RPC, and 400 INVALID_ARGUMENT on the HTTP+JSON
// binding. The token a page hands out takes the caller to the next.
func TestListTasksRefusesForeignTokens(t *testing.T) {
	e := newEnv(t, nil)
	rpc := func(user string, params map[string]any) rpcResp {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params})
		r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("A2A-Version", "1.0")
		r.Header.Set("Content-Type", "application/json")
		if user != "" {
			r.Header.Set("X-Wunder-User", user)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out rpcResp
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	c := sdkClient(t, e)
	first, err := c.SendMessage(t.Context(), userMsg("one"))
	if err != nil {
		t.Fatal(err)
	}
	ctxA := first.(*sdk.Task).ContextID
	second := userMsg("two")
	second.Message.ContextID = ctxA
	if _, err := c.SendMessage(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	var page struct {
		Tasks         []json.RawMessage `json:"tasks"`
		NextPageToken string            `json:"nextPageToken"`
	}
	out := rpc("", map[string]any{"contextId": ctxA, "pageSize": 1})
	if out.Error != nil || json.Unmarshal(out.Result, &page) != nil || len(page.Tasks) != 1 || page.NextPageToken == "" {
		t.Fatalf("ListTasks(a page of 1 of 2) = %s, %+v", out.Result, out.Error)
	}
	token := page.NextPageToken
	sessions, err := orchestrator.NewPager("cursor", "", 1, "sessions", "anyone")
	if err != nil {
		t.Fatal(err)
	}
	otherList := sessions.Cursor(&orchestrator.PageKey{At: time.Now(), ID: "sess_x"})
	for _, tc := range []struct {
		name, user string
		params     map[string]any
		detail     string
	}{
		{"another context", "", map[string]any{"contextId": "ctx_other", "pageToken": token}, "another list or filter"},
		{"another status", "", map[string]any{"contextId": ctxA, "status": "TASK_STATE_COMPLETED", "pageToken": token}, "another list or filter"},
		{"another caller", "bob", map[string]any{"contextId": ctxA, "pageToken": token}, "another list or filter"},
		{"another list's cursor", "", map[string]any{"pageToken": otherList}, "another list or filter"},
		{"an offset", "", map[string]any{"contextId": ctxA, "pageToken": "1"}, "not a cursor this server issued"},
		{"garbage", "", map[string]any{"pageToken": "%%%"}, "not a cursor this server issued"},
	} {
		out := rpc(tc.user, tc.params)
		if out.Error == nil || out.Error.Code != -32602 || !strings.Contains(out.Error.Message, "pageToken") || !strings.Contains(out.Error.Message, tc.detail) {
			t.Errorf("JSON-RPC, %s: %s, %+v; want -32602 naming pageToken: %s", tc.name, out.Result, out.Error, tc.detail)
		}
	}
	resp, st := restDo(t, e.url, "GET", "/a2a/v1/tasks?contextId=ctx_other&pageToken="+url.QueryEscape(token), "")
	if resp.StatusCode != 400 || st.Error.Status != "INVALID_ARGUMENT" || !strings.Contains(st.Error.Message, "pageToken") {
		t.Errorf("HTTP+JSON, another context: %d %+v; want 400 INVALID_ARGUMENT naming pageToken", resp.StatusCode, st.Error)
	}
	out = rpc("", map[string]any{"contextId": ctxA, "pageSize": 1, "pageToken": token})
	if out.Error != nil || json.Unmarshal(out.Result, &page) != nil || len(page.Tasks) != 1 || page.NextPageToken != "" {
		t.Fatalf("ListTasks(the last page) = %s, %+v", out.Result, out.Error)
	}
}
