package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/usertools"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

// aliceToken is what alice's MCP server requires; only her configuration
// carries it.
const aliceToken = "alice-mcp-token-1234"

// userMCPServer is alice's MCP server in the tests: an in-process go-sdk
// server over streamable HTTP with a tool she shares (echo) and one she
// keeps (secret). It answers only requests with her bearer token.
func userMCPServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "alice-tools", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text" jsonschema:"what to echo"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "secret", Description: "Alice's own tool."},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "alice's secret"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+aliceToken {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		// wunder's sessions to it may still be open (their streams never
		// end by themselves): cut them, then close.
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

func aliceServer(url string, shared ...string) string {
	m := map[string]any{"name": "srv", "url": url, "bearer_token": aliceToken}
	if len(shared) > 0 {
		m["shared_tools"] = shared
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func newConnector(allowPrivate bool) *mcpConnector {
	pol := config.Default().UserTools
	pol.AllowPrivateURLs = allowPrivate
	return &mcpConnector{policy: pol, mcp: config.Default().MCP, log: slog.New(slog.DiscardHandler),
		transport: netguard.Transport(5*time.Second, allowPrivate)}
}

// TestUserToolsContract runs the shared toolset suite over the wired
// usertools toolset: alice's own server (a real in-process MCP server,
// through mcptools and the guarded transport) and bob's view of it.
func TestUserToolsContract(t *testing.T) {
	url := userMCPServer(t)
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		configs := toolconfig.NewConfigs(toolconfigtest.NewMemStore(), 0)
		set := usertools.New(configs, newConnector(true), &usertools.Options{DiscoveryTimeout: 10 * time.Second})
		t.Cleanup(func() { _ = set.Close() })
		if _, err := set.SetServers(t.Context(), "alice", []json.RawMessage{json.RawMessage(aliceServer(url, "echo"))}); err != nil {
			t.Fatal(err)
		}
		return set
	}, orchestratortest.WithMinTools(2), orchestratortest.WithIsolation(func(t *testing.T, ts orchestrator.Toolset, a, b string) {
		list, err := ts.Tools(t.Context(), b)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Spec().Name != a+"@srv@echo" || list[0].Spec().Owner != a {
			t.Fatalf("%s's tools: %v; want only %s@srv@echo, owned by %s", b, list, a, a)
		}
		res, err := list[0].Call(t.Context(), &orchestrator.ToolInvocation{UserID: b, Arguments: json.RawMessage(`{"text":"hi"}`)})
		if err != nil || res.IsError || res.Content != "echo: hi" {
			t.Fatalf("%s calls %s's shared tool: %+v, %v", b, a, res, err)
		}
	}))
}

// TestUserServersGuarded: without the opt-outs a user's server on a
// private address or over stdio is refused when checked, and a connection
// to a private address is refused at dial time even when the check was
// skipped (a stored configuration, a name that rebinds).
func TestUserServersGuarded(t *testing.T) {
	url := userMCPServer(t)
	c := newConnector(false)
	for _, cfg := range []string{
		`{"name":"srv","url":"` + url + `"}`,
		`{"name":"srv","url":"http://localhost:8080/mcp"}`,
		`{"name":"srv","url":"http://169.254.169.254/latest"}`,
		`{"name":"srv","transport":"stdio","command":"sh"}`,
		`{"name":"srv","url":"ftp://example.com/x"}`,
	} {
		if _, err := c.Check(t.Context(), json.RawMessage(cfg)); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Check(%s) = %v, want invalid argument", cfg, err)
		}
	}
	conn, err := c.Open(t.Context(), json.RawMessage(aliceServer(url)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	tools, err := conn.Tools(ctx)
	if len(tools) != 0 || err == nil || !strings.Contains(err.Error(), netguard.ErrBlocked.Error()) {
		t.Fatalf("tools through the guard: %d, %v; want the dial refused", len(tools), err)
	}
}

// modelRecorder keeps the requests the model receives.
type modelRecorder struct {
	next http.Handler
	mu   sync.Mutex
	reqs []string
}

func (m *modelRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.reqs = append(m.reqs, string(b))
	m.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(b))
	m.next.ServeHTTP(w, r)
}

func (m *modelRecorder) take() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.reqs
	m.reqs = nil
	return out
}

// startUserToolsServer starts wunder with an API key, accounts alice and
// bob, a recording model, and users' servers allowed on loopback (alice's
// in-process server).
func startUserToolsServer(t *testing.T) (*fixture, *modelRecorder) {
	t.Helper()
	rec := &modelRecorder{next: &fakellm.Server{Chunks: 2}}
	ms := httptest.NewServer(rec)
	t.Cleanup(ms.Close)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.UserTools.AllowPrivateURLs = true
		c.UserTools.DiscoveryTimeoutSeconds = 10
		m := config.NewModel()
		m.Provider, m.BaseURL, m.Model = config.ProviderLocal, ms.URL+"/v1", "fake"
		c.LLM.Models["rec"] = m
		c.LLM.Default = "rec"
	})
	f := &fixture{s: s}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, map[string]string{"X-API-Key": "admin-key"}), 201)
	}
	f.alice, f.bob = f.login(t, "alice"), f.login(t, "bob")
	return f, rec
}

