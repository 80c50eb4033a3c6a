package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
)

// slowMCP is a streamable-HTTP MCP server with an echo tool whose
// tools/list answers only once gate is closed.
func slowMCP(t *testing.T, gate <-chan struct{}) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func readyz(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// /readyz answers 503 until the first discovery of every MCP server has
// finished, and a run naming a tool of a server still being discovered
// waits for it rather than failing with tool_not_found.
func TestReadyzWaitsForMCPDiscovery(t *testing.T) {
	gate := make(chan struct{})
	url := slowMCP(t, gate)
	s := startServer(t, func(c *config.Config) {
		c.MCP.Servers = []config.MCPServer{{Name: "slow", Transport: config.MCPStreamableHTTP, URL: url, Enabled: true}}
	})
	if code := readyz(t, s.url); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while tools/list is held: %d, want 503", code)
	}
	c := client.New(s.url, "", nil)
	started := make(chan error, 1)
	var run *client.Run
	go func() {
		var err error
		run, err = c.Submit(t.Context(), client.RunRequest{UserID: "ready", Question: "say hi", ToolNames: []string{"slow@echo"}})
		started <- err
	}()
	// The listing cannot finish before the gate opens: a run that did not
	// wait for it could only have failed.
	close(gate)
	if err := <-started; err != nil {
		t.Fatalf("run naming slow@echo during discovery: %v", err)
	}
	var evs []client.Event
	for ev, err := range c.Follow(t.Context(), "ready", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if final := finalOf(t, evs); final.State != "finished" {
		t.Errorf("final = %+v, want finished", final)
	}
	if code := readyz(t, s.url); code != http.StatusOK {
		t.Errorf("/readyz after the discovery: %d, want 200", code)
	}
}
