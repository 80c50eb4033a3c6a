package config_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
)

// loadErr loads yaml as the base file and returns the error text.
func loadErr(t *testing.T, yaml string) string {
	t.Helper()
	_, err := load(t, files{basePath: yaml}, nil)
	if err == nil {
		t.Fatalf("Load() succeeded, want an error for:\n%s", yaml)
	}
	return err.Error()
}

func TestUnknownKeys(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"top level, misspelt", "data_dri: x\n",
			"config/wunder.yaml:1: data_dri: unknown key (did you mean data_dir?)"},
		{"top level, belongs elsewhere", "\nport: 9000\n",
			"config/wunder.yaml:2: port: unknown key (did you mean server.port?)"},
		{"nested", "server:\n  host: localhost\n  prot: 1\n",
			"config/wunder.yaml:3: server.prot: unknown key (did you mean port?)"},
		{"two levels", "storage:\n  postgres:\n    dns: x\n",
			"config/wunder.yaml:3: storage.postgres.dns: unknown key (did you mean dsn?)"},
		{"inside a models entry", "llm:\n  models:\n    gpt:\n      model: m\n      tool_cal_mode: x\n",
			"config/wunder.yaml:5: llm.models.gpt.tool_cal_mode: unknown key (did you mean tool_call_mode?)"},
		{"inside a nested struct of an entry", "llm:\n  models:\n    gpt:\n      model: m\n      retry: {max_attempt: 2}\n",
			"config/wunder.yaml:5: llm.models.gpt.retry.max_attempt: unknown key (did you mean max_attempts?)"},
		{"no suggestion", "server:\n  zzzzzz: 1\n", "config/wunder.yaml:2: server.zzzzzz: unknown key"},
		{"model name with a dot is quoted", "llm:\n  models:\n    gpt-4.1:\n      model: m\n      modle: x\n",
			`config/wunder.yaml:5: llm.models."gpt-4.1".modle: unknown key (did you mean model?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); got != tt.want {
				t.Errorf("error =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// listSchema has a list of structs, as mcp.servers will.
type listSchema struct {
	Servers []struct {
		Name    string   `yaml:"name"`
		Command []string `yaml:"command"`
		Enabled bool     `yaml:"enabled"`
	} `yaml:"servers"`
}

func TestUnknownKeyInList(t *testing.T) {
	t.Parallel()
	var v listSchema
	err := config.DecodeInto("x.yaml", []byte("servers:\n  - name: a\n  - name: b\n    comand: [x]\n"), nil, &v)
	want := "x.yaml:4: servers[1].comand: unknown key (did you mean command?)"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
	if len(v.Servers) != 2 || v.Servers[1].Name != "b" {
		t.Errorf("decoded %+v, want the good keys kept", v)
	}
}

func TestBadValues(t *testing.T) {
	t.Parallel()
	const m = "llm:\n  models:\n    gpt:\n      model: m\n"
	tests := []struct{ name, yaml, want string }{
		// wrong YAML type
		{"string for int", "server:\n  port: abc\n", `config/wunder.yaml:2: server.port: expected an integer, got "abc"`},
		{"float for int", "server:\n  port: 80.5\n", `server.port: expected an integer, got "80.5"`},
		{"huge int", "server:\n  port: 99999999999999999999\n", `server.port: integer "99999999999999999999" is out of range`},
		{"list for int", "server:\n  port: [1]\n", "server.port: expected an integer, got a sequence"},
		{"bool", "cors:\n  allow_credentials: yes\n", `cors.allow_credentials: expected a boolean (true or false), got "yes"`},
		{"mapping for string", "server:\n  host: {a: b}\n", "server.host: expected a string, got a mapping"},
		{"scalar for list", "security:\n  allow_commands: ls\n", `security.allow_commands: expected a list, got "ls"`},
		{"scalar for section", "server: 8000\n", `config/wunder.yaml:1: server: expected a mapping, got "8000"`},
		{"scalar for models", "llm:\n  models: gpt\n", `llm.models: expected a mapping, got "gpt"`},
		{"string for float", m + "      temperature: warm\n", `llm.models.gpt.temperature: expected a number, got "warm"`},
		// ranges
		{"port range", "server:\n  port: 70000\n", "config/wunder.yaml:2: server.port: must be between 1 and 65535, got 70000"},
		{"negative", "concurrency:\n  queue_size: -1\n", "concurrency.queue_size: must be at least 0, got -1"},
		{"gc floor", "tuning:\n  gc_min_heap_mb: 9007199254740993\n", "config/wunder.yaml:2: tuning.gc_min_heap_mb: must be between 0 and 1048576, got 9007199254740993"},
		{"negative gc floor", "tuning:\n  gc_min_heap_mb: -1\n", "tuning.gc_min_heap_mb: must be between 0 and 1048576, got -1"},
		{"zero runs", "concurrency:\n  max_active_runs: 0\n", "concurrency.max_active_runs: must be at least 1, got 0"},
		{"temperature", m + "      temperature: 2.5\n", "config/wunder.yaml:5: llm.models.gpt.temperature: must be between 0 and 2, got 2.5"},
		{"nan temperature", m + "      temperature: .nan\n", "llm.models.gpt.temperature: must be between 0 and 2, got NaN"},
		{"max_rounds", m + "      max_rounds: 0\n", "llm.models.gpt.max_rounds: must be at least 1, got 0"},
		// enumerations
		{"tool_call_mode", m + "      tool_call_mode: xml\n", `config/wunder.yaml:5: llm.models.gpt.tool_call_mode: must be one of tool_call, function_call, got "xml"`},
		{"provider", m + "      provider: acme\n", `llm.models.gpt.provider: must be one of openai, local, deepseek, qwen, scripted, got "acme"`},
		{"backend", "storage:\n  backend: mysql\n", `storage.backend: must be one of auto, sqlite, postgres, got "mysql"`},
		{"log_format", "observability:\n  log_format: xml\n", `observability.log_format: must be one of text, json, got "xml"`},
		{"otlp protocol", "observability:\n  otlp:\n    protocol: thrift\n", `observability.otlp.protocol: must be one of http/protobuf, grpc, got "thrift"`},
		{"otlp endpoint", "observability:\n  otlp:\n    endpoint: collector:4318\n", `observability.otlp.endpoint: must be an http:// or https:// URL such as http://collector:4318, got "collector:4318"`},
		{"store span threshold", "observability:\n  store_span_threshold_ms: -1\n", `observability.store_span_threshold_ms: must be`},
		{"blocking event delay", "tuning:\n  blocking_event_delay_ms: 5000\n", `tuning.blocking_event_delay_ms: must be`},
		{"tool log delay", "tuning:\n  tool_log_delay_ms: -1\n", `tuning.tool_log_delay_ms: must be`},
		{"stream event delay", "tuning:\n  stream_event_delay_ms: -1\n", `tuning.stream_event_delay_ms: must be`},
		{"language", "i18n:\n  default_language: fr\n", `i18n.default_language: must be one of en, zh, got "fr"`},
		{"language not supported", "i18n:\n  supported_languages: [zh]\n", `i18n.default_language: must be one of supported_languages (zh), got "en"`},
		// required and cross-field
		{"model required", "llm:\n  models:\n    gpt:\n      provider: openai\n", "config/wunder.yaml:4: llm.models.gpt.model: required unless provider is scripted"},
		{"local needs base_url", "llm:\n  models:\n    l:\n      provider: local\n      model: m\n", "llm.models.l.base_url: required for provider local"},
		{"script only for scripted", m + "      script: x.txt\n", `llm.models.gpt.script: only used by provider scripted, provider is "openai"`},
		{"default names no model", m + "  default: gtp\n", `llm.default: no model named "gtp" (have gpt)`},
		{"default is disabled", m + "      enabled: false\n  default: gpt\n", `llm.default: model "gpt" is disabled`},
		{"several models, no default", "llm:\n  models:\n    a: {provider: scripted}\n    b: {provider: scripted}\n",
			"llm.default: must be set when more than one model is enabled (a, b)"},
		{"postgres needs dsn", "storage:\n  backend: postgres\n", "storage.postgres.dsn: required when storage.backend is postgres"},
		{"max timeout below timeout", "security:\n  command_timeout_s: 100\n  max_command_timeout_s: 50\n",
			"security.max_command_timeout_s: must be at least command_timeout_s (100), got 50"},
		{"backoff", m + "      retry: {initial_backoff_ms: 900, max_backoff_ms: 100}\n",
			"llm.models.gpt.retry.max_backoff_ms: must be at least initial_backoff_ms (900), got 100"},
		{"max_output vs context", m + "      max_context: 1000\n      max_output: 1000\n",
			"llm.models.gpt.max_output: must be less than max_context (1000), got 1000"},
		{"credentials with *", "cors:\n  allow_origins: ['*']\n  allow_credentials: true\n", `cors.allow_credentials: cannot be true when cors.allow_origins has "*"`},
		// formats
		{"base_url", m + "      base_url: api.openai.com\n", `llm.models.gpt.base_url: must be an absolute http:// or https:// URL, got "api.openai.com"`},
		{"public_url", "server:\n  public_url: ftp://x\n", "server.public_url: must be an absolute http:// or https:// URL"},
		{"origin with path", "cors:\n  allow_origins: [https://a.example/app]\n", "cors.allow_origins[0]: must be \"*\" or scheme://host[:port]"},
		{"method case", "cors:\n  allow_methods: [get]\n", `cors.allow_methods[0]: must be upper case, got "get"`},
		{"header token", "cors:\n  allow_headers: ['X Bad']\n", `cors.allow_headers[0]: must be an HTTP token, got "X Bad"`},
		{"bad glob", "security:\n  deny_globs: ['[']\n", `security.deny_globs[0]: invalid glob "["`},
		{"command with space", "security:\n  allow_commands: ['rm -rf']\n", `security.allow_commands[0]: must be a non-empty word without spaces, got "rm -rf"`},
		{"duplicate", "security:\n  allow_commands: [ls, ls]\n", `security.allow_commands[1]: "ls" is listed twice`},
		{"separator chars", "tools:\n  name_separator: '@'\n", `tools.name_separator: must be 1 to 4 of A-Z a-z 0-9 _ -, got "@"`},
		{"separator too short", "tools:\n  name_separator: '-'\n", `tools.name_separator: "-" alone is too common inside tool names`},
		{"separator letters", "tools:\n  name_separator: at\n", `tools.name_separator: must contain _ or -, got "at"`},
		{"drop final", "observability:\n  drop_event_types: [llm_output_delta, final]\n", `observability.drop_event_types[1]: "final" cannot be dropped`},
		{"empty data_dir", "data_dir: ''\n", "data_dir: must not be empty"},
		// identity (issue 35)
		{"token ttl above the maximum", "auth:\n  token_ttl_s: 7200\n  max_token_ttl_s: 3600\n", "auth.token_ttl_s: must be at most auth.max_token_ttl_s (3600), got 7200"},
		{"huge max token ttl", "auth:\n  max_token_ttl_s: 1000000000000000000\n", "auth.max_token_ttl_s: must be at most 3153600000 (a hundred years), got 1000000000000000000"},
		{"login burst", "auth:\n  login:\n    per_address: {burst: 0}\n", "auth.login.per_address.burst: must be at least 1, got 0"},
		{"negative login rate", "auth:\n  login:\n    per_user: {per_second: -1}\n", "auth.login.per_user.per_second: must not be negative"},
		{"hash memory below one hash", "auth:\n  password_hashing: {max_memory_mb: 32}\n", "auth.password_hashing.max_memory_mb: must be at least 64, got 32"},
		{"hash wait", "auth:\n  password_hashing: {max_wait_s: 600}\n", "auth.password_hashing.max_wait_s: must be at most 60, got 600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain\n%s", got, tt.want)
			}
		})
	}
}

