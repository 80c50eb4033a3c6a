package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// adminDo sends an admin request with the API key "k" and decodes the JSON
// answer into a map.
func adminDo(t *testing.T, s *server, method, path, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", "k")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: %d, not JSON: %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode, out
}

// toolNames is the catalog /wunder/tools gives user, every group together.
func toolNames(t *testing.T, s *server, user string) []string {
	t.Helper()
	code, out := adminDo(t, s, "GET", "/wunder/tools?user_id="+user, "")
	if code != 200 {
		t.Fatalf("GET /wunder/tools: %d %v", code, out)
	}
	var names []string
	for _, group := range out {
		list, _ := group.([]any)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					names = append(names, n)
				}
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("GET /wunder/tools: no tool names in %v", out)
	}
	return names
}

func hasName(names []string, want string) bool {
	for _, n := range names {
		if n == want {
			return true
		}
	}
	return false
}

// echoMCP is an MCP server over streamable HTTP with one tool, shout.
func echoMCP(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "shout", Description: "upper-cases text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() {
		hs.CloseClientConnections() // wunder's upstream session holds a stream open
		hs.Close()
	})
	return hs.URL
}

// An MCP server added through the admin API is in the next catalog and has
// its pass-through route, without a restart; a stale revision and an
// invalid change are refused and change nothing; the override file keeps
// the change for the next start; removing the server removes both.
func TestAdminConfigMCPLive(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	up := echoMCP(t)

	code, got := adminDo(t, s, "GET", "/wunder/admin/mcp", "")
	if code != 200 || got["revision"] != float64(0) || len(got["servers"].([]any)) != 0 {
		t.Fatalf("GET before: %d %v", code, got)
	}
	if hasName(toolNames(t, s, "alice"), "echo@shout") {
		t.Fatal("echo@shout offered before it was configured")
	}

	add := `{"servers":[{"name":"echo","transport":"streamable-http","url":"` + up + `","bearer_token":"tok-1"}]}`
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp", add, "If-Match", "0")
	if code != 200 || got["revision"] != float64(1) {
		t.Fatalf("POST: %d %v", code, got)
	}
	srv := got["servers"].([]any)[0].(map[string]any)
	if srv["bearer_token"] != config.Mask || srv["url"] != up {
		t.Errorf("POST answer shows the server as %v; want its url and the token masked", srv)
	}
	if !hasName(toolNames(t, s, "alice"), "echo@shout") {
		t.Fatalf("echo@shout is not offered after the POST: %v", toolNames(t, s, "alice"))
	}
	// The pass-through route exists now.
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp/echo", HTTPClient: &http.Client{Transport: bearerRT("k")}}, nil)
	if err != nil {
		t.Fatalf("pass-through to the new server: %v", err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "HI" {
		t.Fatalf("pass-through call: %v %+v", err, res)
	}
	cs.Close()

	// Trying it: the tool list of the configured server, of an entry that
	// is not configured, and one call.
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools", `{"name":"echo"}`)
	if code != 200 || !strings.Contains(mustJSON(got["tools"]), `"echo@shout"`) {
		t.Fatalf("POST /wunder/admin/mcp/tools by name: %d %v", code, got)
	}
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools", `{"server":{"name":"try","transport":"streamable-http","url":"`+up+`"}}`)
	if code != 200 || !strings.Contains(mustJSON(got["tools"]), `"try@shout"`) {
		t.Fatalf("POST /wunder/admin/mcp/tools with an entry: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools", `{"server":{"name":"try","transport":"pigeon"}}`); code != 400 || got["code"] != "invalid_config" {
		t.Errorf("an invalid entry to try: %d %v", code, got)
	}
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools/call", `{"server":"echo","tool":"shout","arguments":{"text":"hey"}}`)
	if code != 200 || got["content"] != "HEY" || got["is_error"] != false {
		t.Fatalf("POST /wunder/admin/mcp/tools/call: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools/call", `{"server":"echo","tool":"shout","args":{"text":"ho"}}`); code != 200 || got["result"] != "HO" {
		t.Errorf("the original's args field: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/mcp/tools/call", `{"server":"echo","tool":"whisper"}`); code != 404 {
		t.Errorf("calling a tool the server lacks: %d %v", code, got)
	}
	// The admin's probes are in the audit, as every tool call is.
	code, got = adminDo(t, s, "GET", "/wunder/admin/audit?via=probe", "")
	if recs, _ := got["records"].([]any); code != 200 || len(recs) != 2 || recs[0].(map[string]any)["tool"] != "echo@shout" {
		t.Errorf("the probes' audit: %d %v", code, got)
	}

	// A stale revision: 409, nothing changes.
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp", `{"servers":[]}`, "If-Match", "0")
	if code != 409 || got["code"] != "stale_revision" {
		t.Fatalf("stale If-Match: %d %v", code, got)
	}
	// An invalid change: 400 naming the key, nothing changes.
	code, got = adminDo(t, s, "POST", "/wunder/admin/mcp", `{"servers":[{"name":"bad","transport":"carrier-pigeon","url":"http://x"}]}`)
	if code != 400 || got["code"] != "invalid_config" {
		t.Fatalf("invalid transport: %d %v", code, got)
	}
	errs, _ := got["errors"].([]any)
	if len(errs) == 0 || errs[0].(map[string]any)["key"] != "mcp.servers[0].transport" {
		t.Errorf("errors = %v, want the key mcp.servers[0].transport", got["errors"])
	}
	code, got = adminDo(t, s, "GET", "/wunder/admin/mcp", "")
	if code != 200 || got["revision"] != float64(1) || len(got["servers"].([]any)) != 1 {
		t.Fatalf("after refused changes: %d %v", code, got)
	}

	// The override file holds the change (the real token, not the mask),
	// and the next start loads it.
	path := config.OverridePath(s.dir)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if config.OverrideRevision(data) != 1 || !strings.Contains(string(data), "tok-1") || strings.Contains(string(data), config.Mask) {
		t.Errorf("override file:\n%s", data)
	}
	t.Setenv("WUNDER_DATA_DIR", s.dir)
	t.Setenv("WUNDER_CONFIG_PATH", "")
	reloaded, err := config.Load(config.LoadOptions{OverridePath: path})
	if err != nil {
		t.Fatal(err)
	}
	if len(reloaded.MCP.Servers) != 1 || reloaded.MCP.Servers[0].Name != "echo" || reloaded.MCP.Servers[0].BearerToken != "tok-1" {
		t.Errorf("a restart would load mcp.servers = %+v", reloaded.MCP.Servers)
	}

	// `wunder config diff` shows the change, secrets masked.
	code, diffOut, diffErr := runCLI(t, t.Context(), "config", "diff")
	if code != exitOK || !strings.Contains(diffOut, `mcp.servers[0].name: (unset) -> "echo"`) ||
		!strings.Contains(diffOut, "revision 1") || strings.Contains(diffOut, "tok-1") {
		t.Errorf("config diff: exit %d\n%s%s", code, diffOut, diffErr)
	}

	// Posting back what GET showed (the masked token) keeps the token.
	if code, got = adminDo(t, s, "GET", "/wunder/admin/mcp", ""); code != 200 {
		t.Fatalf("GET: %d %v", code, got)
	}
	back, _ := json.Marshal(map[string]any{"servers": got["servers"]})
	if code, got = adminDo(t, s, "POST", "/wunder/admin/mcp", string(back)); code != 200 {
		t.Fatalf("POST back: %d %v", code, got)
	}
	data, _ = os.ReadFile(path)
	if !strings.Contains(string(data), "tok-1") {
		t.Errorf("the masked token was not kept:\n%s", data)
	}

	// Removing it removes its tools and its route.
	if code, got = adminDo(t, s, "POST", "/wunder/admin/mcp", `{"servers":[]}`); code != 200 {
		t.Fatalf("remove: %d %v", code, got)
	}
	if hasName(toolNames(t, s, "alice"), "echo@shout") {
		t.Error("echo@shout still offered after its server was removed")
	}
	if code, _ = adminDo(t, s, "POST", "/wunder/mcp/echo", `{}`, "Authorization", "Bearer k"); code != 404 {
		t.Errorf("pass-through of a removed server: %d, want 404", code)
	}
}

// A model and an A2A service added through the admin API are used by the
// next run and offered in the next catalog; the model's key is masked.
func TestAdminConfigModelAndA2ALive(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	code, got := adminDo(t, s, "GET", "/wunder/admin/llm", "")
	if code != 200 {
		t.Fatalf("GET llm: %d %v", code, got)
	}
	llmDoc := got["llm"].(map[string]any)
	models := llmDoc["models"].(map[string]any)
	fake := models["fake"].(map[string]any)
	// A second model on the same endpoint, with a key of its own.
	second := map[string]any{"provider": "local", "base_url": fake["base_url"], "model": "fake", "api_key": "sk-second"}
	models["second"] = second
	llmDoc["default"] = "fake" // two models: the default must be named
	body, _ := json.Marshal(map[string]any{"llm": llmDoc})
	code, got = adminDo(t, s, "POST", "/wunder/admin/llm", string(body))
	if code != 200 {
		t.Fatalf("POST llm: %d %v", code, got)
	}
	if k := got["llm"].(map[string]any)["models"].(map[string]any)["second"].(map[string]any)["api_key"]; k != config.Mask {
		t.Errorf("api_key in the answer = %v, want the mask", k)
	}
	code, run := adminDo(t, s, "POST", "/wunder", `{"user_id":"alice","question":"hello","model_name":"second","stream":false}`)
	if code != 200 || run["state"] != "finished" {
		t.Fatalf("a run on the new model: %d %v", code, run)
	}
	// A model that does not exist is refused as before.
	if code, _ := adminDo(t, s, "POST", "/wunder", `{"user_id":"alice","question":"hello","model_name":"third","stream":false}`); code < 400 || code >= 500 {
		t.Errorf("a run on an unknown model: %d", code)
	}
	// An invalid model names its key.
	bad := `{"llm":{"models":{"broken":{"provider":"openai","base_url":"not a url","model":"m"}}}}`
	code, got = adminDo(t, s, "POST", "/wunder/admin/llm", bad)
	if code != 400 || !strings.Contains(mustJSON(got["errors"]), "llm.models.broken") {
		t.Errorf("invalid model: %d %v", code, got)
	}

	code, got = adminDo(t, s, "POST", "/wunder/admin/a2a", `{"services":[{"name":"peer","endpoint":"http://127.0.0.1:1/a2a","version":"1.0","description":"a peer"}]}`)
	if code != 200 {
		t.Fatalf("POST a2a: %d %v", code, got)
	}
	if !hasName(toolNames(t, s, "alice"), "a2a@peer") {
		t.Errorf("a2a@peer not offered after the POST: %v", toolNames(t, s, "alice"))
	}
	// Built-in tools: enable two, then all again.
	if code, got = adminDo(t, s, "POST", "/wunder/admin/tools", `{"builtin":{"enabled":["read_file","list_files"]}}`); code != 200 {
		t.Fatalf("POST /wunder/admin/tools: %d %v", code, got)
	}
	if names := toolNames(t, s, "alice"); !hasName(names, "read_file") || hasName(names, "write_file") {
		t.Errorf("with read_file and list_files enabled the catalog is %v", names)
	}
	code, got = adminDo(t, s, "POST", "/wunder/admin/tools", `{"builtin":{"enabled":["teleport"]}}`)
	if code != 400 || !strings.Contains(mustJSON(got["errors"]), "tools.builtin.enabled[0]") {
		t.Errorf("an unknown built-in tool: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/tools", `{"builtin":{"enabled":[]}}`); code != 200 || !hasName(toolNames(t, s, "alice"), "write_file") {
		t.Errorf("enabling all again: %d %v", code, got)
	}

	// A peer's card: this wunder's own, by URL; a configured service that
	// cannot be reached is 503; an unknown name 404.
	code, got = adminDo(t, s, "POST", "/wunder/admin/a2a/card", `{"endpoint":"`+s.url+`"}`)
	if code != 200 || got["summary"].(map[string]any)["name"] == "" || got["card"] == nil {
		t.Fatalf("POST /wunder/admin/a2a/card: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/a2a/card", `{"name":"peer"}`); code != 503 {
		t.Errorf("card of an unreachable peer: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/a2a/card", `{"name":"nope"}`); code != 404 {
		t.Errorf("card of an unknown service: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/a2a/card", `{"name":"peer","endpoint":"http://x"}`); code != 400 {
		t.Errorf("both name and endpoint: %d %v", code, got)
	}
	// Unknown fields are refused.
	if code, got = adminDo(t, s, "POST", "/wunder/admin/a2a", `{"servers":[]}`); code != 400 {
		t.Errorf("wrong field: %d %v", code, got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Two replicas on one PostgreSQL: a change made through one replica's admin
// API is stored in the database, applied by the other within its poll
// interval, and loaded by a replica that starts later; a change based on a
// revision another replica has moved is 409.
func TestAdminConfigReplicasPostgres(t *testing.T) {
	dsn := pgSchema(t)
	mutate := func(c *config.Config) { c.Security.APIKey = "k"; c.Storage.Postgres.DSN = dsn }
	a := startServer(t, mutate)
	b := startServer(t, mutate)

	svc := `{"services":[{"name":"peer","endpoint":"http://127.0.0.1:1/a2a","version":"1.0","bearer_token":"peer-secret"}]}`
	code, got := adminDo(t, a, "POST", "/wunder/admin/a2a", svc, "If-Match", "0")
	if code != 200 || got["revision"] != float64(1) {
		t.Fatalf("POST on replica a: %d %v", code, got)
	}
	if !hasName(toolNames(t, a, "alice"), "a2a@peer") {
		t.Fatal("replica a does not offer a2a@peer after its own change")
	}
	// Replica b applies it at its next poll: the ticker (every
	// configPollInterval) calls sync, which the test calls itself rather
	// than wait for the tick.
	if err := b.app.config.sync(t.Context()); err != nil {
		t.Fatalf("replica b's sync: %v", err)
	}
	if !hasName(toolNames(t, b, "alice"), "a2a@peer") {
		t.Fatal("replica b does not offer a2a@peer after its sync")
	}
	code, got = adminDo(t, b, "GET", "/wunder/admin/a2a", "")
	if code != 200 || got["revision"] != float64(1) {
		t.Fatalf("GET on replica b: %d %v", code, got)
	}
	if s0 := got["services"].([]any)[0].(map[string]any); s0["bearer_token"] != config.Mask {
		t.Errorf("replica b shows the token as %v, want the mask", s0["bearer_token"])
	}
	// b is at revision 1 now; a change based on 0 is stale on either replica.
	if code, got = adminDo(t, b, "POST", "/wunder/admin/a2a", `{"services":[]}`, "If-Match", "0"); code != 409 {
		t.Fatalf("stale POST on replica b: %d %v", code, got)
	}
	// A change on b (keeping the masked token) moves both to revision 2.
	keep := `{"services":[{"name":"peer","endpoint":"http://127.0.0.1:1/a2a","version":"1.0","bearer_token":"` + config.Mask + `"},` +
		`{"name":"peer2","endpoint":"http://127.0.0.1:2/a2a","version":"0.3"}]}`
	if code, got = adminDo(t, b, "POST", "/wunder/admin/a2a", keep, "If-Match", "1"); code != 200 || got["revision"] != float64(2) {
		t.Fatalf("POST on replica b: %d %v", code, got)
	}
	// `wunder config diff` reads the database's override.
	t.Setenv("WUNDER_POSTGRES_DSN", dsn)
	t.Setenv("WUNDER_DATA_DIR", t.TempDir())
	t.Setenv("WUNDER_CONFIG_PATH", "")
	code, diffOut, diffErr := runCLI(t, t.Context(), "config", "diff")
	if code != exitOK || !strings.Contains(diffOut, "database (revision 2)") || !strings.Contains(diffOut, `a2a.services[1].name: (unset) -> "peer2"`) ||
		strings.Contains(diffOut, "peer-secret") {
		t.Errorf("config diff on PostgreSQL: exit %d\n%s%s", code, diffOut, diffErr)
	}
	// An MCP server and a model added on replica a are used on replica b.
	up := echoMCP(t)
	if code, got = adminDo(t, a, "POST", "/wunder/admin/mcp", `{"servers":[{"name":"echo","transport":"streamable-http","url":"`+up+`"}]}`); code != 200 {
		t.Fatalf("POST mcp on replica a: %d %v", code, got)
	}
	_, llmDoc := adminDo(t, a, "GET", "/wunder/admin/llm", "")
	llm := llmDoc["llm"].(map[string]any)
	models := llm["models"].(map[string]any)
	models["second"] = map[string]any{"provider": "local", "base_url": models["fake"].(map[string]any)["base_url"], "model": "fake"}
	llm["default"] = "fake"
	body, _ := json.Marshal(map[string]any{"llm": llm})
	if code, got = adminDo(t, a, "POST", "/wunder/admin/llm", string(body)); code != 200 {
		t.Fatalf("POST llm on replica a: %d %v", code, got)
	}
	if err := b.app.config.sync(t.Context()); err != nil {
		t.Fatalf("replica b's sync: %v", err)
	}
	if !hasName(toolNames(t, b, "alice"), "echo@shout") {
		t.Fatal("replica b does not offer echo@shout after its sync")
	}
	if code, run := adminDo(t, b, "POST", "/wunder", `{"user_id":"bob","question":"hello","model_name":"second","stream":false}`); code != 200 || run["state"] != "finished" {
		t.Fatalf("replica b cannot run on the model added on replica a: %d %v", code, run)
	}
	_, got = adminDo(t, b, "GET", "/wunder/admin/a2a", "")
	rev := got["revision"].(float64)

	// A replica started now loads everything before it serves.
	c := startServer(t, mutate)
	code, got = adminDo(t, c, "GET", "/wunder/admin/a2a", "")
	if code != 200 || got["revision"] != rev || len(got["services"].([]any)) != 2 {
		t.Fatalf("GET on a new replica: %d %v", code, got)
	}
	if names := toolNames(t, c, "alice"); !hasName(names, "a2a@peer") || !hasName(names, "a2a@peer2") || !hasName(names, "echo@shout") {
		t.Errorf("a new replica offers %v", names)
	}
	if tok := c.app.cfg.A2A.Services[0].BearerToken; tok != "peer-secret" {
		t.Errorf("the masked token was not kept across replicas: %q", tok)
	}
}

// /wunder/admin/server changes the body limit, CORS and the default
// language of the running server; host and port are not among its fields.
func TestAdminConfigServerLive(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	code, got := adminDo(t, s, "GET", "/wunder/admin/server", "")
	if code != 200 || got["max_body_bytes"] != float64(1<<20) || got["i18n"].(map[string]any)["default_language"] != "en" {
		t.Fatalf("GET /wunder/admin/server: %d %v", code, got)
	}
	big := `{"user_id":"alice","question":"` + strings.Repeat("x", 4000) + `","stream":false}`
	if code, _ := adminDo(t, s, "POST", "/wunder", big); code != 200 {
		t.Fatalf("a 4 KB request before the change: %d", code)
	}
	if _, got := adminDo(t, s, "POST", "/wunder/system_prompt", `{"user_id":"alice"}`); strings.ContainsAny(mustJSON(got["prompt"]), "你的工具") {
		t.Fatalf("the English prompt already has Chinese in it: %.200v", got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/server", `{"max_body_bytes":2048,"cors":{"allow_origins":["https://console.example"]},"i18n":{"default_language":"zh"}}`); code != 200 {
		t.Fatalf("POST /wunder/admin/server: %d %v", code, got)
	}
	bigPrompt := `{"user_id":"alice","tool_names":["` + strings.Repeat("x", 4000) + `"]}`
	if code, got := adminDo(t, s, "POST", "/wunder/system_prompt", bigPrompt); code != 413 || got["code"] != "body_too_large" {
		t.Errorf("a 4 KB request with a 2 KB limit: %d %v", code, got)
	}
	// The routes that carry attachments keep attachments.max_request_bytes.
	if code, got := adminDo(t, s, "POST", "/wunder", big); code != 200 {
		t.Errorf("a 4 KB POST /wunder after max_body_bytes 2048: %d %v; want 200 (its limit is attachments.max_request_bytes)", code, got)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "OPTIONS", s.url+"/wunder", nil)
	req.Header.Set("Origin", "https://console.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://console.example" {
		t.Errorf("preflight after the CORS change: %d %v", resp.StatusCode, resp.Header)
	}
	code, got = adminDo(t, s, "POST", "/wunder/system_prompt", `{"user_id":"alice"}`)
	if prompt, _ := got["prompt"].(string); code != 200 || !strings.ContainsAny(prompt, "你的工具") {
		t.Errorf("the prompt of a request naming no language after default_language: zh: %d %.200v", code, got)
	}
	// A partial change keeps the rest; invalid values and unknown fields
	// are refused with their key.
	if code, got = adminDo(t, s, "POST", "/wunder/admin/server", `{"sse_heartbeat_s":5}`); code != 200 || got["max_body_bytes"] != float64(2048) {
		t.Errorf("a partial change: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/server", `{"max_body_bytes":0}`); code != 400 || !strings.Contains(mustJSON(got["errors"]), "server.max_body_bytes") {
		t.Errorf("max_body_bytes 0: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/server", `{"host":"0.0.0.0"}`); code != 400 {
		t.Errorf("host through the admin API: %d %v", code, got)
	}
}

// /wunder/admin/lsp turns the language servers on and off while the
// server runs: the lsp tool comes and goes with them, and the GET shows
// the configuration with the pool's status. (The command is a stand-in
// that exists everywhere; no worker starts until a call needs one.)
func TestAdminConfigLSPLive(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	if hasName(toolNames(t, s, "alice"), "lsp") {
		t.Fatal("the lsp tool is offered with lsp off")
	}
	code, got := adminDo(t, s, "GET", "/wunder/admin/lsp", "")
	if code != 200 || got["lsp"].(map[string]any)["enabled"] != false || got["status"] == nil {
		t.Fatalf("GET /wunder/admin/lsp with lsp off: %d %v", code, got)
	}
	on := `{"lsp":{"enabled":true,"servers":[{"id":"stand-in","command":["cat"],"extensions":[".txt"]}]}}`
	if code, got = adminDo(t, s, "POST", "/wunder/admin/lsp", on); code != 200 {
		t.Fatalf("POST lsp on: %d %v", code, got)
	}
	if !hasName(toolNames(t, s, "alice"), "lsp") {
		t.Errorf("the lsp tool is not offered after lsp was turned on: %v", toolNames(t, s, "alice"))
	}
	code, got = adminDo(t, s, "GET", "/wunder/admin/lsp", "")
	if code != 200 || !strings.Contains(mustJSON(got["status"]), `"stand-in"`) {
		t.Errorf("GET /wunder/admin/lsp after the change: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/lsp", `{"lsp":{"enabled":true,"timeout_s":0}}`); code != 400 || !strings.Contains(mustJSON(got["errors"]), "lsp.timeout_s") {
		t.Errorf("an invalid lsp change: %d %v", code, got)
	}
	if code, got = adminDo(t, s, "POST", "/wunder/admin/lsp", `{"lsp":{"enabled":false}}`); code != 200 {
		t.Fatalf("POST lsp off: %d %v", code, got)
	}
	if hasName(toolNames(t, s, "alice"), "lsp") {
		t.Error("the lsp tool is still offered after lsp was turned off")
	}
	if code, _ := adminDo(t, s, "POST", "/wunder/admin/lsp/test", `{"server":"stand-in"}`); code != 503 {
		t.Errorf("lsp/test with lsp off: %d, want 503", code)
	}
}
