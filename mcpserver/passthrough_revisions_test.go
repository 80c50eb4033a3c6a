package mcpserver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// revisionUpstream is a go-sdk v1.8.0 server with the tool "echo" (and
// "chatty", which logs at info before it answers), served stateless or
// with sessions; its handler can be replaced while it runs, which makes it
// forget its sessions, as a restarted server does. inits counts the
// initialize requests it received.
type revisionUpstream struct {
	url     string
	server  *mcp.Server
	handler atomic.Pointer[http.Handler]
	inits   atomic.Int32
	opts    *mcp.StreamableHTTPOptions
}

func newRevisionUpstream(t *testing.T, stateless bool) *revisionUpstream {
	t.Helper()
	u := &revisionUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "revisions", Version: "1"}, nil),
		opts: &mcp.StreamableHTTPOptions{Stateless: stateless}}
	obj := map[string]any{"type": "object"}
	u.server.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
	})
	u.server.AddTool(&mcp.Tool{Name: "chatty", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		//lint:ignore SA1019 logging is deprecated in 2026-07-28 and still part of 2025-11-25, which this serves
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "chatting"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said it"}}}, nil
	})
	u.restart()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			if b, ok := peek(r); ok && strings.Contains(b, `"method":"initialize"`) {
				u.inits.Add(1)
			}
		}
		(*u.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u.url = ts.URL
	return u
}

// restart replaces the handler: the sessions it held are gone (404).
func (u *revisionUpstream) restart() {
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, u.opts)
	u.handler.Store(&h)
}

// gateway serves the pass-through /wunder/mcp/up in front of u.
func (u *revisionUpstream) gateway(t *testing.T) string {
	t.Helper()
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: u.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	return newEnv(t, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"}).url + "/wunder/mcp/up"
}

// clientAt connects a go-sdk client that asks for version to url.
func clientAt(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s through the pass-through, want %s", got, version)
	}
	return cs
}

func echo(t *testing.T, cs *mcp.ClientSession, arg string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"a": arg}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("echo: %+v", res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// A 2026-07-28 client in front of an upstream that needs a session: the
// gateway holds one, and when the upstream forgets it (a restart: 404) the
// gateway opens another and the client's call goes through, unseen by it.
func TestPassThroughStatelessClientSessionUpstream(t *testing.T) {
	t.Parallel()
	up := newRevisionUpstream(t, false)
	cs := clientAt(t, up.gateway(t), "2026-07-28", nil)
	if got := echo(t, cs, "one"); got != `echo {"a":"one"}` {
		t.Fatalf("first call: %q", got)
	}
	if n := up.inits.Load(); n != 1 {
		t.Fatalf("the upstream saw %d initialize, want the gateway's one", n)
	}
	up.restart()
	if got := echo(t, cs, "two"); got != `echo {"a":"two"}` {
		t.Fatalf("the call after the upstream forgot the session: %q", got)
	}
	if n := up.inits.Load(); n != 2 {
		t.Errorf("the upstream saw %d initialize, want 2: the gateway's session opened anew once", n)
	}
	if got := echo(t, cs, "three"); got != `echo {"a":"three"}` || up.inits.Load() != 2 {
		t.Errorf("the next call: %q after %d initialize; want the new session reused", got, up.inits.Load())
	}
}

// A 2025-11-25 client in front of a stateless (2026-07-28) upstream: its
// session's logging/setLevel and a tool's log messages pass (the suite's
// logging-set-level and tools-call-with-logging; issue 37 saw them
// refused for want of the 2026 _meta).
func TestPassThroughSessionClientStatelessUpstreamLogging(t *testing.T) {
	t.Parallel()
	up := newRevisionUpstream(t, true)
	logged := make(chan any, 8)
	cs := clientAt(t, up.gateway(t), "2025-11-25", &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logged <- req.Params.Data }})
	if cs.ID() == "" {
		t.Fatal("a 2025-11-25 client got no session id from the pass-through")
	}
	//lint:ignore SA1019 logging is part of 2025-11-25, the revision under test
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "chatty"})
	if err != nil || res.IsError {
		t.Fatalf("chatty: %v %+v", err, res)
	}
	// The client hands notifications to its handler on its own goroutine:
	// the message may land after the call's result.
	select {
	case got := <-logged:
		if got != "chatting" {
			t.Errorf("log message %v, want the tool's", got)
		}
	case <-t.Context().Done():
	case <-time.After(10 * time.Second):
		t.Error("the tool's log message never reached the client")
	}
	if n := up.inits.Load(); n != 1 {
		t.Errorf("the upstream saw %d initialize, want the client's own", n)
	}
}

// Each revision's client in front of each kind of upstream calls a tool
// and gets what the upstream answered; a 2026 client holds no session.
func TestPassThroughRevisionPairs(t *testing.T) {
	t.Parallel()
	for _, client := range []string{"2025-11-25", "2026-07-28"} {
		for _, stateless := range []bool{false, true} {
			up := newRevisionUpstream(t, stateless)
			cs := clientAt(t, up.gateway(t), client, nil)
			if got := echo(t, cs, client); got != `echo {"a":"`+client+`"}` {
				t.Errorf("%s client, stateless upstream %v: %q", client, stateless, got)
			}
			if (cs.ID() == "") != (client == "2026-07-28") {
				t.Errorf("%s client, stateless upstream %v: session id %q", client, stateless, cs.ID())
			}
		}
	}
}

// peek reads r's body and puts it back.
func peek(r *http.Request) (string, bool) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b), err == nil
}
