package config_test

import (
	"math"
	"strings"
	"testing"
)

// The YAML shapes the loader refuses beyond TestSyntaxErrors and
// TestBadValues: each error names the file, the line where it has one, and
// the key.
func TestYAMLShapesRefused(t *testing.T) {
	t.Parallel()
	const m = "llm:\n  models:\n    m: {provider: scripted, "
	long := strings.Repeat("abcdefghij", 8)
	for _, tc := range []struct{ name, yaml, want string }{
		{"merge of a scalar", "server:\n  <<: 5\n", `config/wunder.yaml:2: server: a merge key (<<) takes a mapping, got "5"`},
		{"merge list with a scalar", "server:\n  <<: [{port: 9000}, 5]\n", `config/wunder.yaml:2: server: a merge key (<<) takes mappings, got "5"`},
		{"a sequence as a key", "? [a, b]\n: x\n", "config/wunder.yaml:1: keys must be plain strings, got a sequence"},
		{"a control character", "server:\n  host: \"\x01\"\n", "config/wunder.yaml: invalid YAML: control characters are not allowed"},
		{"an unclosed flow sequence", "server: [\n", "config/wunder.yaml:1: invalid YAML: did not find expected node content"},
		{"an empty second document", "server:\n  port: 8000\n---\n", "config/wunder.yaml:3: a second YAML document"},
		{"infinite temperature", m + "temperature: .inf}\n", "config/wunder.yaml:3: llm.models.m.temperature: must be between 0 and 2, got +Inf"},
		{"negative infinite temperature", m + "temperature: -.Inf}\n", "llm.models.m.temperature: must be between 0 and 2, got -Inf"},
		{"a mapping for a number", m + "temperature: {a: 1}}\n", "llm.models.m.temperature: expected a number, got a mapping"},
		{"a sequence for a boolean", "cors:\n  allow_credentials: [true]\n", "config/wunder.yaml:2: cors.allow_credentials: expected a boolean (true or false), got a sequence"},
		{"a mapping for an integer", "server:\n  port: {a: 1}\n", "server.port: expected an integer, got a mapping"},
		{"an exponent for an integer", "server:\n  port: 1e3\n", `server.port: expected an integer, got "1e3"`},
		{"a negative hex integer", "server:\n  port: -0x10\n", "server.port: must be between 1 and 65535, got -16"},
		{"a null in a list", "security:\n  allow_commands: [ls, null]\n", `security.allow_commands[1]: must be a non-empty word without spaces, got ""`},
		// A long value is cut in the message, so one bad line cannot flood
		// the log.
		{"a long value is cut", "storage:\n  backend: " + long + "\n", `got "` + long[:57] + `"...`},
		// An anchored section aliased under an unknown key is still unknown.
		{"an alias under an unknown key", "server: &s\n  port: 9000\nx: *s\n", "config/wunder.yaml:3: x: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := loadErr(t, tc.yaml)
			if !strings.Contains(got, tc.want) {
				t.Errorf("error =\n%s\nwant it to contain\n%s", got, tc.want)
			}
			if strings.Contains(tc.name, "long") && strings.Contains(got, long) {
				t.Errorf("the message holds the whole long value: %s", got)
			}
		})
	}
}

// The YAML shapes the loader accepts, and what they mean: null and empty
// are the default, numbers in every YAML 1.2 base, aliases as keys and as
// sections.
func TestYAMLShapesAccepted(t *testing.T) {
	t.Parallel()
	def := derived()
	for _, tc := range []struct{ name, yaml string }{
		{"an empty section", "server:\n"},
		{"a null section", "server: ~\n"},
		{"comments only", "# nothing here\n"},
		{"an empty document", "---\n"},
		{"null values", "server:\n  host: null\n  port: null\nsecurity:\n  allow_commands: null\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, files{basePath: tc.yaml}, nil)
			if c.Server.Port != def.Server.Port || c.Server.Host != def.Server.Host ||
				len(c.Security.AllowCommands) != len(def.Security.AllowCommands) {
				t.Errorf("server %s:%d, allow_commands %q; want the defaults %s:%d, %q",
					c.Server.Host, c.Server.Port, c.Security.AllowCommands, def.Server.Host, def.Server.Port, def.Security.AllowCommands)
			}
		})
	}
	c := mustLoad(t, files{basePath: `
x-key: &k per_user
x-server: &srv {port: 9001, max_body_bytes: 0b1000000000}
server: *srv
concurrency:
  *k : 3
  max_active_runs: 0o17
llm:
  models:
    m: {provider: scripted, temperature: 1_0e-1}
`}, nil)
	if c.Server.Port != 9001 || c.Server.MaxBodyBytes != 512 || c.Concurrency.MaxActiveRuns != 15 || c.Concurrency.PerUser != 3 {
		t.Errorf("port %d, body %d, runs %d, per user %d; want 9001, 512, 15, 3", c.Server.Port, c.Server.MaxBodyBytes, c.Concurrency.MaxActiveRuns, c.Concurrency.PerUser)
	}
	if tmp := *c.LLM.Models["m"].Temperature; math.Abs(tmp-1.0) > 1e-12 {
		t.Errorf("temperature 1_0e-1 = %v; want 1", tmp)
	}
}

// An alias used as a key resolves to its anchor's value, and a misspelt
// one is an unknown key with a suggestion like any other.
func TestAliasAsUnknownKey(t *testing.T) {
	t.Parallel()
	got := loadErr(t, "x-k: &k prot\nserver:\n  *k : 1\n")
	if !strings.Contains(got, "server.prot: unknown key (did you mean port?)") {
		t.Errorf("error = %s", got)
	}
}
