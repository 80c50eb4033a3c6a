package config_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// Every secret the schema holds is masked by Redacted, whatever shape it
// has (a string, a map of header values, a field of a list item), in the
// struct, in Marshal's YAML and in what the admin API shows (SectionValue).
func TestRedactedEverySecret(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
security:
  api_key: s-admin
llm:
  models:
    gpt: {model: m, api_key: s-llm}
storage:
  postgres: {dsn: "host=db user=u password=s-pg dbname=w"}
observability:
  otlp:
    endpoint: http://collector:4318
    headers: {x-api-key: s-otlp, x-team: s-team}
mcp:
  servers:
    - {name: fs, url: "http://127.0.0.1:9/mcp", bearer_token: s-mcp}
a2a:
  services:
    - {name: peer, endpoint: "http://127.0.0.1:9", bearer_token: s-a2a}
knowledge:
  embeddings: {base_url: "http://127.0.0.1:9/v1", model: e, api_key: s-embed}
`}, nil)
	secrets := []string{"s-admin", "s-llm", "s-pg", "s-otlp", "s-team", "s-mcp", "s-a2a", "s-embed"}
	r := c.Redacted()
	out, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(out), s) {
			t.Errorf("Redacted().Marshal() shows %q", s)
		}
	}
	for _, section := range []string{"security", "llm", "storage", "observability", "mcp", "a2a", "knowledge"} {
		v, err := r.SectionValue(section)
		if err != nil {
			t.Fatalf("SectionValue(%s): %v", section, err)
		}
		b, _ := json.Marshal(v)
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("SectionValue(%s) of the redacted config shows %q: %s", section, s, b)
			}
		}
	}
	for name, got := range map[string]string{
		"security.api_key":                  r.Security.APIKey,
		"llm.models.gpt.api_key":            r.LLM.Models["gpt"].APIKey,
		"observability.otlp.headers.x-team": r.Observability.OTLP.Headers["x-team"],
		"mcp.servers[0].bearer_token":       r.MCP.Servers[0].BearerToken,
		"a2a.services[0].bearer_token":      r.A2A.Services[0].BearerToken,
		"knowledge.embeddings.api_key":      r.Knowledge.Embeddings.APIKey,
	} {
		if got != config.Mask {
			t.Errorf("redacted %s = %q; want the mask", name, got)
		}
	}
	// Only values are masked: the header's name is kept, and the original's
	// map is not the redacted one's.
	if _, ok := r.Observability.OTLP.Headers["x-api-key"]; !ok {
		t.Errorf("redacted otlp headers lost their names: %v", r.Observability.OTLP.Headers)
	}
	if c.Observability.OTLP.Headers["x-api-key"] != "s-otlp" || c.MCP.Servers[0].BearerToken != "s-mcp" {
		t.Error("Redacted changed the original's headers or list items")
	}
}

// Every field of the schema whose name says it holds a credential carries
// a secret tag, so a new one cannot be added without Redacted masking it.
// Header maps and environments may hold credentials too; which of them are
// masked is listed here, so a change to that is a decision, not an
// accident.
func TestSecretFieldsTagged(t *testing.T) {
	t.Parallel()
	credential := []string{"api_key", "token", "password", "secret", "dsn"}
	// Maps of strings shown unmasked today. An MCP server's or A2A
	// service's headers and a server's environment may hold credentials;
	// masking them would change what the admin API shows. A2A tenants
	// map names to user ids: no credential.
	unmasked := []string{
		".i18n.aliases", ".mcp.servers.env", ".mcp.servers.headers",
		".a2a.services.headers", ".lsp.servers.env", ".a2a.server.tenants",
	}
	var tagged, untaggedMaps []string
	var walk func(rt reflect.Type, path string)
	seen := map[reflect.Type]bool{}
	walk = func(rt reflect.Type, path string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || (rt.Kind() == reflect.Map && rt.Elem().Kind() != reflect.String) {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || seen[rt] {
			return
		}
		seen[rt] = true
		for i := range rt.NumField() {
			f := rt.Field(i)
			name := strings.Split(f.Tag.Get("yaml"), ",")[0]
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			p := path + "." + name
			secret := f.Tag.Get("secret")
			if secret != "" {
				tagged = append(tagged, p)
			}
			k := f.Type.Kind()
			if k == reflect.String {
				for _, w := range credential {
					if strings.Contains(name, w) && secret == "" {
						t.Errorf("%s looks like a credential but has no secret tag", p)
					}
				}
			}
			if k == reflect.Map && f.Type.Elem().Kind() == reflect.String && secret == "" {
				untaggedMaps = append(untaggedMaps, p)
			}
			walk(f.Type, p)
		}
	}
	walk(reflect.TypeOf(config.Config{}), "")
	slices.Sort(tagged)
	wantTagged := []string{
		".a2a.server.card_signing_key", ".a2a.services.bearer_token", ".knowledge.embeddings.api_key", ".llm.models.api_key",
		".mcp.servers.bearer_token", ".observability.otlp.headers", ".security.api_key", ".storage.postgres.dsn",
	}
	if !slices.Equal(tagged, wantTagged) {
		t.Errorf("secret fields = %q; want %q", tagged, wantTagged)
	}
	slices.Sort(untaggedMaps)
	slices.Sort(unmasked)
	if !slices.Equal(untaggedMaps, unmasked) {
		t.Errorf("string maps shown unmasked = %q; want %q", untaggedMaps, unmasked)
	}
}

// A masked secret posted back through SetOverride keeps the value the files
// had, inside a map too (observability.otlp.headers), while a new header
// beside it is written as posted.
func TestSetOverrideKeepsMaskedHeader(t *testing.T) {
	t.Parallel()
	base := "observability:\n  otlp:\n    endpoint: http://c:4318\n    headers: {x-api-key: \"${OTLP_KEY}\"}\n"
	opts := config.LoadOptions{ReadFile: files{basePath: base}.read, LookupEnv: env{"OTLP_KEY": "k-env"}.lookup}
	merged, err := config.MergedYAML(opts)
	if err != nil {
		t.Fatal(err)
	}
	posted := map[string]any{"endpoint": "http://c:4318", "headers": map[string]any{"x-api-key": config.Mask, "x-new": "v$1"}}
	out, err := config.SetOverride(nil, "observability.otlp", posted, merged, 1)
	if err != nil {
		t.Fatal(err)
	}
	opts.Override = out
	c, err := config.Load(opts)
	if err != nil {
		t.Fatalf("Load with the written override: %v\n%s", err, out)
	}
	if got := c.Observability.OTLP.Headers; got["x-api-key"] != "k-env" || got["x-new"] != "v$1" {
		t.Errorf("headers = %v; want the kept ${OTLP_KEY} (k-env) and the literal v$1\n%s", got, out)
	}
}

// Marshal's output loads back to the same values even where they hold a
// $ or look like ${VAR}: it is not expanded a second time.
func TestMarshalKeepsDollars(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
security:
  api_key: "a$$b"
llm:
  models:
    m: {provider: scripted, stop: ["$${HOME}", "$$"]}
`}, nil)
	if c.Security.APIKey != "a$b" || !slices.Equal(c.LLM.Models["m"].Stop, []string{"${HOME}", "$"}) {
		t.Fatalf("loaded %q %q", c.Security.APIKey, c.LLM.Models["m"].Stop)
	}
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again := mustLoad(t, files{basePath: string(out)}, env{"HOME": "/root"})
	if again.Security.APIKey != "a$b" || !slices.Equal(again.LLM.Models["m"].Stop, []string{"${HOME}", "$"}) {
		t.Errorf("after a round trip: %q %q\n%s", again.Security.APIKey, again.LLM.Models["m"].Stop, out)
	}
}