const alicePrompt = "ALICE-ONLY: always sign with a rose."

// TestUserToolsEndToEnd: alice configures her MCP server and shares one
// tool; bob sees alice@srv@echo (owner alice) and not her other tool, a
// run of bob calls it on alice's configuration, and neither his runs nor
// any route shows him her extra prompt or her configuration.
func TestUserToolsEndToEnd(t *testing.T) {
	f, rec := startUserToolsServer(t)
	url := userMCPServer(t)
	alice, bob := bearerOf(f.alice), bearerOf(f.bob)
	var saved struct{ Servers []map[string]any }
	decodeInto(t, f.rest(t, "POST", "/wunder/user_tools/mcp", `{"servers":[`+aliceServer(url, "echo")+`]}`, alice), 200, &saved)
	if len(saved.Servers) != 1 || saved.Servers[0]["bearer_token"] != usertools.Masked {
		t.Fatalf("saved servers: %+v; want one, its token masked", saved.Servers)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"`+alicePrompt+`"}`, alice), 200)

	// The catalogs.
	var cat map[string][]orchestrator.CatalogEntry
	decodeInto(t, f.rest(t, "GET", "/wunder/tools", "", bob), 200, &cat)
	if sh := cat[orchestrator.GroupShared]; len(sh) != 1 || sh[0].Name != "alice@srv@echo" || sh[0].Owner != "alice" {
		t.Errorf("bob's shared_tools: %+v; want alice@srv@echo owned by alice", sh)
	}
	for g, entries := range cat {
		for _, e := range entries {
			if e.Name == "alice@srv@secret" {
				t.Errorf("bob's catalog offers alice's unshared tool in %s", g)
			}
		}
	}
	var mine struct {
		UserTools   []orchestrator.CatalogEntry `json:"user_tools"`
		SharedTools []orchestrator.CatalogEntry `json:"shared_tools"`
		ExtraPrompt string                      `json:"extra_prompt"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/tools", "", bob), 200, &mine)
	if len(mine.UserTools) != 0 || len(mine.SharedTools) != 1 || mine.SharedTools[0].Name != "alice@srv@echo" ||
		mine.SharedTools[0].WireName != "alice__srv__echo" || mine.SharedTools[0].Owner != "alice" || mine.ExtraPrompt != "" {
		t.Errorf("bob's user tools: %+v", mine)
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/tools", "", alice), 200, &mine)
	if len(mine.UserTools) != 2 || len(mine.SharedTools) != 0 || mine.ExtraPrompt != alicePrompt {
		t.Errorf("alice's user tools: %+v", mine)
	}

	// Bob's run calls alice's shared tool; his model never sees her prompt.
	rec.take()
	var run struct{ Answer string }
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"call alice__srv__echo {\"text\":\"from bob\"}","tool_names":["alice@srv@echo"],"stream":false}`, bob), 200, &run)
	if !strings.Contains(run.Answer, "echo: from bob") {
		t.Errorf("bob's run answered %q; want the shared tool's result", run.Answer)
	}
	reqs := rec.take()
	if len(reqs) == 0 {
		t.Fatal("the model saw no request")
	}
	for _, r := range reqs {
		if strings.Contains(r, "ALICE-ONLY") || strings.Contains(r, aliceToken) {
			t.Errorf("bob's model request carries alice's prompt or token: %.300s", r)
		}
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"hello","stream":false}`, alice), 200, &run)
	if reqs := rec.take(); len(reqs) == 0 || !strings.Contains(reqs[0], "ALICE-ONLY") {
		t.Errorf("alice's own run lacks her extra prompt")
	}
	var prompt struct{ Prompt string }
	decodeInto(t, f.rest(t, "POST", "/wunder/system_prompt", `{"tool_names":["alice@srv@echo"]}`, bob), 200, &prompt)
	if strings.Contains(prompt.Prompt, "ALICE-ONLY") || !strings.Contains(prompt.Prompt, "alice__srv__echo") && !strings.Contains(prompt.Prompt, "alice@srv@echo") {
		t.Errorf("bob's system prompt: has alice's prompt or lacks her shared tool:\n%s", prompt.Prompt)
	}

	// Bob reaches none of alice's configuration.
	for _, path := range []string{"/wunder/user_tools/mcp", "/wunder/user_tools/extra_prompt", "/wunder/user_tools/tools"} {
		wantStatus(t, f.rest(t, "GET", path+"?user_id=alice", "", bob), 403)
		b, _ := io.ReadAll(f.rest(t, "GET", path, "", bob).Body)
		if bytes.Contains(b, []byte("ALICE-ONLY")) || bytes.Contains(b, []byte(url)) {
			t.Errorf("GET %s as bob shows alice's configuration: %s", path, b)
		}
	}
	wantStatus(t, f.rest(t, "POST", "/wunder/user_tools/mcp", `{"user_id":"alice","servers":[]}`, bob), 403)
	wantStatus(t, f.rest(t, "POST", "/wunder/user_tools/extra_prompt", `{"user_id":"alice","extra_prompt":""}`, bob), 403)

	// Alice stops sharing: bob's catalog drops the tool at once (this
	// replica; others within the 5 s cache).
	mustStatus(t, f.rest(t, "POST", "/wunder/user_tools/mcp", `{"servers":[`+aliceServer(url)+`]}`, alice), 200)
	var after map[string][]orchestrator.CatalogEntry
	decodeInto(t, f.rest(t, "GET", "/wunder/tools", "", bob), 200, &after)
	for _, entries := range after {
		for _, e := range entries {
			if e.Owner == "alice" {
				t.Errorf("after alice stopped sharing, bob still sees %s", e.Name)
			}
		}
	}
}

