package config_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/internal/config"
)

// richConfig sets something in every admin section, secrets included.
func richConfig(t *testing.T) *config.Config {
	t.Helper()
	return mustLoad(t, files{basePath: `
server: {max_body_bytes: 2000000, sse_heartbeat_s: 0}
cors: {allow_origins: ['https://app.example'], allow_credentials: true}
i18n: {default_language: zh, aliases: {zh-mo: zh}}
tools: {builtin: {enabled: [read_file, write_file]}}
llm:
  default: gpt
  models:
    gpt: {model: gpt-4o, api_key: sk-secret, temperature: 0.3, fallbacks: [ds], stop: ['</x>'], retry: {max_attempts: 5}}
    ds: {provider: deepseek, model: deepseek-chat, api_key: "${DS_KEY}", max_context: 64000, max_output: 4000}
mcp:
  servers:
    - {name: fs, transport: stdio, command: fs-server, args: [--root, /srv], env: {A: b}}
    - {name: web, url: 'https://mcp.example/mcp', bearer_token: web-secret, headers: {X-Team: t}, allow_tools: [search]}
a2a:
  services:
    - {name: research, endpoint: 'https://research.example', bearer_token: a2a-secret, version: '1.0', max_depth: 2}
lsp:
  enabled: true
  max_workers: 3
  servers:
    - {id: gopls, env: {GOFLAGS: -mod=mod}, initialization_options: '{"x": 1}'}
`}, env{"DS_KEY": "ds-secret"})
}

// jsonRoundTrip is v as the admin API stores and reads it back.
func jsonRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// adminKeys are the sections the admin API reads with SectionValue and
// writes with WithSection (cmd/wunder/admin_config.go).
var adminKeys = []string{"llm", "mcp.servers", "a2a.services", "tools.builtin", "lsp",
	"server.max_body_bytes", "server.sse_heartbeat_s", "cors", "i18n"}

// What an admin reads is what an admin can write back unchanged: a
// section's value, and its redacted value (masks keep the secrets),
// through JSON, give the same configuration. Another replica applies a
// stored section this way, so anything lost here is lost there.
func TestSectionValueRoundTrip(t *testing.T) {
	t.Parallel()
	c := richConfig(t)
	red := c.Redacted()
	for _, key := range adminKeys {
		for name, from := range map[string]*config.Config{"plain": c, "redacted": red} {
			v, err := from.SectionValue(key)
			if err != nil {
				t.Fatalf("%s: SectionValue: %v", key, err)
			}
			next, err := c.WithSection(key, jsonRoundTrip(t, v))
			if err != nil {
				t.Errorf("%s (%s): WithSection of its own value: %v", key, name, err)
				continue
			}
			if diff := cmp.Diff(c, next, cmpOpts); diff != "" {
				t.Errorf("%s (%s): writing back the value read changed the configuration (-before +after):\n%s", key, name, diff)
			}
		}
	}
	// The defaults too: GET then POST of an untouched section.
	d := mustLoad(t, nil, nil)
	for _, key := range adminKeys {
		v, _ := d.SectionValue(key)
		if _, err := d.WithSection(key, jsonRoundTrip(t, v)); err != nil {
			t.Errorf("%s: the default value written back: %v", key, err)
		}
	}
	// Numbers as a JSON client sends them: whole numbers fit integer
	// keys whatever their size or spelling; fractions fit float keys.
	for _, tc := range []struct {
		key   string
		value any
	}{
		{"server.max_body_bytes", float64(1 << 20)},
		{"server.max_body_bytes", json.Number("2e6")},
		{"server.max_body_bytes", json.Number("4000000000")},
		{"llm", map[string]any{"models": map[string]any{"m": map[string]any{"model": "x", "max_context": 128000.0, "temperature": 0.7}}}},
	} {
		if _, err := c.WithSection(tc.key, tc.value); err != nil {
			t.Errorf("WithSection(%s, %v): %v", tc.key, tc.value, err)
		}
	}
	// The redacted values show no secret.
	for _, key := range []string{"llm", "mcp.servers", "a2a.services"} {
		v, _ := red.SectionValue(key)
		b, _ := json.Marshal(v)
		for _, secret := range []string{"sk-secret", "ds-secret", "web-secret", "a2a-secret"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("redacted %s shows %q: %s", key, secret, b)
			}
		}
	}
}

