package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// The configuration admin routes (GET|POST /wunder/admin/{llm,mcp,a2a,
// tools,server,lsp}, POST /wunder/admin/llm/context_window) and the probe
// routes (POST /wunder/admin/mcp/tools[/call], /wunder/admin/a2a/card)
// through the real gateway server, in front of configBook: an in-memory
// ConfigAdmin (cmd/wunder's configAdmin in production) that keeps each
// section with one revision, refuses a stale If-Match as the override
// does, and validates one rule per section so that a refusal's fields can
// be seen.

type configBook struct {
	mu       sync.Mutex
	docs     map[string]map[string]any
	revision int64
	calls    int
	// ifMatch is what the last update was given.
	ifMatch *int64
	// probed records the probe calls: "kind name arguments".
	probed []string
}

func newConfigBook() *configBook {
	return &configBook{docs: map[string]map[string]any{
		"llm":    {"llm": map[string]any{"default": "fake", "models": map[string]any{"fake": map[string]any{"api_key": "****"}}}},
		"mcp":    {"servers": []any{}},
		"a2a":    {"services": []any{}},
		"tools":  {"builtin": map[string]any{"enabled": []any{"read_file"}}},
		"server": {"max_body_bytes": 1048576},
		"lsp":    {"lsp": map[string]any{"enabled": false}},
	}, revision: 3}
}

func (b *configBook) ConfigSection(_ context.Context, section string) (map[string]any, int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	doc, ok := b.docs[section]
	if !ok {
		return nil, 0, fmt.Errorf("%w: section %q", orchestrator.ErrNotFound, section)
	}
	out := map[string]any{}
	for k, v := range doc {
		out[k] = v
	}
	return out, b.revision, nil
}

func (b *configBook) UpdateConfigSection(_ context.Context, section string, doc map[string]any, ifMatch *int64) (map[string]any, int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.ifMatch = ifMatch
	if ifMatch != nil && *ifMatch != b.revision {
		return nil, 0, fmt.Errorf("%w: revision %d is stale, the configuration is at %d", orchestrator.ErrConflict, *ifMatch, b.revision)
	}
	if n, ok := doc["max_body_bytes"].(float64); section == "server" && ok && n < 1024 {
		return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{
			{Key: "server.max_body_bytes", Message: "must be at least 1024"},
		}}
	}
	b.docs[section] = doc
	b.revision++
	return doc, b.revision, nil
}

func (b *configBook) ContextWindow(_ context.Context, model string, maxContext *int) (gateway.ContextWindowResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if model != "fake" {
		return gateway.ContextWindowResult{}, fmt.Errorf("%w: no model %q in llm.models", orchestrator.ErrNotFound, model)
	}
	if maxContext == nil {
		return gateway.ContextWindowResult{ModelName: model, Source: "unknown", Detail: "the provider lists no window", Revision: b.revision}, nil
	}
	if *maxContext < 0 {
		return gateway.ContextWindowResult{}, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "max_context", Message: "must not be negative"}}}
	}
	b.revision++
	return gateway.ContextWindowResult{ModelName: model, MaxContext: *maxContext, Source: "recorded", Configured: *maxContext, Revision: b.revision}, nil
}

func (b *configBook) ListMCPTools(_ context.Context, name string, server map[string]any) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	s, _ := json.Marshal(server)
	b.probed = append(b.probed, "tools "+name+" "+string(s))
	switch {
	case name == "down":
		return nil, fmt.Errorf("%w: mcp server down: connection refused", orchestrator.ErrUnavailable)
	case name != "" && name != "fs":
		return nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, name)
	case server != nil && server["url"] == nil:
		return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "server.url", Message: "required"}}}
	}
	return map[string]any{"server": "fs", "tools": []any{map[string]any{"name": "read"}}}, nil
}

func (b *configBook) CallMCPTool(_ context.Context, server, tool string, arguments json.RawMessage) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.probed = append(b.probed, "call "+server+"@"+tool+" "+string(arguments))
	if server != "fs" {
		return nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, server)
	}
	return map[string]any{"server": server, "tool": tool, "is_error": false}, nil
}

