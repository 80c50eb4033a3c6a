package main

import (
	"maps"
	"testing"
)

// configRows are the isolation matrix's rows of the configuration admin
// API: admin only. The admin's POST names a revision that cannot be
// current, so it is refused with 409 (counted as reaching the resource)
// and changes nothing; anyone else gets 403 before the revision is read.
func (f *fixture) configRows() []matrixRow {
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	row := func(resource, action, method, path, body string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string {
				hdr := maps.Clone(c.hdr)
				if hdr == nil {
					hdr = map[string]string{}
				}
				if method == "POST" {
					hdr["If-Match"] = "999999"
				}
				return restOutcome(f.rest(t, method, path, body, hdr))
			}}
	}
	var rows []matrixRow
	// The languages on offer: public, the same for everyone (a login page
	// asks it), naming no user.
	rows = append(rows, matrixRow{frontend: "REST", resource: "languages (/wunder/i18n)", action: "get", want: [4]string{ok, ok, ok, ok},
		try: func(t *testing.T, c caller) string {
			return restOutcome(f.rest(t, "GET", "/wunder/i18n", "", c.hdr))
		}})
	for _, sec := range []struct{ name, body string }{
		{"llm", `{"llm":{}}`}, {"mcp", `{"servers":[]}`}, {"a2a", `{"services":[]}`}, {"tools", `{"builtin":{"enabled":[]}}`},
		{"server", `{"sse_heartbeat_s":15}`},
		{"lsp", `{"lsp":{"enabled":false}}`},
	} {
		rows = append(rows,
			row("configuration: "+sec.name, "get", "GET", "/wunder/admin/"+sec.name, ""),
			row("configuration: "+sec.name, "change", "POST", "/wunder/admin/"+sec.name, sec.body))
	}
	// Trying servers and peers: admin only. The admin's tries reach real
	// things: this server's own MCP endpoint and agent card; the call names
	// a server that is not configured (404).
	probe := func(resource, path string, body func() string, admin string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: "try", want: [4]string{forbidden, forbidden, forbidden, admin},
			try: func(t *testing.T, c caller) string {
				return restOutcome(f.rest(t, "POST", path, body(), c.hdr))
			}}
	}
	rows = append(rows,
		probe("configuration: MCP tool list", "/wunder/admin/mcp/tools", func() string {
			return `{"server":{"name":"self","transport":"streamable-http","url":"` + f.s.url + `/wunder/mcp","bearer_token":"admin-key"}}`
		}, ok),
		probe("configuration: MCP tool call", "/wunder/admin/mcp/tools/call", func() string {
			return `{"server":"nosuch","tool":"t","arguments":{}}`
		}, denied),
		probe("configuration: A2A peer card", "/wunder/admin/a2a/card", func() string {
			return `{"endpoint":"` + f.s.url + `"}`
		}, ok),
		// The fixture runs without language servers: the admin's probe is
		// refused as unavailable, anyone else's as forbidden.
		probe("configuration: LSP probe", "/wunder/admin/lsp/test", func() string {
			return `{"server":"gopls"}`
		}, "HTTP 503"),
		// Probing a model's window asks its provider and records nothing.
		probe("configuration: model context window", "/wunder/admin/llm/context_window", func() string {
			return `{"model_name":"fake"}`
		}, ok),
		// Testing a model makes one chat call and records nothing.
		probe("configuration: model connection test", "/wunder/admin/llm/test", func() string {
			return `{"model_name":"fake"}`
		}, ok),
	)
	return rows
}