// SectionValue gives JSON-ready values: an empty list is [] (never null),
// numbers are float64.
func TestSectionValueShapes(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if v, err := c.SectionValue("a2a.services"); err != nil || v == nil {
		t.Errorf("empty services = %#v, %v; want []", v, err)
	} else if l, ok := v.([]any); !ok || len(l) != 0 {
		t.Errorf("empty services = %#v, want []", v)
	}
	if v, _ := c.SectionValue("server.max_body_bytes"); v != float64(1<<20) {
		t.Errorf("max_body_bytes = %#v, want float64 1048576", v)
	}
	v, _ := c.SectionValue("lsp")
	if m, ok := v.(map[string]any); !ok || m["max_workers"] != float64(8) || m["enabled"] != false {
		t.Errorf("lsp = %#v", v)
	}
}

// WithSection starts the section from its defaults, as Load does: a key
// the value leaves out is the default, not the running value; a masked
// secret with nothing running behind it stays empty; the problems are
// field errors with their paths.
func TestWithSectionStartsFromDefaults(t *testing.T) {
	t.Parallel()
	c := richConfig(t)
	next, err := c.WithSection("lsp", map[string]any{"enabled": true})
	if err != nil {
		t.Fatal(err)
	}
	if next.LSP.MaxWorkers != 8 || len(next.LSP.Servers) != 0 || !next.LSP.Enabled {
		t.Errorf("lsp after writing only enabled = %+v, want the defaults for the rest", next.LSP)
	}
	if c.LSP.MaxWorkers != 3 {
		t.Errorf("WithSection changed the original: %+v", c.LSP)
	}

	next, err = c.WithSection("a2a.services", []any{map[string]any{"name": "new", "endpoint": "http://n", "bearer_token": config.Mask}})
	if err != nil {
		t.Fatal(err)
	}
	if s := next.A2A.Services; len(s) != 1 || s[0].BearerToken != "" || !s[0].Enabled || s[0].MaxDepth != 3 {
		t.Errorf("a new service with a masked token = %+v, want no token and the entry's defaults", s)
	}

	for _, tc := range []struct {
		key   string
		value any
		want  string
	}{
		{"nope", nil, "config: no section nope"},
		{"server.max_body_bytes.x", nil, "config: server.max_body_bytes.x is not a section"},
		{"server.max_body_bytes", "big", `server.max_body_bytes: expected an integer, got "big"`},
		{"server.max_body_bytes", float64(0), "server.max_body_bytes: must be at least 1, got 0"},
		{"mcp.servers", []any{map[string]any{"name": "a b", "url": "http://x"}}, "mcp.servers[0].name: must be 1-64"},
		{"cors", map[string]any{"allow_origins": []any{"*"}, "allow_credentials": true}, "cors.allow_credentials: cannot be true"},
		{"llm", map[string]any{"models": map[string]any{"gpt": map[string]any{"model": "m"}}, "default": "ds"}, `llm.default: no model named "ds" (have gpt)`},
		{"llm", map[string]any{"models": map[string]any{}, "deafult": "x"}, "llm.deafult: unknown key (did you mean default?)"},
	} {
		_, err := c.WithSection(tc.key, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithSection(%s, %v) = %v, want %q", tc.key, tc.value, err, tc.want)
		}
	}
	// Problems of a section are field errors an API can report one by one.
	_, err = c.WithSection("mcp.servers", []any{map[string]any{"name": "", "transport": "smoke"}})
	var paths []string
	for _, p := range config.Problems(err) {
		paths = append(paths, p.Path)
	}
	if want := "mcp.servers[0].name mcp.servers[0].transport"; strings.Join(paths, " ") != want {
		t.Errorf("problem paths = %q, want %q", paths, want)
	}
}

