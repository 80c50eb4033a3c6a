package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// startUpstream serves an in-process go-sdk MCP server with one tool, echo,
// over streamable HTTP.
func startUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	type in struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "upstream says " + a.Text}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// refreshMCP lists an upstream's tools now. The start-up refresh runs in
// the background (building a catalog never waits for a server), so tests
// that need the upstream's tools at once use the synchronous admin refresh.
func refreshMCP(t *testing.T, base, name, apiKey string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/wunder/admin/mcp/"+name+"/refresh", nil)
	if apiKey != "" {
		req.Header.Set("X-API-Key", apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("refresh of %s: %d", name, resp.StatusCode)
	}
}

// The aggregated endpoint, wired from config: with mcp.server.expose_catalog
// an IDE lists the catalog (the upstream's up__echo and the built-ins next to
// wunder__run) and calls up__echo directly through /wunder/mcp.
func TestMCPWiredAggregatedCatalog(t *testing.T) {
	up := startUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Server.ExposeCatalog = true
		c.MCP.Servers = []config.MCPServer{{Name: "up", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true}}
	})
	refreshMCP(t, s.url, "up", "k")
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: bearerRT("k")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if strings.Contains(tool.Name, "@") {
			t.Errorf("%s is not in wire form", tool.Name)
		}
		names = append(names, tool.Name)
	}
	t.Logf("tools: %q", names)
	for _, want := range []string{"wunder__run", "up__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %q lack %s", names, want)
		}
	}
	if len(names) < 3 || slices.Contains(names, "final_response") {
		t.Errorf("tools %q: want the built-ins too, and no final_response", names)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError {
		t.Fatalf("up__echo: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "upstream says hi" {
		t.Errorf("up__echo = %q", text)
	}
}

// Without expose_catalog, /wunder/mcp offers wunder__run and
// wunder__approve alone.
func TestMCPWiredCatalogOffByDefault(t *testing.T) {
	s := startServer(t, nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"wunder__approve", "wunder__run"}) {
		t.Errorf("tools = %q, want wunder__approve and wunder__run alone", names)
	}
}

// A run calls an upstream MCP server configured through config: the fake
// model follows "call up__echo {...}", wunder's MCP client calls the
// in-process go-sdk server, and the answer is the tool's result.
func TestMCPWiredRunCallsUpstreamTool(t *testing.T) {
	up := startUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.MCP.Servers = []config.MCPServer{{Name: "up", Transport: config.MCPStreamableHTTP, URL: up, Enabled: true}}
	})
	refreshMCP(t, s.url, "up", "")
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{
		"task": `call up__echo {"text":"from a run"}`, "tool_names": []string{"up@echo"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"answer":"upstream says from a run"`) {
		t.Errorf("answer: %s", text)
	}
}
