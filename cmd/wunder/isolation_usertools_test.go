package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// userToolsRows sets up alice's own tool configuration — her MCP server
// (alice@srv@echo shared, alice@srv@secret kept) and her extra prompt —
// and returns the isolation matrix's rows about it. The server config
// must allow users' servers on loopback (user_tools.allow_private_urls).
func userToolsRows(t *testing.T, f *fixture) []matrixRow {
	t.Helper()
	url := userMCPServer(t)
	alice := bearerOf(f.alice)
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/mcp", `{"servers":[`+aliceServer(url, "echo")+`]}`, alice), 200)
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"`+alicePrompt+`"}`, alice), 200)

	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	// A read is ok when what it returns is alice's (marker in the body).
	read := func(resource, method, path, body, marker string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: "read", want: std,
			try: func(t *testing.T, c caller) string {
				p, b := path, body
				if c.names != "" {
					if method == "GET" {
						p += "?user_id=" + c.names
					} else {
						b = `{"user_id":"` + c.names + `",` + strings.TrimPrefix(b, "{")
					}
				}
				return markerOutcome(f.rest(t, method, p, b, c.hdr), marker)
			}})
	}
	read("user tools: MCP servers", "GET", "/wunder/user_tools/mcp", "", url)
	read("user tools: extra prompt", "GET", "/wunder/user_tools/extra_prompt", "", "ALICE-ONLY")
	read("user tools: own tools (alice@srv@secret)", "GET", "/wunder/user_tools/tools", "", "alice@srv@secret")
	read("extra prompt in the system prompt", "POST", "/wunder/system_prompt", `{"tool_names":["alice@srv@echo"]}`, "ALICE-ONLY")
	// Selecting her unshared tool in a run: bob's catalog has no such tool.
	rows = append(rows, matrixRow{frontend: "REST", resource: "user tool alice@srv@secret", action: "select in a run", want: std,
		try: func(t *testing.T, c caller) string {
			body := `{"question":"hello","tool_names":["alice@srv@secret"],"stream":false}`
			if c.names != "" {
				body = `{"user_id":"` + c.names + `",` + strings.TrimPrefix(body, "{")
			}
			r := f.rest(t, "POST", "/wunder", body, c.hdr)
			if r.StatusCode == http.StatusBadRequest {
				if b, _ := io.ReadAll(r.Body); strings.Contains(string(b), "tool_not_found") {
					return denied
				}
			}
			return restOutcome(r)
		}})
	// MCP's aggregated catalog: the token says who one is; the API key
	// acts as mcp.server.user_id, to whom alice's shared tool is offered
	// like to anyone.
	mcpRow := func(resource, tool string, want [4]string) {
		rows = append(rows, matrixRow{frontend: "MCP", resource: resource, action: "call (catalog)", want: want,
			try: func(t *testing.T, c caller) string {
				if c.names != "" && c.hdr["X-API-Key"] == "" {
					return na
				}
				return f.mcpCall(t, c, tool, map[string]any{"text": "x"})
			}})
	}
	mcpRow("shared tool alice@srv@echo", "alice__srv__echo", [4]string{ok, ok, na, ok})
	mcpRow("user tool alice@srv@secret", "alice__srv__secret", [4]string{ok, denied, na, denied})
	// Writes: ok only when they act on alice's configuration (the answer
	// names the user acted for); bob's own write touches only his.
	write := func(resource, path, body string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: "replace", want: std,
			try: func(t *testing.T, c caller) string {
				b := body
				if c.names != "" {
					b = `{"user_id":"` + c.names + `",` + strings.TrimPrefix(b, "{")
				}
				r := f.rest(t, "POST", path, b, c.hdr)
				if r.StatusCode != http.StatusOK {
					return restOutcome(r)
				}
				var got struct {
					UserID string `json:"user_id"`
				}
				_ = json.NewDecoder(r.Body).Decode(&got)
				if got.UserID == "alice" {
					return ok
				}
				return denied
			}})
	}
	write("user tools: MCP servers", "/wunder/user_tools/mcp", `{"servers":[`+aliceServer(url, "echo")+`]}`)
	write("user tools: extra prompt", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"`+alicePrompt+`"}`)
	return rows
}

// markerOutcome: found (200 with alice's marker) is ok; a 200 without it
// (the caller's own) denied.
func markerOutcome(r *http.Response, marker string) string {
	if r.StatusCode != http.StatusOK {
		return restOutcome(r)
	}
	b, _ := io.ReadAll(r.Body)
	if strings.Contains(string(b), marker) {
		return ok
	}
	return denied
}