// TestUserToolsBadInput: each class of bad input to the user tool routes
// is a 4xx problem that says what is wrong.
func TestUserToolsBadInput(t *testing.T) {
	f, _ := startUserToolsServer(t)
	url := userMCPServer(t)
	alice := bearerOf(f.alice)
	many := make([]string, 11)
	for i := range many {
		many[i] = `{"name":"s` + string(rune('a'+i)) + `","url":"https://example.com/mcp"}`
	}
	for _, c := range []struct {
		what, path, body, want string
	}{
		{"malformed JSON", "/wunder/user_tools/mcp", `{"servers":[{]}`, "malformed JSON"},
		{"bad name", "/wunder/user_tools/mcp", `{"servers":[{"name":"my server","url":"https://example.com/mcp"}]}`, "mcp server name"},
		{"name with @", "/wunder/user_tools/mcp", `{"servers":[{"name":"a@b","url":"https://example.com/mcp"}]}`, "'@'"},
		{"non-HTTP transport", "/wunder/user_tools/mcp", `{"servers":[{"name":"s","transport":"stdio","command":"sh"}]}`, "user_tools.allow_stdio"},
		{"non-HTTP URL", "/wunder/user_tools/mcp", `{"servers":[{"name":"s","url":"file:///etc/passwd"}]}`, "url"},
		{"unknown field", "/wunder/user_tools/mcp", `{"servers":[{"name":"s","url":"https://example.com/mcp","tokn":"x"}]}`, "tokn: unknown key"},
		{"shared tool not in the server", "/wunder/user_tools/mcp", `{"servers":[` + aliceServer(url, "nosuch") + `]}`, "has no tool"},
		{"shared tool not allowed", "/wunder/user_tools/mcp", `{"servers":[{"name":"s","url":"https://example.com/mcp","allow_tools":["a"],"shared_tools":["b"]}]}`, "not in allow_tools"},
		{"too many servers", "/wunder/user_tools/mcp", `{"servers":[` + strings.Join(many, ",") + `]}`, "at most 10"},
		{"too long prompt", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"` + strings.Repeat("x", 4001) + `"}`, "at most 4000"},
		{"control character in prompt", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"a\u0007b"}`, "control character"},
		{"no server name", "/wunder/user_tools/mcp/tools", `{"url":"https://example.com/mcp"}`, "name is required"},
	} {
		r := f.rest(t, "POST", c.path, c.body, alice)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 400 || !strings.Contains(string(b), c.want) || !strings.Contains(r.Header.Get("Content-Type"), "problem+json") {
			t.Errorf("%s: %d %s; want 400 problem saying %q", c.what, r.StatusCode, b, c.want)
		}
	}
	// Nothing of it was written.
	var got struct{ Servers []json.RawMessage }
	decodeInto(t, f.rest(t, "GET", "/wunder/user_tools/mcp", "", alice), 200, &got)
	if len(got.Servers) != 0 {
		t.Errorf("refused writes left servers: %s", got.Servers)
	}
	// The private-URL class needs the default policy: a second server.
	s := startServer(t, nil)
	g := &fixture{s: s}
	r := g.rest(t, "POST", "/wunder/user_tools/mcp", `{"user_id":"u","servers":[{"name":"s","url":"`+url+`"}]}`, nil)
	if b, _ := io.ReadAll(r.Body); r.StatusCode != 400 || !strings.Contains(string(b), "user_tools.allow_private_urls") {
		t.Errorf("private URL: %d %s; want 400 naming user_tools.allow_private_urls", r.StatusCode, b)
	}
	r = g.rest(t, "POST", "/wunder/user_tools/mcp/tools", `{"user_id":"u","name":"s","url":"http://169.254.169.254/x"}`, nil)
	if r.StatusCode != 400 {
		t.Errorf("private URL listed before saving: %d", r.StatusCode)
	}
}

func wantStatus(t *testing.T, r *http.Response, want int) {
	t.Helper()
	if r.StatusCode != want {
		b, _ := io.ReadAll(r.Body)
		t.Errorf("%s %s = %d %s; want %d", r.Request.Method, r.Request.URL, r.StatusCode, b, want)
	}
}
