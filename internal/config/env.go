package config

import (
	"fmt"
	"strconv"
	"strings"
)

// envVar is one WUNDER_* variable that sets one key.
type envVar struct {
	name string
	path string
	set  func(c *Config, v string) error
}

// envVars are the variables applied after the files, so they beat them.
// They work without any file. WUNDER_LLM_* are handled by applyModelEnv.
var envVars = []envVar{
	{"WUNDER_DATA_DIR", "data_dir", func(c *Config, v string) error { c.DataDir = v; return nil }},
	{"WUNDER_HOST", "server.host", func(c *Config, v string) error { c.Server.Host = v; return nil }},
	{"WUNDER_PORT", "server.port", func(c *Config, v string) error { return setInt(&c.Server.Port, v) }},
	{"WUNDER_ALLOWED_HOSTS", "server.allowed_hosts", func(c *Config, v string) error {
		c.Server.AllowedHosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.Server.AllowedHosts = append(c.Server.AllowedHosts, h)
			}
		}
		return nil
	}},
	{"WUNDER_API_KEY", "security.api_key", func(c *Config, v string) error { c.Security.APIKey = v; return nil }},
	{"WUNDER_POSTGRES_DSN", "storage.postgres.dsn", func(c *Config, v string) error { c.Storage.Postgres.DSN = v; return nil }},
	{"WUNDER_LOG_LEVEL", "observability.log_level", func(c *Config, v string) error {
		c.Observability.LogLevel = strings.ToLower(v)
		return nil
	}},
	{"WUNDER_PPROF", "observability.pprof", func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		c.Observability.PProf = b
		return nil
	}},
}

// modelEnvVars set fields of the default model.
var modelEnvVars = []struct {
	name  string
	field string
	set   func(m *Model, v string)
}{
	{"WUNDER_LLM_PROVIDER", "provider", func(m *Model, v string) { m.Provider = strings.ToLower(v) }},
	{"WUNDER_LLM_BASE_URL", "base_url", func(m *Model, v string) { m.BaseURL = v }},
	{"WUNDER_LLM_API_KEY", "api_key", func(m *Model, v string) { m.APIKey = v }},
	{"WUNDER_LLM_MODEL", "model", func(m *Model, v string) { m.Model = v }},
	{"WUNDER_LLM_TOOL_CALL_MODE", "tool_call_mode", func(m *Model, v string) { m.ToolCallMode = v }},
}

// EnvVars lists the WUNDER_* variables Load reads besides WUNDER_CONFIG_PATH,
// for help texts.
func EnvVars() []string {
	var out []string
	for _, e := range envVars {
		out = append(out, e.name)
	}
	for _, e := range modelEnvVars {
		out = append(out, e.name)
	}
	return out
}

// env returns a variable's value; set-but-empty counts as unset.
func (l *loader) env(name string) (string, bool) {
	v, ok := l.lookupEnv(name)
	if !ok || v == "" {
		return "", false
	}
	return v, true
}

// applyEnv applies the WUNDER_* variables to c.
func (l *loader) applyEnv(c *Config) {
	for _, e := range envVars {
		v, ok := l.env(e.name)
		if !ok {
			continue
		}
		at := origin{source: e.name}
		if err := e.set(c, v); err != nil {
			l.probs.add(e.path, at, "%v", err)
			continue
		}
		l.origins[e.path] = at
	}
	l.applyModelEnv(c)
}

// applyModelEnv applies WUNDER_LLM_* to the default model. When there is no
// model at all and WUNDER_LLM_MODEL, WUNDER_LLM_BASE_URL or
// WUNDER_LLM_PROVIDER=scripted is set, it creates one, named after
// llm.default or else "default".
func (l *loader) applyModelEnv(c *Config) {
	set := map[string]string{}
	var names []string
	for _, e := range modelEnvVars {
		if v, ok := l.env(e.name); ok {
			set[e.name] = v
			names = append(names, e.name)
		}
	}
	if len(set) == 0 {
		return
	}
	first := origin{source: names[0]}
	var name string
	if len(c.LLM.Models) == 0 {
		creates := set["WUNDER_LLM_MODEL"] != "" || set["WUNDER_LLM_BASE_URL"] != "" ||
			strings.EqualFold(set["WUNDER_LLM_PROVIDER"], ProviderScripted)
		if !creates {
			l.warnings = append(l.warnings, fmt.Sprintf(
				"%s ignored: no model is configured (set WUNDER_LLM_MODEL or WUNDER_LLM_BASE_URL to create one)",
				strings.Join(names, ", ")))
			return
		}
		name = c.LLM.Default
		if name == "" {
			name = "default"
		}
		if c.LLM.Models == nil {
			c.LLM.Models = map[string]Model{}
		}
		c.LLM.Models[name] = NewModel()
		l.origins[joinPath("llm.models", name)] = first
	} else {
		var err error
		name, err = c.defaultModel()
		if err != nil {
			l.probs.add("llm.default", first, "cannot tell which model %s applies to: %v", strings.Join(names, ", "), err)
			return
		}
		if _, ok := c.LLM.Models[name]; !ok {
			return // Validate reports that llm.default names no model
		}
	}
	m := c.LLM.Models[name]
	for _, e := range modelEnvVars {
		if v, ok := set[e.name]; ok {
			e.set(&m, v)
			l.origins[joinPath(joinPath("llm.models", name), e.field)] = origin{source: e.name}
		}
	}
	c.LLM.Models[name] = m
}

// setInt parses an environment value into *dst.
func setInt(dst *int, v string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("expected an integer, got %s", quoteShort(v))
	}
	*dst = n
	return nil
}
