package a2a_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/wunder/wunder/a2a"
	wcard "github.com/wunder/wunder/agentcard"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// peers is a static a2a.Peers.
type peers map[string]*a2a.Peer

func (p peers) Peer(name string) (*a2a.Peer, bool) {
	x, ok := p[name]
	return x, ok
}

// cardAt reads the card at url, asking for the version the pass-through
// asks for.
func cardAt(url string) func(context.Context, string) (json.RawMessage, error) {
	return func(ctx context.Context, version string) (json.RawMessage, error) {
		hdr := http.Header{}
		if version != "" {
			hdr.Set(w.VersionHeader, version)
		}
		b, _, err := w.FetchCardRaw(ctx, http.DefaultClient, url, hdr, false)
		return b, err
	}
}

// passFront is wunder with peers published: "w", a second wunder (the
// a2a tests' env: 1.0 and 0.3 JSON-RPC, HTTP+JSON); "down", nothing
// listening; "junk", a card whose interfaces answer no A2A; "slow", one
// that answers after the peer's timeout; "cut", one whose streams stop
// after their first event; "loop", published through the
// front itself; and extra.
type passFront struct {
	*env
	peer *env
}

func newPassFront(t *testing.T, extra ...*a2a.Peer) *passFront {
	t.Helper()
	peer := newEnv(t, nil)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	junk := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if dir, ok := strings.CutSuffix(r.URL.Path, "card.json"); ok {
			base := "http://" + r.Host + dir
			_, _ = io.WriteString(rw, `{"name":"junk","supportedInterfaces":[{"url":"`+base+`rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},`+
				`{"url":"`+base+`rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/dup/") {
			// A peer that gives every task one id.
			var req struct{ ID json.RawMessage }
			_ = json.NewDecoder(r.Body).Decode(&req)
			_, _ = io.WriteString(rw, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"task":{"id":"t-fixed","contextId":"c-fixed","status":{"state":"TASK_STATE_COMPLETED"}}}}`)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/cut/") {
			// A stream broken off: one event, then nothing.
			_, _ = io.Copy(io.Discard, r.Body)
			rw.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(rw, `data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-cut","contextId":"c-cut","status":{"state":"TASK_STATE_WORKING"}}}}`+"\n\n")
			rw.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		if strings.Contains(r.URL.Path, "slow") {
			_, _ = io.Copy(io.Discard, r.Body) // then a caller who hangs up is seen
			<-r.Context().Done()               // answers when the caller gives up
			return
		}
		rw.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(rw, "<html>oops</html>")
	}))
	t.Cleanup(junk.Close)
	f := &passFront{peer: peer}
	ps := peers{
		"w":    {Name: "w", Card: cardAt(peer.url), HTTP: http.DefaultClient, Timeout: 10 * time.Second},
		"down": {Name: "down", Card: cardAt(closed.URL), HTTP: http.DefaultClient, Timeout: 10 * time.Second},
		"junk": {Name: "junk", Card: cardAt(junk.URL + "/card.json"), HTTP: http.DefaultClient, Timeout: 10 * time.Second},
		"slow": {Name: "slow", Card: cardAt(junk.URL + "/slow/card.json"), HTTP: http.DefaultClient, Timeout: 200 * time.Millisecond},
	}
	ps["cut"] = &a2a.Peer{Name: "cut", Card: cardAt(junk.URL + "/cut/card.json"), HTTP: http.DefaultClient, Timeout: 200 * time.Millisecond}
	ps["dup"] = &a2a.Peer{Name: "dup", Card: cardAt(junk.URL + "/dup/card.json"), HTTP: http.DefaultClient, Timeout: 10 * time.Second}
	for _, p := range extra {
		ps[p.Name] = p
	}
	var front *env
	ps["loop"] = &a2a.Peer{Name: "loop", HTTP: http.DefaultClient, Timeout: 10 * time.Second,
		Card: func(context.Context, string) (json.RawMessage, error) {
			return json.RawMessage(`{"name":"loop","supportedInterfaces":[{"url":"` + front.url + `/a2a/loop","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`), nil
		}}
	core := newEnv(t, nil) // the front's core: its policy and cards
	opts := &a2a.Options{PassThrough: &a2a.PassThroughOptions{Peers: ps, Policy: core.o, IDs: &a2a.MemoryPeerIDStore{},
		Card: wcard.New(core.o, &wcard.Options{GRPC: true}).PeerCard}}
	front = newEnv(t, opts)
	f.env = front
	return f
}

