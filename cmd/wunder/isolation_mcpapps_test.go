package main

import (
	"net/url"
	"testing"
)

// The MCP Apps rows of the isolation matrix: GET /wunder/mcp-apps/resource
// reads a page of the MCP server "up", configured for everyone
// (isolation_passthrough_test.go). A page belongs to no user: whoever
// calls reads it as themselves, under the server's allow_resources, and
// only an admin may name another user. allow_resources offers app.html
// and leaves out hidden.html, for every caller alike; a page's tool calls
// (POST /wunder/mcp-apps/call) follow the page.
func (f *fixture) mcpAppRows() []matrixRow {
	row := func(page, note string, want [4]string) matrixRow {
		return matrixRow{frontend: "REST", resource: "MCP App page ui://up/" + page + note, action: "read", want: want,
			try: func(t *testing.T, c caller) string {
				p := "/wunder/mcp-apps/resource?uri=" + url.QueryEscape("ui://up/"+page)
				if c.names != "" {
					p += "&user_id=" + c.names
				}
				return restOutcome(f.rest(t, "GET", p, "", c.hdr))
			}}
	}
	// POST /wunder/mcp-apps/call: the page's tools/call, as the caller,
	// under the same rule of the page, then the policy of the tool.
	call := func(page, note string, want [4]string) matrixRow {
		return matrixRow{frontend: "REST", resource: "MCP App tool call up@read from ui://up/" + page + note, action: "call", want: want,
			try: func(t *testing.T, c caller) string {
				p := "/wunder/mcp-apps/call"
				if c.names != "" {
					p += "?user_id=" + c.names
				}
				return restOutcome(f.rest(t, "POST", p, `{"uri":"ui://up/`+page+`","name":"read","arguments":{}}`, c.hdr))
			}}
	}
	return []matrixRow{
		row("app.html", "", [4]string{ok, ok, forbidden, ok}),
		row("hidden.html", " (allow_resources leaves it out)", [4]string{forbidden, forbidden, forbidden, forbidden}),
		call("app.html", "", [4]string{ok, ok, forbidden, ok}),
		call("hidden.html", " (allow_resources leaves it out)", [4]string{forbidden, forbidden, forbidden, forbidden}),
	}
}
