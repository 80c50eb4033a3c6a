package main

import "testing"

// monitorRows are the isolation matrix's rows of the monitor, and of the
// other admin-only reads without a user of their own (the server's skills):
// admin only, whatever user a caller names (the monitor sees every user's
// runs).
func (f *fixture) monitorRows() []matrixRow {
	adminOnly := [4]string{forbidden, forbidden, forbidden, ok}
	row := func(resource, action, method, path string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: action, want: adminOnly,
			try: func(t *testing.T, c caller) string {
				p := path
				if c.names != "" {
					p += sep(p) + "user_id=" + c.names
				}
				return restOutcome(f.rest(t, method, p, "", c.hdr))
			}}
	}
	return []matrixRow{
		row("monitor: runs", "list", "GET", "/wunder/admin/monitor"),
		row("monitor: tool usage", "list", "GET", "/wunder/admin/monitor/tool_usage"),
		row("monitor: system", "get", "GET", "/wunder/admin/monitor/system"),
		row("performance (sampled load)", "get", "GET", "/wunder/admin/performance"),
		row("monitor: session", "get", "GET", "/wunder/admin/monitor/"+f.sessA),
		row("monitor: session", "cancel", "POST", "/wunder/admin/monitor/"+f.sessA+"/cancel"),
		row("users seen", "list", "GET", "/wunder/admin/users"),
		row("users seen: sessions", "list", "GET", "/wunder/admin/users/alice/sessions"),
		row("Go profiler (observability.pprof)", "get", "GET", "/debug/pprof/cmdline"),
		row("Prometheus metrics", "get", "GET", "/metrics"),
		row("skills (server-wide, admin)", "list", "GET", "/wunder/admin/skills"),
		row("audit: tool call decisions", "list", "GET", "/wunder/admin/audit"),
		row("usage per user", "list", "GET", "/wunder/admin/usage"),
	}
}
