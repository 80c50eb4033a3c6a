package mcpserver_test

import (
	"bytes"
	"context"
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

	mu     sync.Mutex
	bodies []string
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{started: make(chan struct{}), cancelled: make(chan struct{})}
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
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			u.mu.Lock()
			u.bodies = append(u.bodies, string(body))
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

// A tools/call takes the raw path (the upstream sees wunder's request id,
// not the SDK client's numbering), its progress arrives on its stream, and
// its result is the upstream's.
func TestPassThroughRawCallWithProgress(t *testing.T) {
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
	if len(calls) != 1 || !strings.Contains(calls[0], `"id":"wunder-`) || !strings.Contains(calls[0], `"progressToken":"tok"`) {
		t.Errorf("the upstream received %q, want one call with a wunder- id and the caller's token", calls)
	}
}

// A call the upstream answers with a server error (it may have run) is
// an error to the caller and is never sent upstream again.
func TestPassThroughRawServerErrorNotRepeated(t *testing.T) {
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

// Cancelling a call forwarded on the raw path cancels it upstream.
func TestPassThroughRawCancel(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	cs := connect(t, passThroughTo(t, up.url), nil, nil)
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
	if got := up.received(`"notifications/cancelled"`); len(got) != 1 || !strings.Contains(got[0], `"requestId":"wunder-`) {
		t.Errorf("the upstream received %q, want one cancellation of a wunder- id", got)
	}
}

// A session belongs to the user who opened it, on the raw path as on the
// SDK's: another user's token with its session id is refused, and nothing
// reaches the upstream.
func TestPassThroughRawOtherUser(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: up.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	e := newEnvTokens(t, mcpserver.Options{Upstreams: set}, map[string]string{"a": "alice", "b": "bob"}, orchestratortest.Turn{Content: "ok"})
	cs := connect(t, e.url+"/wunder/mcp/up", &http.Client{Transport: bearer("a")}, nil)
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

// A request without the protocol version header (the SDK handler takes the
// session's version then) takes the raw path too; one with another
// version than the session's is left to the SDK handler.
func TestPassThroughRawVersionHeader(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	url := passThroughTo(t, up.url)
	cs := connect(t, url, nil, nil)
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
	if got := up.received(`"tools/call"`); len(got) != 1 || !strings.Contains(got[0], `"id":"wunder-`) {
		t.Errorf("the upstream received %q, want one call with a wunder- id", got)
	}
	if got := post(`"older"`, "2025-03-26"); !strings.Contains(got, `"id":"older"`) || !strings.Contains(got, `"done"`) {
		t.Errorf("with an older version header: %s", got)
	}
	if got := up.received(`"tools/call"`); len(got) != 2 || strings.Contains(got[1], `"id":"wunder-`) {
		t.Errorf("the upstream received %q, want the second call from the SDK client", got)
	}
}
