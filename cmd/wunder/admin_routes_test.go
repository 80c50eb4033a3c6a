package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// adminRoutes are every admin route of the gateway, path parameters
// filled in. TestAdminRoutesDecideFirst checks that the gateway's source
// has no literal admin route missing from it.
var adminRoutes = func() []string {
	routes := []string{
		"POST /wunder/admin/llm/context_window", "POST /wunder/admin/llm/test", "POST /wunder/admin/mcp/tools", "POST /wunder/admin/mcp/tools/call",
		"POST /wunder/admin/a2a/card", "POST /wunder/admin/lsp/test", "POST /wunder/admin/mcp/x/refresh",
		"GET /wunder/admin/user_accounts", "POST /wunder/admin/user_accounts", "PATCH /wunder/admin/user_accounts/x",
		"DELETE /wunder/admin/user_accounts/x", "POST /wunder/admin/user_accounts/x/password",
		"GET /wunder/admin/user_accounts/x/tool_access", "PUT /wunder/admin/user_accounts/x/tool_access",
		"POST /wunder/admin/evaluation/start", "POST /wunder/admin/evaluation/x/cancel", "GET /wunder/admin/evaluation/runs",
		"GET /wunder/admin/evaluation/cases", "GET /wunder/admin/evaluation/stream/x", "GET /wunder/admin/evaluation/x",
		"DELETE /wunder/admin/evaluation/x",
		"GET /wunder/admin/knowledge", "POST /wunder/admin/knowledge", "GET /wunder/admin/knowledge/files",
		"GET /wunder/admin/knowledge/file", "PUT /wunder/admin/knowledge/file", "DELETE /wunder/admin/knowledge/file",
		"POST /wunder/admin/knowledge/upload", "POST /wunder/admin/knowledge/refresh",
		"GET /wunder/admin/memory/users", "GET /wunder/admin/memory/status", "GET /wunder/admin/memory/status/x",
		"GET /wunder/admin/memory/x", "DELETE /wunder/admin/memory/x", "POST /wunder/admin/memory/x/enabled",
		"PUT /wunder/admin/memory/x/y", "DELETE /wunder/admin/memory/x/y",
		"GET /wunder/admin/monitor", "GET /wunder/admin/monitor/tool_usage", "GET /wunder/admin/monitor/system", "GET /wunder/admin/performance",
		"GET /wunder/admin/audit", "GET /wunder/admin/usage",
		"GET /wunder/admin/monitor/x", "DELETE /wunder/admin/monitor/x", "POST /wunder/admin/monitor/x/cancel",
		"GET /wunder/admin/users", "GET /wunder/admin/users/x/sessions", "DELETE /wunder/admin/users/x",
		"GET /wunder/admin/skills", "POST /wunder/admin/skills", "DELETE /wunder/admin/skills",
		"POST /wunder/admin/skills/upload", "GET /wunder/admin/skills/content",
		"POST /wunder/admin/throughput/start", "POST /wunder/admin/throughput/stop", "GET /wunder/admin/throughput/status",
		"GET /wunder/admin/throughput/report",
		"GET /debug/pprof/", "GET /debug/pprof/cmdline", "GET /debug/pprof/symbol", "GET /debug/pprof/profile", "GET /debug/pprof/trace",
	}
	for _, sec := range []string{"llm", "mcp", "a2a", "tools", "server", "lsp"} { // gateway's configSections
		routes = append(routes, "GET /wunder/admin/"+sec, "POST /wunder/admin/"+sec)
	}
	return routes
}()

// Every admin route decides who may call it before it reads the body
// (issue 35): a user's request whose body no route takes — not JSON, not
// a form — is refused with 403, never 400 or 415 about the body, on the
// real wired server.
func TestAdminRoutesDecideFirst(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Observability.PProf = true
	})
	mustStatus(t, s.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"bob","password":"bob-password"}`,
		map[string]string{"X-API-Key": "admin-key"}), 201)
	f := &fixture{s: s}
	bob := bearerOf(f.login(t, "bob"))
	bob["Content-Type"] = "text/plain"
	for _, route := range adminRoutes {
		method, path, _ := strings.Cut(route, " ")
		r := s.rest(t, method, path, "{not json", bob)
		if r.StatusCode != 403 {
			b, _ := io.ReadAll(r.Body)
			t.Errorf("%s as a user with a body no route takes: %d %s; want 403", route, r.StatusCode, b)
		}
	}

	// The list is complete: every literal admin route of the gateway's
	// source is in it.
	files, err := filepath.Glob("../../gateway/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("gateway sources: %v", err)
	}
	literal := regexp.MustCompile(`"((?:GET|POST|PUT|PATCH|DELETE) /(?:wunder/admin|debug/pprof)/[^"]*)"`)
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	known := map[string]bool{}
	for _, r := range adminRoutes {
		known[r] = true
	}
	found := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range literal.FindAllStringSubmatch(string(src), -1) {
			route := m[1]
			if strings.HasSuffix(route, "/") && !strings.HasPrefix(route, "GET /debug/") {
				continue // a prefix the code completes (the configuration sections)
			}
			found++
			n := 0
			route = param.ReplaceAllStringFunc(route, func(string) string { n++; return []string{"x", "y"}[min(n-1, 1)] })
			if !known[route] {
				t.Errorf("%s (%s) is not in adminRoutes", m[1], filepath.Base(name))
			}
		}
	}
	if found < 40 {
		t.Fatalf("only %d literal admin routes found in the gateway's source; the scan is broken", found)
	}
}
