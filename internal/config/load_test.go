package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wunder/wunder/internal/config"
)

// Paths Load looks at by default (data_dir ./data).
var (
	basePath     = "config/wunder.yaml"
	overridePath = filepath.Join("data", "config", "wunder.override.yaml")
)

// env is a fake environment; nil means empty.
type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// files is a fake file system for LoadOptions.ReadFile.
type files map[string]string

func (f files) read(name string) ([]byte, error) {
	s, ok := f[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

// load runs Load over fake files and environment.
func load(t *testing.T, f files, e env) (*config.Config, error) {
	t.Helper()
	return config.Load(config.LoadOptions{ReadFile: f.read, LookupEnv: e.lookup})
}

// mustLoad fails the test when Load does.
func mustLoad(t *testing.T, f files, e env) *config.Config {
	t.Helper()
	c, err := load(t, f, e)
	if err != nil {
		t.Fatalf("Load() error:\n%v", err)
	}
	return c
}

// derived is Default() after Derive, what Load returns with no input.
func derived() *config.Config {
	c := config.Default()
	c.Derive()
	return c
}

var cmpOpts = cmp.Options{cmpopts.IgnoreUnexported(config.Config{}), cmpopts.EquateEmpty()}

func TestDefaultIsValid(t *testing.T) {
	t.Parallel()
	if err := config.Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v, want nil", err)
	}
	if err := derived().Validate(); err != nil {
		t.Errorf("Default()+Derive().Validate() = %v, want nil", err)
	}
}

func TestLoadDefaultsOnly(t *testing.T) {
	t.Parallel()
	got := mustLoad(t, nil, nil)
	if diff := cmp.Diff(derived(), got, cmpOpts); diff != "" {
		t.Errorf("Load() with no file and no env differs from Default() (-want +got):\n%s", diff)
	}
	if got.Workspace.Root != filepath.Join("data", "workspaces") || got.Storage.DBPath != filepath.Join("data", "wunder.db") {
		t.Errorf("derived paths = %q, %q", got.Workspace.Root, got.Storage.DBPath)
	}
	if got.Addr() != "127.0.0.1:8000" {
		t.Errorf("Addr() = %q, want 127.0.0.1:8000", got.Addr())
	}
	if w := got.Warnings(); len(w) != 0 {
		t.Errorf("Warnings() = %q, want none", w)
	}
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
data_dir: /srv/wunder
server:
  port: 9000
  public_url: https://agents.example.com
security:
  allow_commands: [ls]
llm:
  models:
    gpt:
      base_url: https://api.openai.com/v1
      model: gpt-4o-mini
      temperature: 0.2
      stop: ["</done>"]
      retry: {max_attempts: 5}
`}, nil)
	want := derived()
	want.DataDir = "/srv/wunder"
	want.Workspace.Root = "/srv/wunder/workspaces"
	want.Storage.DBPath = "/srv/wunder/wunder.db"
	want.Server.Port = 9000
	want.Server.PublicURL = "https://agents.example.com"
	want.Security.AllowCommands = []string{"ls"}
	m := config.NewModel()
	m.BaseURL = "https://api.openai.com/v1"
	m.Model = "gpt-4o-mini"
	temp := 0.2
	m.Temperature = &temp
	m.Stop = []string{"</done>"}
	m.Retry.MaxAttempts = 5 // the other retry keys keep their defaults
	want.LLM.Models = map[string]config.Model{"gpt": m}
	if diff := cmp.Diff(want, c, cmpOpts); diff != "" {
		t.Errorf("Load() (-want +got):\n%s", diff)
	}
	if got := c.DefaultModelName(); got != "gpt" {
		t.Errorf("DefaultModelName() = %q, want the only model gpt", got)
	}
}

func TestLoadPaths(t *testing.T) {
	t.Parallel()
	f := files{"custom.yaml": "server: {port: 7001}\n", basePath: "server: {port: 7002}\n"}

	c, err := config.Load(config.LoadOptions{Path: "custom.yaml", ReadFile: f.read, LookupEnv: env{}.lookup})
	if err != nil || c.Server.Port != 7001 {
		t.Errorf("Path: port = %v, err = %v; want 7001", c, err)
	}
	c, err = config.Load(config.LoadOptions{ReadFile: f.read, LookupEnv: env{"WUNDER_CONFIG_PATH": "custom.yaml"}.lookup})
	if err != nil || c.Server.Port != 7001 {
		t.Errorf("WUNDER_CONFIG_PATH: err = %v; want port 7001", err)
	}
	c, err = config.Load(config.LoadOptions{ReadFile: f.read, LookupEnv: env{}.lookup})
	if err != nil || c.Server.Port != 7002 {
		t.Errorf("default base file: err = %v; want port 7002", err)
	}
	for _, opts := range []config.LoadOptions{
		{Path: "missing.yaml"},
		{LookupEnv: env{"WUNDER_CONFIG_PATH": "missing.yaml"}.lookup},
		{OverridePath: "missing.yaml"},
	} {
		opts.ReadFile = f.read
		if opts.LookupEnv == nil {
			opts.LookupEnv = env{}.lookup
		}
		_, err := config.Load(opts)
		if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
			t.Errorf("Load(%+v) error = %v, want one naming missing.yaml", opts, err)
		}
	}
}

func TestOverrideMerge(t *testing.T) {
	t.Parallel()
	base := `
server:
  port: 9000
  host: 127.0.0.1
cors:
  allow_origins: [https://a.example, https://b.example]
llm:
  default: gpt
  models:
    gpt: {model: gpt-4o, max_rounds: 4}
    ds: {provider: deepseek, model: deepseek-chat}
`
	override := `
server:
  port: 9100              # scalar replaces; host stays
cors:
  allow_origins: [https://c.example]   # sequence replaces
llm:
  models:
    gpt: {max_rounds: 12} # map entry merges key by key
    qwen: {provider: qwen, model: qwen-max}
`
	check := func(t *testing.T, c *config.Config) {
		t.Helper()
		if c.Server.Port != 9100 || c.Server.Host != "127.0.0.1" {
			t.Errorf("server = %s:%d, want 127.0.0.1:9100", c.Server.Host, c.Server.Port)
		}
		if diff := cmp.Diff([]string{"https://c.example"}, c.CORS.AllowOrigins); diff != "" {
			t.Errorf("cors.allow_origins (-want +got):\n%s", diff)
		}
		gpt := c.LLM.Models["gpt"]
		if gpt.Model != "gpt-4o" || gpt.MaxRounds != 12 {
			t.Errorf("gpt = model %q max_rounds %d, want gpt-4o 12", gpt.Model, gpt.MaxRounds)
		}
		if got := c.EnabledModelNames(); !cmp.Equal(got, []string{"ds", "gpt", "qwen"}) {
			t.Errorf("models = %q", got)
		}
	}
	t.Run("default place", func(t *testing.T) {
		check(t, mustLoad(t, files{basePath: base, overridePath: override}, nil))
	})
	t.Run("explicit path", func(t *testing.T) {
		f := files{basePath: base, "ov.yaml": override}
		c, err := config.Load(config.LoadOptions{OverridePath: "ov.yaml", ReadFile: f.read, LookupEnv: env{}.lookup})
		if err != nil {
			t.Fatal(err)
		}
		check(t, c)
	})
	t.Run("under data_dir of the base file", func(t *testing.T) {
		f := files{basePath: "data_dir: ${D:-/var/w}\n" + base, "/var/w/config/wunder.override.yaml": override}
		check(t, mustLoad(t, f, nil))
	})
	t.Run("under WUNDER_DATA_DIR", func(t *testing.T) {
		f := files{basePath: "data_dir: /var/w\n" + base, "/env/config/wunder.override.yaml": override}
		c := mustLoad(t, f, env{"WUNDER_DATA_DIR": "/env"})
		check(t, c)
		if c.DataDir != "/env" || c.Storage.DBPath != "/env/wunder.db" {
			t.Errorf("data_dir = %q, db_path = %q", c.DataDir, c.Storage.DBPath)
		}
	})
	t.Run("null resets to the default", func(t *testing.T) {
		c := mustLoad(t, files{basePath: base, overridePath: "server: {port: ~}\nllm: {models: {gpt: {max_rounds: null}}}\n"}, nil)
		if c.Server.Port != 8000 || c.LLM.Models["gpt"].MaxRounds != 8 {
			t.Errorf("port %d, max_rounds %d; want the defaults 8000, 8", c.Server.Port, c.LLM.Models["gpt"].MaxRounds)
		}
	})
}

func TestExpansion(t *testing.T) {
	t.Parallel()
	e := env{"KEY": "sk-1", "EMPTY": "", "PORT": "9001", "COLON": `a: "b" # c`}
	tests := []struct {
		name, yaml string
		want       func(*config.Config) string // the value under test
		wantValue  string
	}{
		{"set", "security:\n  api_key: ${KEY}", apiKey, "sk-1"},
		{"default unused", "security:\n  api_key: '${KEY:-x}'", apiKey, "sk-1"},
		{"default for unset", "security:\n  api_key: ${NOPE:-fallback}", apiKey, "fallback"},
		{"default for empty", "security:\n  api_key: ${EMPTY:-fallback}", apiKey, "fallback"},
		{"empty default", "security:\n  api_key: \"${NOPE:-}\"", apiKey, ""},
		{"nested default", "security:\n  api_key: ${NOPE:-${KEY}}", apiKey, "sk-1"},
		{"unset inside unused default", "security:\n  api_key: ${KEY:-${NOPE}}", apiKey, "sk-1"},
		{"dollar escape", "security:\n  api_key: pa$$word", apiKey, "pa$word"},
		{"escaped reference", "security:\n  api_key: $${KEY}", apiKey, "${KEY}"},
		{"lone dollar kept", "security:\n  api_key: a$b$", apiKey, "a$b$"},
		{"text around", "security:\n  api_key: 'x-${KEY}-y'", apiKey, "x-sk-1-y"},
		{"colons and quotes stay text", "security:\n  api_key: ${COLON}", apiKey, `a: "b" # c`},
		{"int from env", "server:\n  port: ${PORT}", port, "9001"},
		{"int default", "server:\n  port: ${NOPE:-9002}", port, "9002"},
		{"quoted int", "server:\n  port: \"${NOPE:-9003}\"", port, "9003"},
		{"empty plain is null: default kept", "server:\n  port: ${NOPE:-}", port, "8000"},
		{"in a list", "security: {allow_commands: [ls, '${NOPE:-git}']}", func(c *config.Config) string {
			return strings.Join(c.Security.AllowCommands, ",")
		}, "ls,git"},
		{"keys are not expanded", "llm: {models: {'${KEY}': {provider: scripted}}}", func(c *config.Config) string {
			return strings.Join(c.EnabledModelNames(), ",")
		}, "${KEY}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, files{basePath: tt.yaml}, e)
			if got := tt.want(c); got != tt.wantValue {
				t.Errorf("got %q, want %q", got, tt.wantValue)
			}
		})
	}
}

func TestExpansionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"unset", "llm:\n  models:\n    gpt:\n      model: m\n      api_key: ${OPENAI_KEY}\n",
			"config/wunder.yaml:5: llm.models.gpt.api_key: environment variable OPENAI_KEY is not set"},
		{"unset in list", "security:\n  allow_commands: [ls, '${TOOL}']\n",
			"config/wunder.yaml:2: security.allow_commands[1]: environment variable TOOL is not set"},
		{"unterminated", "server:\n  host: '${HOST'", "server.host: unterminated ${"},
		{"unterminated default", "server:\n  host: '${HOST:-x'", "server.host: unterminated ${"},
		{"bad name", "server:\n  host: '${1X}'", "server.host: invalid variable name"},
		{"unsupported form", "server:\n  host: '${HOST:?no}'", "server.host: unsupported form ${HOST:"},
		{"unset int, no type error too", "server:\n  port: ${PORT}", "server.port: environment variable PORT is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, files{basePath: tt.yaml}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load() error = %v\nwant it to contain %q", err, tt.want)
			}
			if n := len(config.Problems(err)); n != 1 {
				t.Errorf("got %d problems, want 1:\n%v", n, err)
			}
		})
	}
}

func apiKey(c *config.Config) string { return c.Security.APIKey }

func port(c *config.Config) string { return strings.TrimPrefix(c.Addr(), "127.0.0.1:") }

func TestLoadFromDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := filepath.Join(dir, "wunder.yaml")
	data := filepath.Join(dir, "data")
	writeFile(t, base, "server:\n  port: 9000\n  host: 127.0.0.1\n")
	writeFile(t, filepath.Join(data, "config", "wunder.override.yaml"), "server:\n  port: 9001\n")
	c, err := config.Load(config.LoadOptions{Path: base, LookupEnv: env{"WUNDER_DATA_DIR": data}.lookup})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr() != "127.0.0.1:9001" || c.Storage.DBPath != filepath.Join(data, "wunder.db") {
		t.Errorf("Addr() = %s, db_path = %s", c.Addr(), c.Storage.DBPath)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