// SetOverride replaces the section at its key and keeps the rest of the
// override, comments included; the revision header is rewritten, not
// stacked; a parent that is not a mapping becomes one.
func TestSetOverrideKeepsTheRest(t *testing.T) {
	t.Parallel()
	old := "# wunder override revision: 4\nserver:\n  port: 9100\nmcp:\n  timeout_s: 30\n  servers:\n    - {name: a, url: 'http://a'}\nlsp: off\n"
	out, err := config.SetOverride([]byte(old), "mcp.servers", []any{}, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if config.OverrideRevision(out) != 5 {
		t.Errorf("header of\n%s\nwant revision 5", out)
	}
	out, err = config.SetOverride(out, "lsp.max_workers", json.Number("2"), nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrites do not stack old headers; an admin's own note stays.
	out, err = config.SetOverride([]byte(strings.Replace(string(out), "server:", "# keep: port for the proxy\nserver:", 1)), "lsp.enabled", true, nil, 7)
	if err != nil {
		t.Fatal(err)
	}
	if config.OverrideRevision(out) != 7 || strings.Count(string(out), "revision") != 1 || strings.Count(string(out), "Written by") != 1 ||
		!strings.Contains(string(out), "# keep: port for the proxy") {
		t.Errorf("after three writes:\n%s\nwant one header, at revision 7, and the note kept", out)
	}
	c := mustLoad(t, files{overridePath: string(out)}, nil)
	if c.Server.Port != 9100 || c.MCP.TimeoutSeconds != 30 || len(c.MCP.Servers) != 0 || c.LSP.MaxWorkers != 2 || !c.LSP.Enabled {
		t.Errorf("after two edits: port %d, mcp timeout %d, servers %v, lsp workers %d\n%s",
			c.Server.Port, c.MCP.TimeoutSeconds, c.MCP.Servers, c.LSP.MaxWorkers, out)
	}
}

// A masked secret keeps the running value of the list item with the same
// name, wherever it moved; an item the running list has not loses it.
func TestSetOverrideMasksFollowNames(t *testing.T) {
	t.Parallel()
	base := "a2a:\n  services:\n    - {name: one, endpoint: 'http://1', bearer_token: tok-1}\n    - {name: two, endpoint: 'http://2', bearer_token: tok-2}\n"
	opts := config.LoadOptions{ReadFile: files{basePath: base}.read, LookupEnv: env{}.lookup}
	merged, err := config.MergedYAML(opts)
	if err != nil {
		t.Fatal(err)
	}
	posted := jsonRoundTrip(t, []any{
		map[string]any{"name": "two", "endpoint": "http://2", "bearer_token": config.Mask},
		map[string]any{"name": "three", "endpoint": "http://3", "bearer_token": config.Mask},
		map[string]any{"name": "one", "endpoint": "http://1", "bearer_token": config.Mask},
	})
	out, err := config.SetOverride(nil, "a2a.services", posted, merged, 1)
	if err != nil {
		t.Fatal(err)
	}
	opts.Override = out
	c, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.A2A.Services {
		got = append(got, s.Name+"="+s.BearerToken)
	}
	if want := "two=tok-2 three= one=tok-1"; strings.Join(got, " ") != want {
		t.Errorf("services = %q, want %q", got, want)
	}
}

// Values SetOverride cannot write, and override content it cannot edit,
// are errors; numbers keep their kind.
func TestSetOverrideValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		override string
		value    any
		want     string
	}{
		{"", json.Number("1e400"), "is not a number YAML can hold"},
		{"", 7, "cannot write a int"},
		{"- a\n- b\n", []any{}, "the override file is not a mapping"},
		{"server: [\n", []any{}, "the override file is not valid YAML"},
	} {
		if _, err := config.SetOverride([]byte(tc.override), "a2a.services", tc.value, nil, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetOverride(%q, %#v) = %v, want %q", tc.override, tc.value, err, tc.want)
		}
	}
	out, err := config.SetOverride(nil, "server", map[string]any{"port": json.Number("9001"), "max_body_bytes": 2048.0}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, files{overridePath: string(out)}, nil)
	if c.Server.Port != 9001 || c.Server.MaxBodyBytes != 2048 {
		t.Errorf("server from\n%s\n= %+v", out, c.Server)
	}
}

// The revision is the number of the first line's header; anything else is
// revision 0.
func TestOverrideRevision(t *testing.T) {
	t.Parallel()
	for content, want := range map[string]int64{
		"":                                       0,
		"server: {}\n":                           0,
		"# wunder override revision: 12\nx: 1\n": 12,
		"# wunder override revision: 12\r\nx: 1\n": 12,
		"# wunder override revision: 7":            7,
		"# wunder override revision: -3\n":         0,
		"# wunder override revision: seven\n":      0,
		"x: 1\n# wunder override revision: 9\n":    0,
	} {
		if got := config.OverrideRevision([]byte(content)); got != want {
			t.Errorf("OverrideRevision(%q) = %d, want %d", content, got, want)
		}
	}
}

// An override given to Load in memory is used instead of the file; an
// empty one means none, even when the file exists.
func TestLoadWithOverrideContent(t *testing.T) {
	t.Parallel()
	f := files{overridePath: "server: {port: 9100}\n"}
	for content, want := range map[string]int{"server: {port: 9200}\n": 9200, " \n": 8000} {
		c, err := config.Load(config.LoadOptions{ReadFile: f.read, LookupEnv: env{}.lookup, Override: []byte(content)})
		if err != nil || c.Server.Port != want {
			t.Errorf("Override %q: port %v, %v; want %d", content, c, err, want)
		}
	}
}
