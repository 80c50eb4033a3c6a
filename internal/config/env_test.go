package config_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

func TestEnvVars(t *testing.T) {
	t.Parallel()
	oneModel := files{basePath: "llm:\n  models:\n    gpt:\n      model: gpt-4o\n"}
	tests := []struct {
		name  string
		files files
		env   env
		got   func(*config.Config) string
		want  string
	}{
		{"WUNDER_HOST", nil, env{"WUNDER_HOST": "::1"}, func(c *config.Config) string { return c.Addr() }, "[::1]:8000"},
		{"WUNDER_PORT", nil, env{"WUNDER_PORT": "9090"}, func(c *config.Config) string { return c.Addr() }, "127.0.0.1:9090"},
		{"WUNDER_PORT beats the file", files{basePath: "server:\n  port: 9000\n"}, env{"WUNDER_PORT": "9091"},
			func(c *config.Config) string { return c.Addr() }, "127.0.0.1:9091"},
		{"WUNDER_DATA_DIR", nil, env{"WUNDER_DATA_DIR": "/d"},
			func(c *config.Config) string { return c.DataDir + " " + c.Workspace.Root + " " + c.Storage.DBPath },
			"/d /d/workspaces /d/wunder.db"},
		{"WUNDER_DATA_DIR keeps explicit paths", files{basePath: "workspace:\n  root: /ws\n"}, env{"WUNDER_DATA_DIR": "/d"},
			func(c *config.Config) string { return c.Workspace.Root + " " + c.Storage.DBPath }, "/ws /d/wunder.db"},
		{"WUNDER_API_KEY", nil, env{"WUNDER_API_KEY": "admin-key"}, func(c *config.Config) string { return c.Security.APIKey }, "admin-key"},
		{"WUNDER_POSTGRES_DSN", nil, env{"WUNDER_POSTGRES_DSN": "postgres://u@db/w"},
			func(c *config.Config) string { return c.Storage.Postgres.DSN + " " + c.Storage.EffectiveBackend() },
			"postgres://u@db/w postgres"},
		{"WUNDER_LOG_LEVEL", nil, env{"WUNDER_LOG_LEVEL": "DEBUG"}, func(c *config.Config) string { return c.Observability.LogLevel }, "debug"},
		{"WUNDER_PPROF", nil, env{"WUNDER_PPROF": "true"}, func(c *config.Config) string { return strconv.FormatBool(c.Observability.PProf) }, "true"},
		{"empty counts as unset", files{basePath: "server:\n  port: 9000\n"}, env{"WUNDER_PORT": ""},
			func(c *config.Config) string { return c.Addr() }, "127.0.0.1:9000"},
		{"WUNDER_LLM_MODEL", oneModel, env{"WUNDER_LLM_MODEL": "gpt-4.1"}, model("gpt", "model"), "gpt-4.1"},
		{"WUNDER_LLM_BASE_URL", oneModel, env{"WUNDER_LLM_BASE_URL": "http://llm:8000/v1"}, model("gpt", "base_url"), "http://llm:8000/v1"},
		{"WUNDER_LLM_API_KEY", oneModel, env{"WUNDER_LLM_API_KEY": "sk-2"}, model("gpt", "api_key"), "sk-2"},
		{"WUNDER_LLM_TOOL_CALL_MODE", oneModel, env{"WUNDER_LLM_TOOL_CALL_MODE": "function_call"}, model("gpt", "tool_call_mode"), "function_call"},
		{"WUNDER_LLM_PROVIDER", oneModel, env{"WUNDER_LLM_PROVIDER": "deepseek"}, model("gpt", "provider"), "deepseek"},
		{"WUNDER_LLM_* go to llm.default", files{basePath: `
llm:
  default: b
  models:
    a: {model: a}
    b: {model: b}
`}, env{"WUNDER_LLM_MODEL": "b2"}, model("b", "model"), "b2"},
		{"WUNDER_LLM_MODEL creates the default model", nil, env{"WUNDER_LLM_MODEL": "gpt-4o", "WUNDER_LLM_API_KEY": "sk"},
			func(c *config.Config) string {
				m := c.LLM.Models["default"]
				return c.DefaultModelName() + " " + m.Provider + " " + m.Model + " " + m.APIKey
			}, "default openai gpt-4o sk"},
		{"WUNDER_LLM_BASE_URL creates the default model", nil, env{"WUNDER_LLM_BASE_URL": "http://h/v1", "WUNDER_LLM_MODEL": "m", "WUNDER_LLM_PROVIDER": "local"},
			func(c *config.Config) string { return c.DefaultModelName() + " " + c.LLM.Models["default"].Provider }, "default local"},
		{"WUNDER_LLM_PROVIDER=scripted creates the default model", nil, env{"WUNDER_LLM_PROVIDER": "scripted"},
			func(c *config.Config) string {
				m := c.LLM.Models["default"]
				return c.DefaultModelName() + " " + m.Provider + " " + m.Script
			}, "default scripted "},
		{"a created model takes llm.default's name", files{basePath: "llm:\n  default: main\n"}, env{"WUNDER_LLM_MODEL": "m"},
			func(c *config.Config) string { return c.DefaultModelName() + " " + c.LLM.Models["main"].Model }, "main m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, tt.files, tt.env)
			if got := tt.got(c); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// model reads one field of model name.
func model(name, field string) func(*config.Config) string {
	return func(c *config.Config) string {
		m := c.LLM.Models[name]
		return map[string]string{
			"model": m.Model, "base_url": m.BaseURL, "api_key": m.APIKey,
			"tool_call_mode": m.ToolCallMode, "provider": m.Provider,
		}[field]
	}
}

func TestEnvVarsListed(t *testing.T) {
	t.Parallel()
	want := []string{"WUNDER_HOST", "WUNDER_PORT", "WUNDER_DATA_DIR", "WUNDER_API_KEY", "WUNDER_POSTGRES_DSN",
		"WUNDER_LLM_BASE_URL", "WUNDER_LLM_API_KEY", "WUNDER_LLM_MODEL", "WUNDER_LLM_TOOL_CALL_MODE",
		"WUNDER_LLM_PROVIDER", "WUNDER_LOG_LEVEL", "WUNDER_PPROF", "WUNDER_ALLOWED_HOSTS"}
	got := config.EnvVars()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("EnvVars() = %q, want %q", got, want)
	}
}

func TestEnvVarsIgnoredWithoutModel(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, nil, env{"WUNDER_LLM_API_KEY": "sk", "WUNDER_LLM_PROVIDER": "openai"})
	if len(c.LLM.Models) != 0 {
		t.Errorf("models = %v, want none", c.LLM.Models)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "WUNDER_LLM_PROVIDER, WUNDER_LLM_API_KEY ignored") {
		t.Errorf("Warnings() = %q, want one about the ignored variables", w)
	}
}

func TestEnvVarErrors(t *testing.T) {
	t.Parallel()
	twoModels := files{basePath: "llm:\n  models:\n    a: {model: a}\n    b: {model: b}\n"}
	tests := []struct {
		name  string
		files files
		env   env
		want  string
	}{
		{"not an integer", nil, env{"WUNDER_PORT": "abc"}, `WUNDER_PORT: server.port: expected an integer, got "abc"`},
		{"out of range", nil, env{"WUNDER_PORT": "70000"}, "WUNDER_PORT: server.port: must be between 1 and 65535, got 70000"},
		{"bad level", nil, env{"WUNDER_LOG_LEVEL": "loud"}, `WUNDER_LOG_LEVEL: observability.log_level: must be one of debug, info, warn, error, got "loud"`},
		{"bad mode", nil, env{"WUNDER_LLM_MODEL": "m", "WUNDER_LLM_TOOL_CALL_MODE": "xml"},
			`WUNDER_LLM_TOOL_CALL_MODE: llm.models.default.tool_call_mode: must be one of tool_call, function_call, got "xml"`},
		{"bad provider", nil, env{"WUNDER_LLM_PROVIDER": "acme", "WUNDER_LLM_MODEL": "m"},
			`WUNDER_LLM_PROVIDER: llm.models.default.provider: must be one of openai, local, deepseek, qwen, scripted, got "acme"`},
		{"no model name", nil, env{"WUNDER_LLM_BASE_URL": "http://h/v1"},
			"WUNDER_LLM_BASE_URL: llm.models.default.model: required unless provider is scripted"},
		{"which model", twoModels, env{"WUNDER_LLM_API_KEY": "sk"},
			"WUNDER_LLM_API_KEY: llm.default: cannot tell which model WUNDER_LLM_API_KEY applies to: must be set when more than one model is enabled (a, b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tt.files, tt.env)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Load() error =\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}

// More of what the environment variables promise: WUNDER_ALLOWED_HOSTS
// is a comma-separated list that replaces the file's; the variables beat
// the override file too; a bad value names the variable.
func TestEnvVarsReplaceAndBeatTheFiles(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: "server:\n  allowed_hosts: [from.file]\n", overridePath: "security:\n  api_key: from-override\n"},
		env{"WUNDER_ALLOWED_HOSTS": " a.example.com, ,*.b.example ,", "WUNDER_API_KEY": "from-env"})
	if got := c.Server.AllowedHosts; !slices.Equal(got, []string{"a.example.com", "*.b.example"}) {
		t.Errorf("allowed_hosts = %q, want the variable's two hosts only", got)
	}
	if c.Security.APIKey != "from-env" {
		t.Errorf("api_key = %q, want the variable's over the override file's", c.Security.APIKey)
	}
	for _, tc := range []struct {
		files files
		env   env
		want  string
	}{
		{nil, env{"WUNDER_PPROF": "yes"}, `WUNDER_PPROF: observability.pprof: want true or false, got "yes"`},
		{nil, env{"WUNDER_ALLOWED_HOSTS": "a.example,https://b.example"}, `WUNDER_ALLOWED_HOSTS: server.allowed_hosts[1]: must be a host name`},
		{nil, env{"WUNDER_POSTGRES_DSN": ""}, ""},
		{files{basePath: "llm:\n  models:\n    a: {model: a, enabled: false}\n"}, env{"WUNDER_LLM_MODEL": "m"},
			"WUNDER_LLM_MODEL: llm.default: cannot tell which model WUNDER_LLM_MODEL applies to: no model is enabled"},
		{files{overridePath: "server:\n  port: 0\n"}, nil, overridePath + ":2: server.port: must be between 1 and 65535, got 0"},
	} {
		_, err := load(t, tc.files, tc.env)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v %v: error = %v, want %q", tc.files, tc.env, err, tc.want)
		}
	}
}

// WUNDER_LLM_* set the default model only; when llm.default names a model
// that does not exist they create none, and the error is llm.default's.
func TestModelEnvVarsNeedTheDefaultModel(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: "llm:\n  default: b\n  models:\n    a: {model: a}\n    b: {model: b}\n"}, env{"WUNDER_LLM_API_KEY": "sk-b"})
	if c.LLM.Models["a"].APIKey != "" || c.LLM.Models["b"].APIKey != "sk-b" {
		t.Errorf("api keys a %q, b %q; want only the default model's set", c.LLM.Models["a"].APIKey, c.LLM.Models["b"].APIKey)
	}
	_, err := load(t, files{basePath: "llm:\n  default: c\n  models:\n    a: {model: a}\n"}, env{"WUNDER_LLM_MODEL": "m"})
	if err == nil || !strings.Contains(err.Error(), `llm.default: no model named "c" (have a)`) || strings.Contains(err.Error(), "models.c") {
		t.Errorf("error = %v, want only llm.default's", err)
	}
}
