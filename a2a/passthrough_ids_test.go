package a2a_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/a2a"
)

// strictPeer is a JSON-RPC peer that reads params as most non-Go A2A
// SDKs do: keys case-sensitively, the exact spelling only. A send makes
// the task t-<messageId>; it notes every task it is asked to get or
// cancel, and the tenants it is sent (in any spelling).
type strictPeer struct {
	// mu guards touched and tenants.
	mu      sync.Mutex
	touched []string
	tenants []string
}

func (p *strictPeer) serve(rw http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "card.json") {
		_, _ = io.WriteString(rw, `{"name":"strict","supportedInterfaces":[{"url":"http://`+r.Host+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
		return
	}
	var req struct {
		ID     json.RawMessage
		Method string
		Params map[string]any
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	id := ""
	switch req.Method {
	case "SendMessage":
		msg, _ := req.Params["message"].(map[string]any)
		id, _ = msg["taskId"].(string)
		if id == "" {
			mid, _ := msg["messageId"].(string)
			id = "t-" + mid
		}
	default:
		id, _ = req.Params["id"].(string)
	}
	p.mu.Lock()
	p.touched = append(p.touched, req.Method+" "+id)
	for k, v := range req.Params {
		if strings.EqualFold(k, "tenant") {
			p.tenants = append(p.tenants, fmt.Sprint(k, "=", v))
		}
	}
	p.mu.Unlock()
	task, _ := json.Marshal(map[string]any{"id": id, "contextId": "c-" + id, "status": map[string]string{"state": "TASK_STATE_COMPLETED"}})
	if req.Method == "SendMessage" {
		task = []byte(`{"task":` + string(task) + `}`)
	}
	_, _ = io.WriteString(rw, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+string(task)+`}`)
}

// The ids the pass-through checks are the ids the peer acts on: params
// that name a field twice in spellings wunder reads as one (id and ID,
// taskId and task_id, a key given twice) could be read otherwise by a
// peer — a case-sensitive one takes the exact spelling — and are refused
// (-32602) before anything reaches the peer; so is an HTTP+JSON body
// naming another task than its path. Bob never reaches alice's task. A
// tenant, wunder's, is never sent on, in whatever case it is spelled.
func TestPassThroughIDsAreUnambiguous(t *testing.T) {
	peer := &strictPeer{}
	srv := httptest.NewServer(http.HandlerFunc(peer.serve))
	t.Cleanup(srv.Close)
	f := newPassFront(t, &a2a.Peer{Name: "strict", Card: cardAt(srv.URL + "/card.json"), HTTP: http.DefaultClient, Timeout: 10 * time.Second})

	rpc := func(user, method, params string) rpcResp {
		t.Helper()
		status, body := f.do(t, "POST", "/a2a/strict", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`,
			map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "X-Wunder-User": user})
		var r rpcResp
		if status != 200 || json.Unmarshal([]byte(body), &r) != nil {
			t.Fatalf("%s %s: HTTP %d %s", user, method, status, body)
		}
		return r
	}
	for _, u := range []string{"alice", "bob"} {
		if r := rpc(u, "SendMessage", `{"message":{"messageId":"`+u+`","role":"ROLE_USER","parts":[{"text":"hi"}]}}`); r.Error != nil {
			t.Fatalf("%s's send: %+v", u, r.Error)
		}
	}
	msg := func(ids string) string {
		return `{"message":{"messageId":"m",` + ids + `,"role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	}
	for _, c := range []struct{ name, method, params string }{
		{"id and ID", "CancelTask", `{"id":"t-alice","ID":"t-bob"}`},
		{"ID and id", "GetTask", `{"ID":"t-bob","id":"t-alice"}`},
		{"id twice", "CancelTask", `{"id":"t-alice","id":"t-bob"}`},
		{"taskId and TaskId", "SendMessage", msg(`"taskId":"t-alice","TaskId":"t-bob"`)},
		{"taskId and task_id", "SendMessage", msg(`"task_id":"t-alice","taskId":"t-bob"`)},
		{"taskId and a folded ſ", "SendMessage", msg(`"taskId":"t-alice","ta\u017fkId":"t-bob"`)},
		{"message twice", "SendMessage", `{"message":{"messageId":"m","taskId":"t-alice","role":"ROLE_USER","parts":[{"text":"hi"}]},` +
			`"Message":{"messageId":"m","taskId":"t-bob","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		{"referenceTaskIds twice", "SendMessage", msg(`"referenceTaskIds":["t-alice"],"reference_task_ids":["t-bob"]`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rpc("bob", c.method, c.params)
			if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "more than once") {
				t.Errorf("%s: %+v; want -32602 (a field named more than once)", c.params, r.Error)
			}
		})
	}
	// Keys of free-form values (metadata, data parts) are the caller's.
	if r := rpc("bob", "SendMessage", `{"message":{"messageId":"m","taskId":"t-bob","role":"ROLE_USER","metadata":{"k":1,"K":2},`+
		`"parts":[{"data":{"id":1,"ID":2}}]}}`); r.Error != nil {
		t.Errorf("free-form keys that differ in case: %+v; want them passed", r.Error)
	}
	peer.mu.Lock()
	touched := slices.Clone(peer.touched)
	peer.mu.Unlock()
	for _, x := range touched {
		if strings.HasSuffix(x, "t-alice") && x != "SendMessage t-alice" {
			t.Errorf("the peer was made to act on alice's task for bob: %s (all: %q)", x, touched)
		}
	}

	// A tenant names a wunder user and stays here, in any spelling: the
	// peer's interface has none, so the peer is sent none.
	if r := rpc("alice", "GetTask", `{"Tenant":"alice","id":"t-alice"}`); r.Error != nil {
		t.Errorf("alice's get naming her tenant: %+v", r.Error)
	}
	peer.mu.Lock()
	tenants := slices.Clone(peer.tenants)
	peer.mu.Unlock()
	if len(tenants) != 0 {
		t.Errorf("the peer was sent wunder's tenants: %q", tenants)
	}

	// HTTP+JSON: the body may not name another task than the path.
	status, body := f.do(t, "POST", "/a2a/w/v1/tasks/t-1:cancel", `{"id":"t-2"}`,
		map[string]string{"Content-Type": "application/json", "X-Wunder-User": "bob"})
	if status != 400 || !strings.Contains(body, "INVALID_ARGUMENT") || !strings.Contains(body, "path") {
		t.Errorf("a cancel whose body names another task: %d %s; want 400 INVALID_ARGUMENT", status, body)
	}
	status, body = f.do(t, "POST", "/a2a/w/v1/tasks/t-1:cancel", `{"ID":"t-1","id":"t-2"}`,
		map[string]string{"Content-Type": "application/json", "X-Wunder-User": "bob"})
	if status != 400 || !strings.Contains(body, "INVALID_ARGUMENT") {
		t.Errorf("a cancel body naming id twice: %d %s; want 400 INVALID_ARGUMENT", status, body)
	}
	// A body that agrees with its path, in any spelling wunder reads, passes
	// these checks (and is bob's to cancel or not: not found).
	status, body = f.do(t, "POST", "/a2a/w/v1/tasks/t-1:cancel", `{"ID":"t-1"}`,
		map[string]string{"Content-Type": "application/json", "X-Wunder-User": "bob"})
	if status != 404 {
		t.Errorf("a cancel body naming its path's task: %d %s; want 404 (not bob's)", status, body)
	}
}