// do posts body to path of the front with headers, and returns the
// status and the body.
func (f *passFront) do(t *testing.T, method, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, f.url+path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const sendParams = `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hello"}]}}`

// Every bad request to a published peer is answered in A2A's own shapes
// (a JSON-RPC error with HTTP 200, a google.rpc.Status with its status),
// never a 500, and none reaches the peer; a peer that is down, slow or
// answers no A2A is unavailable or an invalid agent response; a loop of
// pass-throughs ends.
func TestPassThroughRefusals(t *testing.T) {
	f := newPassFront(t)
	jsonHdr := map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0"}
	with := func(k, v string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0"}
		if k != "" {
			h[k] = v
		}
		return h
	}
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		code                     int // JSON-RPC code (HTTP 200)
	}{
		{"not POST", "GET", "/a2a/w", "", jsonHdr, -32600},
		{"no content type", "POST", "/a2a/w", rpc("SendMessage", sendParams), with("Content-Type", "text/plain"), -32005},
		{"not JSON", "POST", "/a2a/w", "{", jsonHdr, -32700},
		{"unknown method", "POST", "/a2a/w", rpc("Explode", "{}"), jsonHdr, -32601},
		{"no id", "POST", "/a2a/w", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`, jsonHdr, -32600},
		{"bad params", "POST", "/a2a/w", rpc("SendMessage", `{"message":7}`), jsonHdr, -32602},
		{"params not an object", "POST", "/a2a/w", rpc("GetTask", `[1]`), jsonHdr, -32602},
		{"unknown version", "POST", "/a2a/w", rpc("SendMessage", sendParams), with("A2A-Version", "2.0"), -32009},
		{"version and method disagree", "POST", "/a2a/w", rpc("message/send", sendParams), jsonHdr, -32009},
		{"too large", "POST", "/a2a/w", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"`+strings.Repeat("x", 2<<20)+`"}]}}`), jsonHdr, -32600},
		{"push config", "POST", "/a2a/w", rpc("CreateTaskPushNotificationConfig", `{"taskId":"t","url":"https://example.com/h"}`), jsonHdr, -32003},
		{"push config in send", "POST", "/a2a/w", rpc("SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://example.com/h"}}}`), jsonHdr, -32003},
		{"extended card", "POST", "/a2a/w", rpc("GetExtendedAgentCard", `{}`), jsonHdr, -32007},
		{"0.3 has no list", "POST", "/a2a/w", rpc("tasks/list", `{}`), with("A2A-Version", ""), -32601},
		{"tenant not a string", "POST", "/a2a/w", rpc("GetTask", `{"tenant":7,"id":"t"}`), jsonHdr, -32602},
		{"a task wunder never made there", "POST", "/a2a/w", rpc("GetTask", `{"id":"run_0000000000000000000000000a"}`), jsonHdr, -32001},
		{"hops header not a number", "POST", "/a2a/w", rpc("SendMessage", sendParams), with("X-Wunder-A2A-Hops", "many"), -32602},
		{"down", "POST", "/a2a/down", rpc("SendMessage", sendParams), jsonHdr, -32000},
		{"junk", "POST", "/a2a/junk", rpc("SendMessage", sendParams), jsonHdr, -32006},
		{"slow", "POST", "/a2a/slow", rpc("SendMessage", sendParams), jsonHdr, -32000},
		{"a loop", "POST", "/a2a/loop", rpc("SendMessage", sendParams), jsonHdr, -32004},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := f.do(t, c.method, c.path, c.body, c.hdr)
			var r rpcResp
			if status != http.StatusOK || json.Unmarshal([]byte(body), &r) != nil || r.Error == nil || r.Error.Code != c.code {
				t.Fatalf("HTTP %d %s; want a JSON-RPC error %d", status, clipBody(body), c.code)
			}
		})
	}
	// The HTTP+JSON binding's refusals: google.rpc.Status.
	rest := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		code                     string
	}{
		{"unknown route", "GET", "/a2a/w/v1/nowhere", "", nil, 404, "NOT_FOUND"},
		{"unknown path under the peer", "GET", "/a2a/w/elsewhere", "", nil, 404, "NOT_FOUND"},
		{"wrong method", "DELETE", "/a2a/w/v1/message:send", "", nil, 405, "UNIMPLEMENTED"},
		{"not JSON", "POST", "/a2a/w/v1/message:send", "hello", map[string]string{"Content-Type": "text/plain"}, 415, "INVALID_ARGUMENT"},
		{"0.3", "POST", "/a2a/w/v1/message:send", sendParams, map[string]string{"Content-Type": "application/json", "A2A-Version": "0.3"}, 400, "UNIMPLEMENTED"},
		{"bad params", "POST", "/a2a/w/v1/message:send", `{"message":"x"}`, map[string]string{"Content-Type": "application/json"}, 400, "INVALID_ARGUMENT"},
		{"body and path name two tenants", "POST", "/a2a/w/v1/alice/message:send", `{"tenant":"bob",` + sendParams[1:], map[string]string{"Content-Type": "application/json"}, 400, "INVALID_ARGUMENT"},
		{"push config", "POST", "/a2a/w/v1/tasks/t/pushNotificationConfigs", `{"url":"https://example.com/h"}`, map[string]string{"Content-Type": "application/json"}, 400, "FAILED_PRECONDITION"},
		{"junk", "POST", "/a2a/junk/v1/message:send", sendParams, map[string]string{"Content-Type": "application/json"}, 502, "INTERNAL"},
		{"card: wrong method", "POST", "/a2a/w/.well-known/agent-card.json", "", nil, 405, "UNIMPLEMENTED"},
		{"card: unknown version", "GET", "/a2a/w/.well-known/agent-card.json", "", map[string]string{"A2A-Version": "9.9"}, 400, "UNIMPLEMENTED"},
		{"card: down", "GET", "/a2a/down/.well-known/agent-card.json", "", nil, 503, "UNAVAILABLE"},
		{"no such peer", "GET", "/a2a/nobody/.well-known/agent-card.json", "", nil, 404, "NOT_FOUND"},
	}
	for _, c := range rest {
		t.Run("HTTP+JSON "+c.name, func(t *testing.T) {
			status, body := f.do(t, c.method, c.path, c.body, c.hdr)
			var st w.Status
			if status != c.status || json.Unmarshal([]byte(body), &st) != nil || st.Error.Status != c.code {
				t.Fatalf("HTTP %d %s; want %d %s", status, clipBody(body), c.status, c.code)
			}
		})
	}
	// None of it reached the peer.
	runs, err := f.peer.o.ListRuns(t.Context(), orchestrator.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("the peer ran %d tasks (%v)", len(runs), err)
	}
}

func clipBody(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// A second wunder published behind the first, reached by a2a-go's 0.3
// client from the card the front serves for it: message/send keeps the
// peer's task id, tasks/get and message/stream pass through in 0.3's
// shapes.
func TestPassThroughSpeaks03(t *testing.T) {
	f := newPassFront(t)
	card, err := (&agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}).Resolve(t.Context(), f.url+"/a2a/w")
	if err != nil {
		t.Fatal(err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != f.url+"/a2a/w" {
		t.Fatalf("the 0.3 card through the front: %+v", card.SupportedInterfaces)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithDefaultsDisabled(), a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(t.Context(), userMsg("hello"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	if _, err := f.peer.o.GetRun(t.Context(), "", string(task.ID)); err != nil || taskText(task) != "echo: hello" {
		t.Fatalf("the task %s through the front: %v %q", task.ID, err, taskText(task))
	}
	got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("tasks/get through the front: %+v %v", got, err)
	}
	final := sdk.TaskState("")
	for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("stream")) {
		if err != nil {
			t.Fatal(err)
		}
		if su, ok := ev.(*sdk.TaskStatusUpdateEvent); ok {
			final = su.Status.State
		}
	}
	if final != sdk.TaskStateCompleted {
		t.Errorf("message/stream through the front ended %q", final)
	}
}

// A peer that answers two users with one task id: the first to get it
// owns it, and the other is never shown it (an invalid agent response).
func TestPassThroughKeepsUsersApart(t *testing.T) {
	f := newPassFront(t)
	send := func(user string) (int, string) {
		return f.do(t, "POST", "/a2a/dup", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+sendParams+`}`,
			map[string]string{"Content-Type": "application/json", "A2A-Version": "1.0", "X-Wunder-User": user})
	}
	if status, body := send("alice"); status != 200 || !strings.Contains(body, `"t-fixed"`) {
		t.Fatalf("alice's send: %d %s", status, body)
	}
	status, body := send("bob")
	var r rpcResp
	if status != 200 || json.Unmarshal([]byte(body), &r) != nil || r.Error == nil || r.Error.Code != -32006 || strings.Contains(body, "t-fixed") {
		t.Fatalf("bob's send answered with alice's task id: %d %s", status, body)
	}
	if status, body := send("alice"); status != 200 || !strings.Contains(body, `"t-fixed"`) {
		t.Fatalf("alice again: %d %s", status, body)
	}
}