func TestScalarForms(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server:
  port: 08000                  # decimal, not octal
  max_body_bytes: 0x10
  read_header_timeout_s: 1_0
  shutdown_timeout_s: "20"     # quoted numbers are numbers
  host: 127.0.0.1
cors:
  allow_credentials: True
llm:
  models:
    m: {provider: scripted, temperature: 1, max_output: +5}
`}, nil)
	got := []any{c.Server.Port, c.Server.MaxBodyBytes, c.Server.ReadHeaderTimeoutSeconds, c.Server.ShutdownTimeoutSeconds,
		c.CORS.AllowCredentials, *c.LLM.Models["m"].Temperature, c.LLM.Models["m"].MaxOutput}
	want := []any{8000, int64(16), 10, 20, true, 1.0, 5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"bad indentation", "server:\n  port: 1\n host: x\n", "config/wunder.yaml:2: invalid YAML: did not find expected key"}, // yaml.v3 names the line of the enclosing mapping
		{"mapping in scalar", "server:\n  host: a: b\n", "config/wunder.yaml:2: invalid YAML: mapping values are not allowed in this context"},
		{"unclosed quote", "server:\n  host: 'x\n", "config/wunder.yaml:2: invalid YAML: found unexpected end of stream"},
		{"tab", "server:\n\tport: 1\n", "config/wunder.yaml:2: invalid YAML: found character that cannot start any token"},
		{"two documents", "server: {}\n---\nserver: {}\n", "config/wunder.yaml:2: a second YAML document: a configuration file holds one"},
		{"top level list", "- a\n- b\n", "config/wunder.yaml:1: the top level must be a mapping, got a sequence"},
		{"duplicate key", "server:\n  port: 1\n  port: 2\n", "config/wunder.yaml:3: server.port: duplicate key (first at line 2)"},
		{"self-referencing alias", "a: &a\n  b: *a\n", "config/wunder.yaml:2: a.b: alias *a refers to its own anchor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain\n%s", got, tt.want)
			}
		})
	}
}

func TestSyntaxErrorInOverride(t *testing.T) {
	t.Parallel()
	_, err := load(t, files{overridePath: "server:\n  port: [\n"}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), overridePath+":") {
		t.Errorf("error = %v, want it to name %s", err, overridePath)
	}
}

func TestAllProblemsSorted(t *testing.T) {
	t.Parallel()
	_, err := load(t, files{basePath: `
server:
  port: 0
  prot: 1
llm:
  models:
    b: {model: m, tool_call_mode: x}
    a: {model: m, max_rounds: 0}
  default: a
data_dri: x
`}, env{"WUNDER_LOG_LEVEL": "loud"})
	probs := config.Problems(err)
	var paths []string
	for _, p := range probs {
		paths = append(paths, p.Path)
	}
	want := []string{"data_dri", "llm.models.a.max_rounds", "llm.models.b.tool_call_mode",
		"observability.log_level", "server.port", "server.prot"}
	if !slices.Equal(paths, want) {
		t.Errorf("problem paths = %q, want %q\n%v", paths, want, err)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != len(want) {
		t.Errorf("error has %d lines, want %d", n, len(want))
	}
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Path != "data_dri" || fe.Line != 10 || fe.Source != basePath {
		t.Errorf("errors.As first = %+v", fe)
	}
}

func TestDeprecatedKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server:
  max_active_sessions: 7
llm:
  models:
    gpt: {model: m, enable: false}
    ds: {model: m, provider: deepseek}
observability:
  monitor_payload_max_chars: 500
  monitor_drop_event_types: [llm_output_delta]
`}, nil)
	if c.Concurrency.MaxActiveRuns != 7 || c.LLM.Models["gpt"].Enabled || c.Observability.EventPayloadMaxChars != 500 ||
		!slices.Equal(c.Observability.DropEventTypes, []string{"llm_output_delta"}) {
		t.Errorf("deprecated keys not applied: %+v %+v %+v", c.Concurrency, c.LLM.Models["gpt"], c.Observability)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, want := range []string{
		"config/wunder.yaml:3: server.max_active_sessions is deprecated; use concurrency.max_active_runs",
		"llm.models.gpt.enable is deprecated; use llm.models.gpt.enabled",
		"observability.monitor_payload_max_chars is deprecated; use observability.event_payload_max_chars",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("Warnings() =\n%s\nwant %q", w, want)
		}
	}

	got := loadErr(t, "server:\n  max_active_sessions: 7\nconcurrency:\n  max_active_runs: 8\n")
	if want := "config/wunder.yaml:2: server.max_active_sessions: deprecated spelling of concurrency.max_active_runs, which is also set"; !strings.HasPrefix(got, want) {
		t.Errorf("both spellings: error = %s", got)
	}

	// Across files the override wins, whichever spelling each uses.
	c = mustLoad(t, files{basePath: "concurrency:\n  max_active_runs: 8\n", overridePath: "server:\n  max_active_sessions: 9\n"}, nil)
	if c.Concurrency.MaxActiveRuns != 9 {
		t.Errorf("max_active_runs = %d, want 9 from the override", c.Concurrency.MaxActiveRuns)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	t.Parallel()
	// Top-level x-* keys are ignored: a home for anchors.
	c := mustLoad(t, files{basePath: `
x-common: &common
  provider: deepseek
  timeout_s: 30
llm:
  default: a
  models:
    a: {<<: *common, model: a}
    b:
      <<: *common
      model: b
      timeout_s: 60
    c: &c
      provider: qwen
      model: c
    d: *c
`}, nil)
	a, b, d := c.LLM.Models["a"], c.LLM.Models["b"], c.LLM.Models["d"]
	if a.Provider != "deepseek" || a.TimeoutSeconds != 30 || a.MaxRounds != 8 {
		t.Errorf("a = %+v", a)
	}
	if b.Provider != "deepseek" || b.Model != "b" || b.TimeoutSeconds != 60 {
		t.Errorf("b = %+v, want its own keys to beat the merged ones", b)
	}
	if d.Provider != "qwen" || d.Model != "c" {
		t.Errorf("d = %+v", d)
	}
}

func TestAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
			i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	got := loadErr(t, b.String())
	if !strings.Contains(got, "more than 100000 YAML nodes after expanding aliases") {
		t.Errorf("error = %s", got)
	}
}

// The tuning section: a knob left out is unset (its component's default
// applies), 0 is none, anything else that many milliseconds; the old
// places of the keys still load, with a warning naming the new one.
func TestTuning(t *testing.T) {
	c := config.Default()
	if d, set := config.Millis(c.Tuning.BlockingEventDelayMS); set || d != 0 {
		t.Errorf("default blocking_event_delay_ms = %v set %v; want unset", d, set)
	}
	if got := c.Tuning.GCMinHeap(); got != config.DefaultGCMinHeapMB {
		t.Errorf("default gc_min_heap_mb = %d", got)
	}
	for ms, want := range map[int]time.Duration{0: 0, 1: time.Millisecond, 1000: time.Second} {
		if d, set := config.Millis(&ms); !set || d != want {
			t.Errorf("Millis(%d) = %v, %v; want %v, set", ms, d, set, want)
		}
	}
	cfg := mustLoad(t, files{basePath: "observability:\n  tool_log_delay_ms: 0\nserver:\n  gc_min_heap_mb: 0\n"}, nil)
	warnings := cfg.Warnings()
	if cfg.Tuning.ToolLogDelayMS == nil || *cfg.Tuning.ToolLogDelayMS != 0 || cfg.Tuning.GCMinHeap() != 0 {
		t.Errorf("the old keys did not set tuning: %+v", cfg.Tuning)
	}
	for _, key := range []string{"tuning.tool_log_delay_ms", "tuning.gc_min_heap_mb"} {
		if !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, key) }) {
			t.Errorf("no warning names %s: %q", key, warnings)
		}
	}
}
