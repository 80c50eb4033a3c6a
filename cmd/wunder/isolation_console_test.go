package main

import "testing"

// consoleRows are the isolation matrix's rows of the web console's routes
// and of the health probes: the console's static files, GET
// /wunder/auth/config and the probes are open (they reveal only the build,
// whether a login is needed and whether the server is up), and GET
// /wunder/models lists model names to any authenticated caller; none holds
// a user's data.
func (f *fixture) consoleRows() []matrixRow {
	open := [4]string{ok, ok, ok, ok}
	row := func(resource, path string) matrixRow {
		return matrixRow{frontend: "REST", resource: resource, action: "get", want: open,
			try: func(t *testing.T, c caller) string {
				p := path
				if c.names != "" {
					p += sep(p) + "user_id=" + c.names
				}
				// Without any credential too: an open route answers alike.
				if out := restOutcome(f.rest(t, "GET", p, "", nil)); path != "/wunder/models" && out != ok {
					return "anonymous: " + out
				}
				return restOutcome(f.rest(t, "GET", p, "", c.hdr))
			}}
	}
	return []matrixRow{
		row("web console (open)", "/wunder/web/"),
		row("auth config (open)", "/wunder/auth/config"),
		row("model names", "/wunder/models"),
		row("liveness probe (open)", "/healthz"),
		row("readiness probe (open)", "/readyz"),
	}
}