func (b *configBook) FetchA2ACard(_ context.Context, name, endpoint string, headers map[string]string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.probed = append(b.probed, fmt.Sprintf("card %s %s %v", name, endpoint, headers))
	if endpoint == "http://127.0.0.1:1" {
		return nil, fmt.Errorf("%w: agent card: connection refused", orchestrator.ErrUnavailable)
	}
	return map[string]any{"card": map[string]any{"name": "peer"}}, nil
}

func (b *configBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

// lspStatus is an LSPAdmin whose status GET /wunder/admin/lsp adds to the
// section.
type lspStatus struct{ err error }

func (l lspStatus) LSPStatus(context.Context) (any, error) {
	return map[string]any{"servers": []string{"gopls"}}, l.err
}
func (lspStatus) LSPTest(context.Context, string) (any, error) { return nil, nil }

// Each section reads with its revision (in the body and as the ETag) and
// is replaced by a POST; If-Match, or "revision" in the body, guards the
// change and a stale one is 409 stale_revision; a refused change is 400
// invalid_config with its fields, and leaves the section as it was.
func TestConfigRoutesSections(t *testing.T) {
	t.Parallel()
	book := newConfigBook()
	e, admin, _ := adminEnv(t, gateway.Options{Config: book, LSP: lspStatus{}})
	for _, sec := range []string{"llm", "mcp", "a2a", "tools", "server", "lsp"} {
		resp := e.do(t, "GET", "/wunder/admin/"+sec, "", admin...)
		if tag := resp.Header.Get("ETag"); tag != `"3"` {
			t.Errorf("GET %s: ETag %s, want \"3\"", sec, tag)
		}
		doc := decode[map[string]any](t, resp, 200)
		if doc["revision"] != 3.0 {
			t.Errorf("GET %s: revision %v", sec, doc["revision"])
		}
		if _, hasStatus := doc["status"]; hasStatus != (sec == "lsp") {
			t.Errorf("GET %s: status present %v; only the lsp section has the servers' status", sec, hasStatus)
		}
	}

	// If-Match, weak or strong, names the revision read.
	doc := decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/server", `{"max_body_bytes":2048}`, append(admin, "If-Match", `W/"3"`)...), 200)
	if doc["revision"] != 4.0 || doc["max_body_bytes"] != 2048.0 || book.ifMatch == nil || *book.ifMatch != 3 {
		t.Fatalf("POST server = %v (if-match %v)", doc, book.ifMatch)
	}
	p := wantProblem(t, e.do(t, "POST", "/wunder/admin/server", `{"max_body_bytes":4096}`, append(admin, "If-Match", `"3"`)...), 409, "stale_revision")
	if !strings.Contains(p.Detail, "stale") {
		t.Errorf("stale detail %q", p.Detail)
	}
	// "revision" in the body does the same, and is not part of the section.
	doc = decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/server", `{"max_body_bytes":4096,"revision":4}`, admin...), 200)
	if doc["revision"] != 5.0 || *book.ifMatch != 4 {
		t.Errorf("POST with revision 4 in the body = %v", doc)
	}
	if _, kept := book.docs["server"]["revision"]; kept {
		t.Error("the body's revision was stored in the section")
	}
	// Without either, the change is not guarded.
	decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/mcp", `{"servers":[]}`, admin...), 200)
	if book.ifMatch != nil {
		t.Errorf("an unguarded POST gave if-match %d", *book.ifMatch)
	}

	resp := e.do(t, "POST", "/wunder/admin/server", `{"max_body_bytes":10}`, admin...)
	var refused struct {
		problem
		Errors []gateway.ConfigFieldError `json:"errors"`
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 400 || ct != "application/problem+json" {
		t.Fatalf("invalid change: %d %s", resp.StatusCode, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(&refused); err != nil {
		t.Fatal(err)
	}
	if refused.Code != "invalid_config" || len(refused.Errors) != 1 || refused.Errors[0].Key != "server.max_body_bytes" || !strings.Contains(refused.Detail, "at least 1024") {
		t.Errorf("refused change = %+v", refused)
	}
	if got := decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/server", "", admin...), 200); got["max_body_bytes"] != 4096.0 {
		t.Errorf("after a refused change the section reads %v", got)
	}
}

// Malformed requests are refused before the configuration is asked, each
// with its code; a user and an anonymous caller reach no section.
func TestConfigRoutesBadInput(t *testing.T) {
	t.Parallel()
	book := newConfigBook()
	e, admin, alice := adminEnv(t, gateway.Options{Config: book})
	for _, tc := range []struct {
		body, ifMatch string
		code          string
	}{
		{`[1,2]`, "", "invalid_json"},
		{`null`, "", "invalid_json"},
		{`{"a":`, "", "invalid_json"},
		{`{}`, `"three"`, "invalid_argument"},
		{`{}`, `"-1"`, "invalid_argument"},
		{`{"revision":"3"}`, "", "invalid_argument"},
		{`{"revision":2.5}`, "", "invalid_argument"},
		{`{"revision":-4}`, "", "invalid_argument"},
	} {
		hdr := admin
		if tc.ifMatch != "" {
			hdr = append(hdr[:len(hdr):len(hdr)], "If-Match", tc.ifMatch)
		}
		wantProblem(t, e.do(t, "POST", "/wunder/admin/llm", tc.body, hdr...), 400, tc.code)
	}
	for _, sec := range []string{"llm", "server"} {
		wantProblem(t, e.do(t, "GET", "/wunder/admin/"+sec, "", alice...), 403, "permission_denied")
		wantProblem(t, e.do(t, "POST", "/wunder/admin/"+sec, `{}`, alice...), 403, "permission_denied")
		if resp := e.do(t, "GET", "/wunder/admin/"+sec, ""); resp.StatusCode != 401 {
			t.Errorf("GET %s without a credential: %d", sec, resp.StatusCode)
		}
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/llm/context_window", `{"model_name":"fake"}`, alice...), 403, "permission_denied")
	if n := book.count(); n != 0 {
		t.Errorf("refused requests reached the configuration %d times", n)
	}
}

// The lsp section with an LSPAdmin whose status fails answers its error,
// not a document without the status.
func TestConfigRoutesLSPStatusError(t *testing.T) {
	t.Parallel()
	e, admin, _ := adminEnv(t, gateway.Options{Config: newConfigBook(), LSP: lspStatus{err: fmt.Errorf("%w: lsp workers are restarting", orchestrator.ErrUnavailable)}})
	wantProblem(t, e.do(t, "GET", "/wunder/admin/lsp", "", admin...), 503, "unavailable")
}

// POST /wunder/admin/llm/context_window: a probe without max_context, a
// record with it; a missing model name is a refused change naming the
// field, an unknown model 404, a negative window the back end's refusal.
func TestContextWindowRoute(t *testing.T) {
	t.Parallel()
	e, admin, _ := adminEnv(t, gateway.Options{Config: newConfigBook()})
	const path = "/wunder/admin/llm/context_window"
	probe := decode[gateway.ContextWindowResult](t, e.do(t, "POST", path, `{"model_name":"fake"}`, admin...), 200)
	if probe.Source != "unknown" || probe.Detail == "" || probe.MaxContext != 0 {
		t.Errorf("probe = %+v", probe)
	}
	rec := decode[gateway.ContextWindowResult](t, e.do(t, "POST", path, `{"model_name":"fake","max_context":32000}`, admin...), 200)
	if rec.Source != "recorded" || rec.Configured != 32000 || rec.Revision != 4 {
		t.Errorf("record = %+v", rec)
	}
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{}`, 400, "invalid_config"},
		{`{"model_name":"gpt-nope"}`, 404, "not_found"},
		{`{"model_name":"fake","max_context":-1}`, 400, "invalid_config"},
		{`{"model_name":"fake","max_context":"big"}`, 400, "invalid_json"},
		{`{"model_name":"fake","window":1}`, 400, "unknown_field"},
	} {
		wantProblem(t, e.do(t, "POST", path, tc.body, admin...), tc.status, tc.code)
	}
}

// The probe routes: a configured server or an entry to try (one of them),
// a tool call with "arguments" or the original wunder's "args", an agent
// card by name or endpoint; bad requests are refused before the probe,
// and its failures keep their kind.
func TestProbeRoutes(t *testing.T) {
	t.Parallel()
	book := newConfigBook()
	e, admin, alice := adminEnv(t, gateway.Options{Config: book})
	for _, tc := range []struct {
		path, body string
		status     int
		code       string // problem code; "" for a 200
	}{
		{"/wunder/admin/mcp/tools", `{}`, 400, "invalid_argument"},
		{"/wunder/admin/mcp/tools", `{"name":"fs","server":{"url":"http://x"}}`, 400, "invalid_argument"},
		{"/wunder/admin/mcp/tools/call", `{"server":"fs"}`, 400, "invalid_argument"},
		{"/wunder/admin/mcp/tools/call", `{"server":"f s","tool":"read"}`, 400, "invalid_argument"},
		{"/wunder/admin/mcp/tools/call", `{"server":"","tool":"read"}`, 400, "invalid_argument"},
		{"/wunder/admin/a2a/card", `{}`, 400, "invalid_argument"},
		{"/wunder/admin/a2a/card", `{"name":"peer","endpoint":"http://x"}`, 400, "invalid_argument"},
		{"/wunder/admin/a2a/card", `{"url":"http://x"}`, 400, "unknown_field"},
	} {
		wantProblem(t, e.do(t, "POST", tc.path, tc.body, admin...), tc.status, tc.code)
	}
	for _, path := range []string{"/wunder/admin/mcp/tools", "/wunder/admin/mcp/tools/call", "/wunder/admin/a2a/card"} {
		wantProblem(t, e.do(t, "POST", path, `{"name":"fs"}`, alice...), 403, "permission_denied")
	}
	if n := book.count(); n != 0 {
		t.Fatalf("refused probes reached the configuration %d times", n)
	}

	for _, tc := range []struct {
		path, body string
		status     int
		code       string
	}{
		{"/wunder/admin/mcp/tools", `{"name":"fs"}`, 200, ""},
		{"/wunder/admin/mcp/tools", `{"name":"down"}`, 503, "unavailable"},
		{"/wunder/admin/mcp/tools", `{"name":"gone"}`, 404, "not_found"},
		{"/wunder/admin/mcp/tools", `{"server":{"name":"try"}}`, 400, "invalid_config"},
		{"/wunder/admin/mcp/tools", `{"server":{"name":"try","url":"http://127.0.0.1:9/mcp"}}`, 200, ""},
		{"/wunder/admin/mcp/tools/call", `{"server":"fs","tool":"read","arguments":{"path":"a"}}`, 200, ""},
		{"/wunder/admin/mcp/tools/call", `{"server":"fs","tool":"read","args":{"path":"b"}}`, 200, ""},
		{"/wunder/admin/mcp/tools/call", `{"server":"nope","tool":"read"}`, 404, "not_found"},
		{"/wunder/admin/a2a/card", `{"name":"peer"}`, 200, ""},
		{"/wunder/admin/a2a/card", `{"endpoint":"http://127.0.0.1:1","headers":{"X-Team":"t"}}`, 503, "unavailable"},
	} {
		resp := e.do(t, "POST", tc.path, tc.body, admin...)
		if tc.code == "" {
			decode[map[string]any](t, resp, tc.status)
			continue
		}
		wantProblem(t, resp, tc.status, tc.code)
	}
	want := []string{
		"tools fs null", "tools down null", "tools gone null", `tools  {"name":"try"}`,
		`tools  {"name":"try","url":"http://127.0.0.1:9/mcp"}`,
		`call fs@read {"path":"a"}`, `call fs@read {"path":"b"}`, "call nope@read ",
		"card peer  map[]", "card  http://127.0.0.1:1 map[X-Team:t]",
	}
	if got := strings.Join(book.probed, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("the probes were asked:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// Without a ConfigAdmin there are no section routes; one that cannot
// probe gets no probe routes.
func TestConfigRoutesAbsent(t *testing.T) {
	t.Parallel()
	e, admin, _ := adminEnv(t, gateway.Options{})
	for _, path := range []string{"/wunder/admin/llm", "/wunder/admin/tools"} {
		if resp := e.do(t, "GET", path, "", admin...); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s without a ConfigAdmin: %d", path, resp.StatusCode)
		}
	}
	only := struct{ gateway.ConfigAdmin }{newConfigBook()} // sections, no probe, no context windows
	e, admin, _ = adminEnv(t, gateway.Options{Config: only})
	decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/llm", "", admin...), 200)
	for _, path := range []string{"/wunder/admin/mcp/tools", "/wunder/admin/a2a/card", "/wunder/admin/llm/context_window"} {
		if resp := e.do(t, "POST", path, `{"name":"fs"}`, admin...); resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST %s without the interface: %d", path, resp.StatusCode)
		}
	}
}
