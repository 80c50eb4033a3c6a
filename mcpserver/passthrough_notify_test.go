package mcpserver_test

//lint:file-ignore SA1019 tests that the pass-through forwards MCP logging, sampling and roots (docs/mcp.md). SEP-2577 deprecates them from protocol 2026-07-28 with no replacement; peers on earlier versions still use them.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// changingUpstream is an in-process go-sdk server whose tool "change" adds a
// tool, a prompt and a resource (each change notifies its sessions), whose
// tool "roots" asks the client for its roots, and whose tool "steps" sends
// two progress notifications; served over streamable HTTP.
func changingUpstream(t *testing.T) string {
	t.Helper()
	return changingUpstreamOver(t, mcptools.TransportStreamableHTTP)
}

// changingUpstreamOver serves changingUpstream's server over transport
// (streamable HTTP or SSE).
func changingUpstreamOver(t *testing.T, transport string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
	})
	empty := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "change", Description: "changes the lists", InputSchema: empty},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "added", Description: "new", InputSchema: empty},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			s.AddPrompt(&mcp.Prompt{Name: "added"},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{}, nil
				})
			s.AddResource(&mcp.Resource{Name: "added", URI: "test://added"},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "changed"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "roots", Description: "lists the client's roots", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			var uris string
			for _, r := range res.Roots {
				uris += r.URI + " "
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: uris}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "steps", Description: "reports progress", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 2 {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if transport == mcptools.TransportSSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// links are the upstream transports the pass-through reaches in the two
// ways it has: bytes over HTTP, and a connection's messages (SSE, as stdio).
var links = []string{mcptools.TransportStreamableHTTP, mcptools.TransportSSE}

func passThroughTo(t *testing.T, url string) string {
	t.Helper()
	return passThroughOver(t, mcptools.TransportStreamableHTTP, url)
}

func passThroughOver(t *testing.T, transport, url string) string {
	t.Helper()
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: transport, URL: url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"})
	t.Cleanup(func() { _ = set.Close() })
	return e.url + "/wunder/mcp/up"
}

// The upstream's list_changed notifications reach the client, over
// either link.
func TestPassThroughForwardsListChanged(t *testing.T) {
	t.Parallel()
	for _, transport := range links {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testForwardsListChanged(t, passThroughOver(t, transport, changingUpstreamOver(t, transport)))
		})
	}
}

func testForwardsListChanged(t *testing.T, url string) {
	got := make(chan string, 8)
	cs := connectSession(t, url, nil, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { got <- "tools" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { got <- "prompts" },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { got <- "resources" },
	})
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "change", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("change: %v %+v", err, res)
	}
	// The test's deadline bounds the wait for the three notifications.
	kinds := []string{<-got, <-got, <-got}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{"prompts", "resources", "tools"}) {
		t.Fatalf("notifications = %q", kinds)
	}
	// The lists the client now fetches are the upstream's.
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"added", "change", "roots", "steps"}) {
		t.Errorf("tools after the change = %q", names)
	}
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "added" {
		t.Errorf("prompts after the change: %v %+v", err, prompts)
	}
}

// The upstream's roots/list, asked during a call, is answered by the
// client, and a call's progress reaches the call; over either link.
func TestPassThroughForwardsRootsAndProgress(t *testing.T) {
	t.Parallel()
	for _, transport := range links {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testForwardsRootsAndProgress(t, passThroughOver(t, transport, changingUpstreamOver(t, transport)))
		})
	}
}

func testForwardsRootsAndProgress(t *testing.T, url string) {
	progress := make(chan float64, 4)
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, &mcp.ClientOptions{ // default capabilities: roots
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Progress },
	})
	c.AddRoots(&mcp.Root{URI: "file:///work/a", Name: "a"}, &mcp.Root{URI: "file:///work/b", Name: "b"})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("roots: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "file:///work/a file:///work/b " {
		t.Errorf("upstream saw roots %q", text)
	}
	params := &mcp.CallToolParams{Name: "steps", Arguments: map[string]any{}}
	params.SetProgressToken(7)
	if res, err := cs.CallTool(t.Context(), params); err != nil || res.IsError {
		t.Fatalf("steps: %v %+v", err, res)
	}
	// The test's deadline bounds the wait.
	if got := []float64{<-progress, <-progress}; got[0] != 1 || got[1] != 2 {
		t.Errorf("progress = %v, want [1 2]", got)
	}
}
