package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// A progress token must be a string or a number; any other JSON value is a
// JSON-RPC invalid-params error, and the session (and wunder) lives on.
func TestPassThroughRejectsMalformedProgressToken(t *testing.T) {
	t.Parallel()
	cs := connect(t, passThroughTo(t, changingUpstream(t)), nil, nil)
	for _, token := range []any{map[string]any{"a": 1}, []any{1, 2}, true} {
		params := &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": token}}
		_, err := cs.CallTool(t.Context(), params)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("progress token %v: %v, want JSON-RPC %d", token, err, jsonrpc.CodeInvalidParams)
		}
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("the session after malformed tokens: %v", err)
	}
}

// An upstream over the SSE transport keeps its event stream for the life of
// the downstream session, not just of its initialize request.
func TestPassThroughSSEUpstream(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "sse", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportSSE, URL: ts.URL}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"})
	t.Cleanup(func() { _ = set.Close() })
	cs := connect(t, e.url+"/wunder/mcp/up", nil, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "still here" {
		t.Fatalf("echo through an SSE upstream: %v %+v", err, res)
	}
}

// A pass-through session initialized after Close is refused: no upstream
// session outlives the Handler.
func TestPassThroughAfterClose(t *testing.T) {
	t.Parallel()
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: changingUpstream(t)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	e := newEnv(t, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"})
	e.h.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "late", Version: "1"}, nil)
	if cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url + "/wunder/mcp/up"}, nil); err == nil {
		_ = cs.Close()
		t.Fatal("initialize after Close succeeded")
	}
}
