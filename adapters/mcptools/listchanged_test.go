package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
)

// savingCache hands every saved spec list to a channel.
type savingCache struct {
	memCache
	saved chan string
}

func (c *savingCache) SaveMCPToolSpecs(ctx context.Context, server string, tools json.RawMessage) error {
	c.saved <- string(tools)
	return c.memCache.SaveMCPToolSpecs(ctx, server, tools)
}

// A server's notifications/tools/list_changed refreshes its tools: calling
// g@grow adds a tool upstream, and g@grown appears in the catalog without
// an admin refresh.
func TestToolsListChangedRefreshes(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "growing", Version: "1"}, nil)
	empty := map[string]any{"type": "object"}
	srv.AddTool(&mcp.Tool{Name: "grow", Description: "adds a tool", InputSchema: empty},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv.AddTool(&mcp.Tool{Name: "grown", Description: "new", InputSchema: empty},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grew"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	cache := &savingCache{memCache: memCache{m: map[string]json.RawMessage{}}, saved: make(chan string, 8)}
	s, err := mcptools.New([]mcptools.ServerConfig{{Name: "g", Transport: mcptools.TransportStreamableHTTP, URL: ts.URL}}, &mcptools.Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	refreshAll(t, s)
	if first := <-cache.saved; strings.Contains(first, "grown") {
		t.Fatalf("first listing already has grown: %s", first)
	}
	if res := call(t, toolByName(t, s, "g@grow"), `{}`, nil); res.IsError {
		t.Fatalf("g@grow: %+v", res)
	}
	// The refresh runs in the background; the test's deadline bounds it.
	for saved := range cache.saved {
		if strings.Contains(saved, "grown") {
			break
		}
	}
	if res := call(t, toolByName(t, s, "g@grown"), `{}`, nil); res.IsError || res.Content != "grown" {
		t.Fatalf("g@grown: %+v", res)
	}
}
