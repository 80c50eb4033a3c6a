package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty" jsonschema:"how often"`
}

// suiteServer is an in-process go-sdk server with a typed tool (whose
// arguments the SDK validates) and an untyped one.
func suiteServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "suite", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "greets someone"},
		func(_ context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + a.Name}}}, nil, nil
		})
	srv.AddTool(&mcp.Tool{Name: "ping", Description: "answers pong", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestToolsetContract runs the shared toolset suite on server@tool tools
// of an in-process go-sdk server over streamable HTTP.
func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		s := newSet(t, 0, mcptools.ServerConfig{Name: "suite", Transport: mcptools.TransportStreamableHTTP, URL: suiteServer(t)})
		refreshAll(t, s)
		return s
	}, orchestratortest.WithMinTools(2))
}
