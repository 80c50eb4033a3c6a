package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The wired server: /wunder/mcp behind the API key (MCP's own 401 with
// protected-resource metadata), wunder__run on the fake model, and the
// admin refresh of an upstream that is down.
func TestMCPWired(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Servers = []config.MCPServer{{Name: "down", Transport: config.MCPStreamableHTTP, URL: "http://127.0.0.1:1/mcp", Enabled: true}}
	})
	resp, err := http.Post(s.url+"/wunder/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no key: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	meta, err := http.Get(s.url + "/.well-known/oauth-protected-resource/wunder/mcp")
	if err != nil {
		t.Fatal(err)
	}
	meta.Body.Close()
	if meta.StatusCode != 200 {
		t.Fatalf("metadata: %d", meta.StatusCode)
	}

	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: bearerRT("k")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "say hello"}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"answer":"echo: say hello"`) {
		t.Errorf("answer: %s", text)
	}

	req, _ := http.NewRequest("POST", s.url+"/wunder/admin/mcp/down/refresh", nil)
	req.Header.Set("X-API-Key", "k")
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 503 {
		t.Errorf("refresh of a down server: %d %s, want 503", r2.StatusCode, body)
	}
	// An unknown pass-through path is the gateway's 404.
	r3, err := http.Post(s.url+"/wunder/mcp/nope", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r3.Body.Close()
	if r3.StatusCode != 401 && r3.StatusCode != 404 {
		t.Errorf("/wunder/mcp/nope: %d", r3.StatusCode)
	}
}
