package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// recordingUpstream is a go-sdk server with the tools "steps" (two
// progress notifications, then "done") and "block" (waits until its call
// is cancelled, closing started first and cancelled after), behind a
// handler that keeps every POST body it receives and answers a call of
// "explode" with HTTP 500.
type recordingUpstream struct {
	url       string
	started   chan struct{}
	cancelled chan struct{}

	mu       sync.Mutex
	bodies   []string
	version  map[string][]string // request id -> the version headers it came with
	nDeletes int
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{started: make(chan struct{}), cancelled: make(chan struct{}), version: map[string][]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "recording", Version: "1"}, nil)
	empty := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "steps", InputSchema: empty}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 2 {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2, Message: "step"})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "block", InputSchema: empty}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(u.started)
		<-ctx.Done()
		close(u.cancelled)
		return nil, ctx.Err()
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			u.mu.Lock()
			u.nDeletes++
			u.mu.Unlock()
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(body, &m)
			u.mu.Lock()
			u.bodies = append(u.bodies, string(body))
			if m.ID != nil {
				u.version[string(m.ID)] = append(u.version[string(m.ID)], r.Header.Get("Mcp-Protocol-Version"))
			}
			u.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"name":"explode"`) {
				// A server error after the call may have run.
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u.url = ts.URL
	return u
}

// versions returns the protocol version headers of the requests with id.
func (u *recordingUpstream) versions(id string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.version[id]
}

// deletes returns how many DELETEs the upstream received.
func (u *recordingUpstream) deletes() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.nDeletes
}

// received returns the bodies the upstream received that contain s.
func (u *recordingUpstream) received(s string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, b := range u.bodies {
		if strings.Contains(b, s) {
			out = append(out, b)
		}
	}
	return out
}

// A tools/call reaches the upstream as the caller sent it (its id and
// progress token unchanged), its progress arrives on its stream, and its
// result is the upstream's.
func TestPassThroughCallWithProgress(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	progress := make(chan float64, 4)
	cs := connect(t, passThroughTo(t, up.url), nil, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Progress
		},
	})
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("steps: %v %+v", err, res)
	}
	// The test's deadline bounds the wait.
	if got := []float64{<-progress, <-progress}; got[0] != 1 || got[1] != 2 {
		t.Errorf("progress = %v, want [1 2]", got)
	}
	calls := up.received(`"tools/call"`)
	if len(calls) != 1 || !strings.Contains(calls[0], `"progressToken":"tok"`) || !strings.Contains(calls[0], `"arguments":{}`) {
		t.Errorf("the upstream received %q, want one call with the caller's token and arguments", calls)
	}
}

// A call the upstream answers with a server error (it may have run) is
// an error to the caller and is never sent upstream again.
func TestPassThroughServerErrorNotRepeated(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	cs := connect(t, passThroughTo(t, up.url), nil, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "explode", Arguments: map[string]any{}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("explode: %+v; want an error", res)
	}
	if got := up.received(`"name":"explode"`); len(got) != 1 {
		t.Fatalf("the upstream received the call %d times, want once: %q", len(got), got)
	}
}

// Cancelling a call cancels it upstream: the caller's notifications/cancelled
// reaches the upstream with the caller's request id. A 2026-07-28 caller
// has no session and cancels by ending its request; the gateway, which
// holds the upstream session, tells the upstream with the id it gave.
func TestPassThroughCancel(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			up := newRecordingUpstream(t)
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: passThroughTo(t, up.url)},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
				errc <- err
			}()
			<-up.started
			cancel()
			<-up.cancelled // the test's deadline bounds the wait
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call returned %v", err)
			}
			blocks := up.received(`"name":"block"`)
			if len(blocks) != 1 {
				t.Fatalf("the upstream received %q, want one call of block", blocks)
			}
			var call struct {
				ID json.RawMessage `json:"id"`
			}
			if err := json.Unmarshal([]byte(blocks[0]), &call); err != nil {
				t.Fatal(err)
			}
			if got := up.received(`"notifications/cancelled"`); len(got) != 1 || !strings.Contains(got[0], `"requestId":`+string(call.ID)) {
				t.Errorf("the upstream received %q, want one cancellation of request %s", got, call.ID)
			}
		})
	}
}

// A session belongs to the user who opened it: another user's token with
// its session id is refused, and nothing reaches the upstream.
func TestPassThroughOtherUser(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: up.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	e := newEnvTokens(t, mcpserver.Options{Upstreams: set}, map[string]string{"a": "alice", "b": "bob"}, orchestratortest.Turn{Content: "ok"})
	cs := connectSession(t, e.url+"/wunder/mcp/up", &http.Client{Transport: bearer("a")}, nil)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("alice's own session: %v", err)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"steps","arguments":{}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/wunder/mcp/up", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	resp, err := (&http.Client{Transport: bearer("b")}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob with alice's session: %d, want 403", resp.StatusCode)
	}
	if got := up.received(`"tools/call"`); len(got) != 0 {
		t.Errorf("the upstream received %q", got)
	}
}

// A request without the protocol version header goes upstream with the
// version the session negotiated; one with another version goes with it,
// for the upstream to judge.
func TestPassThroughVersionHeader(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	url := passThroughTo(t, up.url)
	cs := connectSession(t, url, nil, nil)
	post := func(id, version string) string {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"steps","arguments":{}}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post(`"no-header"`, ""); !strings.Contains(got, `"id":"no-header"`) || !strings.Contains(got, `"done"`) {
		t.Errorf("without a version header: %s", got)
	}
	if got := post(`"older"`, "2025-03-26"); !strings.Contains(got, `"id":"older"`) || !strings.Contains(got, `"done"`) {
		t.Errorf("with an older version header: %s", got)
	}
	want := map[string]string{`"no-header"`: cs.InitializeResult().ProtocolVersion, `"older"`: "2025-03-26"}
	for id, version := range want {
		if got := up.versions(id); len(got) != 1 || got[0] != version {
			t.Errorf("request %s reached the upstream with versions %q, want %q", id, got, version)
		}
	}
}

// The transport's rules hold before anything reaches the upstream: a
// session starts with initialize, names a session that exists, and speaks
// JSON-RPC 2.0, one message at a time.
func TestPassThroughTransportRules(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	url := passThroughTo(t, up.url)
	cs := connectSession(t, url, nil, nil)
	do := func(method, session, body string) int {
		req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"steps","arguments":{}}}`
	for _, c := range []struct {
		name, method, session, body string
		want                        int
	}{
		{"a call without a session", "POST", "", call, http.StatusBadRequest},
		{"a call in an unknown session", "POST", "nope", call, http.StatusNotFound},
		{"a batch", "POST", cs.ID(), "[" + call + "]", http.StatusBadRequest},
		{"not JSON-RPC 2.0", "POST", cs.ID(), `{"id":1,"method":"tools/call"}`, http.StatusBadRequest},
		{"PUT", "PUT", cs.ID(), call, http.StatusMethodNotAllowed},
		{"DELETE of an unknown session", "DELETE", "nope", "", http.StatusNotFound},
	} {
		if got := do(c.method, c.session, c.body); got != c.want {
			t.Errorf("%s: HTTP %d, want %d", c.name, got, c.want)
		}
	}
	if got := up.received(`"tools/call"`); len(got) != 0 {
		t.Errorf("the upstream received %q", got)
	}
	// DELETE ends the session, downstream and upstream.
	if got := do("DELETE", cs.ID(), ""); got != http.StatusNoContent {
		t.Errorf("DELETE: HTTP %d, want 204", got)
	}
	if got := do("POST", cs.ID(), call); got != http.StatusNotFound {
		t.Errorf("a call after DELETE: HTTP %d, want 404", got)
	}
	if got := up.deletes(); got != 1 {
		t.Errorf("the upstream saw %d DELETEs, want 1", got)
	}
}
