package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// The pass-through's rows of the isolation matrix: an MCP server
// configured for everyone ("up", tools read and write), reached at
// /wunder/mcp/up. A pass-through session belongs to the principal who
// opened it; what a caller may call there is their own policy (alice's
// tool access denies up@write).

// passThroughUpstream serves an MCP server whose tools say who called.
func passThroughUpstream(t *testing.T) config.MCPServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	for _, name := range []string{"read", "write"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ran"}}}, nil
		})
	}
	// Two MCP App pages (isolation_mcpapps_test.go): allow_resources
	// offers app.html and leaves out hidden.html.
	for _, name := range []string{"app", "hidden"} {
		s.AddResource(&mcp.Resource{URI: "ui://" + name + ".html", Name: name, MIMEType: "text/html;profile=mcp-app"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/html;profile=mcp-app", Text: "<p>" + name + "</p>"}}}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return config.MCPServer{Name: "up", Transport: config.MCPStreamableHTTP, URL: ts.URL, Enabled: true, AllowResources: []string{"ui://app.html"}}
}

// passClient opens a pass-through session to up as the caller's
// credential (the API key goes as a bearer token, as MCP clients send it).
func (f *fixture) passClient(t *testing.T, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	return f.sessionClient(t, "/wunder/mcp/up", hdr)
}

// sessionClient opens an MCP session at path (on the first replica) as
// the caller's credential.
func (f *fixture) sessionClient(t *testing.T, path string, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	h := clone(hdr)
	if k, isKey := h["X-API-Key"]; isKey {
		delete(h, "X-API-Key")
		h["Authorization"] = "Bearer " + k
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, nil)
	// At 2025-11-25, the newest revision with sessions (a go-sdk client
	// asks for 2026-07-28, which has none).
	cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.s.url + path, HTTPClient: &http.Client{Transport: headerRT{hdr: h}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("pass-through connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// useOn is the outcome of the caller's tools/list in session cs at path
// on server s: denied when the session is not theirs (403, 404).
func useOn(t *testing.T, s *server, path string, cs *mcp.ClientSession, c caller) string {
	h := clone(c.hdr)
	if k, isKey := h["X-API-Key"]; isKey {
		delete(h, "X-API-Key")
		h["Authorization"] = "Bearer " + k
	}
	h["Mcp-Session-Id"] = cs.ID()
	h["Mcp-Protocol-Version"] = cs.InitializeResult().ProtocolVersion
	h["Accept"] = "application/json, text/event-stream"
	r := s.rest(t, "POST", path, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, h)
	if r.StatusCode == http.StatusForbidden || r.StatusCode == http.StatusNotFound {
		r.Body.Close()
		return denied
	}
	return restOutcome(r)
}

func (f *fixture) passThroughRows(t *testing.T) []matrixRow {
	session := f.passClient(t, bearerOf(f.alice)) // alice's session, which the others try to use
	// Alice's sessions opened on the first replica, which the others try
	// to use on the second (on PostgreSQL; the same server on SQLite).
	mcpSession := f.sessionClient(t, "/wunder/mcp", bearerOf(f.alice))
	across := func(path string, cs *mcp.ClientSession) func(t *testing.T, c caller) string {
		return func(t *testing.T, c caller) string {
			if c.names != "" && c.hdr["X-API-Key"] == "" {
				return na // MCP has no way to name another user
			}
			return useOn(t, f.replica, path, cs, c)
		}
	}
	call := func(cs *mcp.ClientSession, tool string) string {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		switch {
		case err != nil && strings.Contains(err.Error(), "permission denied"):
			return denied
		case err != nil:
			return "error: " + err.Error()
		case res.IsError:
			return "tool error"
		}
		return ok
	}
	return []matrixRow{
		{frontend: "MCP pass-through", resource: "session (alice's)", action: "call a tool in it", want: [4]string{ok, denied, na, denied},
			try: func(t *testing.T, c caller) string {
				if c.names != "" && c.hdr["X-API-Key"] == "" {
					return na // MCP has no way to name another user
				}
				if c.name == "alice" {
					return call(session, "read")
				}
				h := clone(c.hdr)
				if k, isKey := h["X-API-Key"]; isKey {
					delete(h, "X-API-Key")
					h["Authorization"] = "Bearer " + k
				}
				h["Mcp-Session-Id"] = session.ID()
				h["Mcp-Protocol-Version"] = session.InitializeResult().ProtocolVersion
				h["Accept"] = "application/json, text/event-stream"
				r := f.rest(t, "POST", "/wunder/mcp/up", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{}}}`, h)
				if r.StatusCode == http.StatusForbidden || r.StatusCode == http.StatusNotFound {
					r.Body.Close()
					return denied // the session is not theirs
				}
				return restOutcome(r)
			}},
		{frontend: "MCP pass-through", resource: "session (alice's, opened on another replica)", action: "list tools in it on this one", want: [4]string{ok, denied, na, denied},
			try: across("/wunder/mcp/up", session)},
		{frontend: "MCP /wunder/mcp", resource: "session (alice's, opened on another replica)", action: "list tools in it on this one", want: [4]string{ok, denied, na, denied},
			try: across("/wunder/mcp", mcpSession)},
		{frontend: "MCP pass-through", resource: "tool up@write (alice's tool access denies it)", action: "call in one's own session", want: [4]string{denied, ok, na, ok},
			try: func(t *testing.T, c caller) string {
				if c.names != "" && c.hdr["X-API-Key"] == "" {
					return na
				}
				return call(f.passClient(t, c.hdr), "write")
			}},
	}
}
