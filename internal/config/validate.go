package config

import (
	"fmt"
	"maps"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Validate checks every value and returns all problems at once (see
// [FieldError]), sorted by path; nil when the configuration is usable. For a
// Config from [Load] each problem names the file and line, or the
// environment variable, that set the value.
func (c *Config) Validate() error {
	var p problems
	c.validate(&p)
	return p.err()
}

// Enumerations.
var (
	providers     = []string{ProviderOpenAI, ProviderLocal, ProviderDeepSeek, ProviderQwen, ProviderScripted}
	toolCallModes = []string{ToolCallMode, FunctionCallMode}
	backends      = []string{BackendAuto, BackendSQLite, BackendPostgres}
	languages     = []string{"en", "zh"}
	logLevels     = []string{"debug", "info", "warn", "error"}
	logFormats    = []string{"text", "json"}
	// undroppable events end a stream: a resumed stream must see them.
	undroppable = []string{"final", "error"}
)

var (
	separatorRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,4}$`)
	tokenRE     = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") // RFC 9110 token
)

func (c *Config) validate(p *problems) {
	v := checker{c: c, p: p}
	if strings.TrimSpace(c.DataDir) == "" {
		v.fail("data_dir", "must not be empty")
	}

	s := c.Server
	v.between("server.port", s.Port, 1, 65535)
	atLeast(v, "server.max_body_bytes", s.MaxBodyBytes, 1)
	atLeast(v, "server.read_header_timeout_s", s.ReadHeaderTimeoutSeconds, 1)
	atLeast(v, "server.read_timeout_s", s.ReadTimeoutSeconds, 1)
	atLeast(v, "server.idle_timeout_s", s.IdleTimeoutSeconds, 1)
	v.between("server.max_header_bytes", s.MaxHeaderBytes, 4096, 16<<20)
	c.validateAllowedHosts(v)
	atLeast(v, "server.shutdown_timeout_s", s.ShutdownTimeoutSeconds, 0)
	atLeast(v, "server.drain_delay_s", s.DrainDelaySeconds, 0)
	atLeast(v, "server.sse_heartbeat_s", s.SSEHeartbeatSeconds, 0)
	atLeast(v, "server.http2_ping_s", s.HTTP2PingSeconds, 0)
	c.validateTuning(v)
	v.httpURL("server.public_url", s.PublicURL, false)
	if c.Security.APIKey == "" && !c.Security.AllowUnauthenticated && !IsLoopback(s.Host) {
		v.fail("server.host", "%s is reachable from other machines and no API key is set: set security.api_key "+
			"(WUNDER_API_KEY), listen on 127.0.0.1, or set security.allow_unauthenticated: true to let anyone "+
			"who reaches the port run tasks", hostForHumans(s.Host))
	}

	cc := c.Concurrency
	atLeast(v, "concurrency.max_active_runs", cc.MaxActiveRuns, 1)
	atLeast(v, "concurrency.queue_size", cc.QueueSize, 0)
	atLeast(v, "concurrency.queue_retry_after_s", cc.QueueRetryAfterSeconds, 1)
	atLeast(v, "concurrency.per_user", cc.PerUser, 0)
	atLeast(v, "concurrency.per_user_agents", cc.PerUserAgents, 0)
	atLeast(v, "concurrency.cluster_max_runs", cc.ClusterMaxRuns, 0)
	atLeast(v, "concurrency.lock_ttl_s", cc.LockTTLSeconds, 1)
	c.validatePlanning(v)
	c.validateEvaluation(v)
	c.validateApprovals(v)
	c.validateQuestions(v)
	c.validateMemory(v)
	c.validateAttachments(v)
	c.validateCompaction(v)

	c.validateAuthLimits(v)
	if j := c.Auth.JWT; j.JWKSURL != "" {
		if j.Issuer == "" {
			v.fail("auth.jwt.issuer", "is required when auth.jwt.jwks_url is set")
		}
		if j.Audience == "" {
			v.fail("auth.jwt.audience", "is required when auth.jwt.jwks_url is set")
		}
		if j.UserClaim == "" {
			v.fail("auth.jwt.user_claim", "must not be empty")
		}
	}
	atLeast(v, "auth.jwt.leeway_s", c.Auth.JWT.LeewaySeconds, 0)
	v.rateLimit("auth.rate_limit", c.Auth.RateLimit)
	atLeast(v, "auth.max_in_flight", c.Auth.MaxInFlight, 0)
	sec := c.Security
	v.eachWord("security.allow_commands", sec.AllowCommands)
	for i, g := range sec.DenyGlobs {
		if _, err := path.Match(g, ""); g == "" || err != nil {
			v.fail(indexPath("security.deny_globs", i), "invalid glob %s", quoteShort(g))
		}
	}
	atLeast(v, "security.command_timeout_s", sec.CommandTimeoutSeconds, 1)
	if sec.MaxCommandTimeoutSeconds < sec.CommandTimeoutSeconds {
		v.fail("security.max_command_timeout_s", "must be at least command_timeout_s (%d), got %d",
			sec.CommandTimeoutSeconds, sec.MaxCommandTimeoutSeconds)
	}
	atLeast(v, "security.max_output_bytes", sec.MaxOutputBytes, 1)
	atLeast(v, "security.max_file_bytes", sec.MaxFileBytes, 1)

	if len(c.I18n.SupportedLanguages) == 0 {
		v.fail("i18n.supported_languages", "must list at least one language")
	}
	v.eachOneOf("i18n.supported_languages", c.I18n.SupportedLanguages, languages)
	for _, alias := range slices.Sorted(maps.Keys(c.I18n.Aliases)) {
		target := c.I18n.Aliases[alias]
		if strings.TrimSpace(alias) == "" {
			v.fail("i18n.aliases", "an alias must not be empty")
		} else if !slices.Contains(c.I18n.SupportedLanguages, target) {
			v.fail("i18n.aliases."+alias, "must name one of supported_languages (%s), got %q", strings.Join(c.I18n.SupportedLanguages, ", "), target)
		}
	}
	if v.oneOf("i18n.default_language", c.I18n.DefaultLanguage, languages) &&
		len(c.I18n.SupportedLanguages) > 0 && !slices.Contains(c.I18n.SupportedLanguages, c.I18n.DefaultLanguage) {
		v.fail("i18n.default_language", "must be one of supported_languages (%s), got %q",
			strings.Join(c.I18n.SupportedLanguages, ", "), c.I18n.DefaultLanguage)
	}

	c.validateCORS(v)
	c.validateLLM(v)
	c.validateMCP(v)
	c.validateA2A(v)
	c.validateLSP(v)
	c.validateSandbox(v)
	c.validateUserTools(v)
	c.validateKnowledge(v)
	c.validateSkills(v)

	sep := c.Tools.NameSeparator
	switch {
	case !separatorRE.MatchString(sep):
		v.fail("tools.name_separator", "must be 1 to 4 of A-Z a-z 0-9 _ -, got %s", quoteShort(sep))
	case sep == "_" || sep == "-":
		v.fail("tools.name_separator", "%q alone is too common inside tool names to decode back; use \"__\"", sep)
	case !strings.ContainsAny(sep, "_-"):
		v.fail("tools.name_separator", "must contain _ or -, got %q", sep)
	}
	v.eachWord("tools.builtin.enabled", c.Tools.Builtin.Enabled)
	v.eachWord("tools.admin_only", c.Tools.AdminOnly)
	for i, p := range c.Tools.AdminOnly {
		if _, err := path.Match(p, ""); err != nil {
			v.fail(fmt.Sprintf("tools.admin_only[%d]", i), "is not a valid pattern: %v", err)
		}
	}

	ws := c.Workspace
	atLeast(v, "workspace.max_history_items", ws.MaxHistoryItems, 1)
	if atLeast(v, "workspace.max_upload_bytes", ws.MaxUploadBytes, 1) {
		atLeast(v, "workspace.max_upload_total_bytes", ws.MaxUploadTotalBytes, ws.MaxUploadBytes)
	}
	atLeast(v, "workspace.max_tree_entries", ws.MaxTreeEntries, 1)
	atLeast(v, "workspace.max_tree_bytes", ws.MaxTreeBytes, 1)
	atLeast(v, "workspace.retention_days", ws.RetentionDays, 0)
	atLeast(v, "workspace.max_bytes_per_user", ws.MaxBytesPerUser, 0)

	st := c.Storage
	if v.oneOf("storage.backend", st.Backend, backends) && st.Backend == BackendPostgres && st.Postgres.DSN == "" {
		v.fail("storage.postgres.dsn", "required when storage.backend is postgres (or set WUNDER_POSTGRES_DSN)")
	}
	atLeast(v, "storage.postgres.connect_timeout_s", st.Postgres.ConnectTimeoutSeconds, 1)
	atLeast(v, "storage.postgres.max_open_conns", st.Postgres.MaxOpenConns, 1)
	atLeast(v, "storage.event_retention_days", st.EventRetentionDays, 0)
	v.between("storage.audit_retention_days", st.AuditRetentionDays, 0, 100*365)
	v.between("storage.a2a_peer_id_retention_days", st.A2APeerIDRetentionDays, 0, 100*365)
	atLeast(v, "storage.janitor_interval_s", st.JanitorIntervalSeconds, 60)

	o := c.Observability
	v.oneOf("observability.log_level", o.LogLevel, logLevels)
	v.oneOf("observability.log_format", o.LogFormat, logFormats)
	atLeast(v, "observability.event_payload_max_chars", o.EventPayloadMaxChars, 0)
	v.between("observability.monitor_event_limit", o.MonitorEventLimit, 1, 2000)
	atLeast(v, "observability.store_span_threshold_ms", o.StoreSpanThresholdMS, 0)
	if o.OTLP.Protocol != "" {
		v.oneOf("observability.otlp.protocol", o.OTLP.Protocol, []string{OTLPHTTP, OTLPGRPC})
	}
	if e := o.OTLP.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.fail("observability.otlp.endpoint", "must be an http:// or https:// URL such as http://collector:4318, got %q", e)
		}
	}
	v.between("observability.metrics_max_users", o.MetricsMaxUsers, 0, 1_000_000)
	if v.eachWord("observability.drop_event_types", o.DropEventTypes) {
		for i, t := range o.DropEventTypes {
			if slices.Contains(undroppable, t) {
				v.fail(indexPath("observability.drop_event_types", i), "%q cannot be dropped: a resumed stream ends on it", t)
			}
		}
	}
}

func (c *Config) validateCORS(v checker) {
	cors := c.CORS
	for i, o := range cors.AllowOrigins {
		if o == "*" {
			if cors.AllowCredentials {
				v.fail("cors.allow_credentials", `cannot be true when cors.allow_origins has "*" (browsers refuse it)`)
			}
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			v.fail(indexPath("cors.allow_origins", i), `must be "*" or scheme://host[:port], got %s`, quoteShort(o))
		}
	}
	v.eachToken("cors.allow_methods", cors.AllowMethods)
	for i, m := range cors.AllowMethods {
		if m != strings.ToUpper(m) {
			v.fail(indexPath("cors.allow_methods", i), "must be upper case, got %s", quoteShort(m))
		}
	}
	v.eachToken("cors.allow_headers", cors.AllowHeaders)
}

func (c *Config) validateLLM(v checker) {
	v.eachOneOf("llm.request_overrides", c.LLM.RequestOverrides, []string{"temperature", "max_rounds", "tool_call_mode", "max_output"})
	if d := c.LLM.Default; d != "" {
		if m, ok := c.LLM.Models[d]; !ok {
			known := slices.Sorted(maps.Keys(c.LLM.Models))
			if len(known) == 0 {
				v.fail("llm.default", "no model named %q: llm.models is empty", d)
			} else {
				v.fail("llm.default", "no model named %q (have %s)", d, strings.Join(known, ", "))
			}
		} else if !m.Enabled {
			v.fail("llm.default", "model %q is disabled", d)
		}
	} else if _, err := c.defaultModel(); err != nil && len(c.EnabledModelNames()) > 1 {
		v.fail("llm.default", "%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(c.LLM.Models)) {
		c.LLM.Models[name].validate(v, joinPath("llm.models", name), name)
		for i, fb := range c.LLM.Models[name].Fallbacks {
			p := fmt.Sprintf("%s[%d]", joinPath(joinPath("llm.models", name), "fallbacks"), i)
			switch m, ok := c.LLM.Models[fb]; {
			case fb == name:
				v.fail(p, "a model cannot be its own fallback")
			case !ok:
				v.fail(p, "no model named %q", fb)
			case !m.Enabled:
				v.fail(p, "model %q is disabled", fb)
			}
		}
	}
	atLeast(v, "llm.circuit_open_s", c.LLM.CircuitOpenSeconds, 1)
}

func (m Model) validate(v checker, p, name string) {
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		v.fail(p, "a model name must be non-empty without spaces")
	}
	at := func(key string) string { return joinPath(p, key) }
	v.oneOf(at("provider"), m.Provider, providers)
	v.httpURL(at("base_url"), m.BaseURL, true)
	if m.Enabled && m.BaseURL == "" && m.Provider == ProviderLocal {
		v.fail(at("base_url"), "required for provider local")
	}
	if m.Enabled && m.Model == "" && m.Provider != ProviderScripted {
		v.fail(at("model"), "required unless provider is scripted")
	}
	if m.Script != "" && m.Provider != ProviderScripted {
		v.fail(at("script"), "only used by provider scripted, provider is %q", m.Provider)
	}
	if t := m.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		v.fail(at("temperature"), "must be between 0 and 2, got %v", *t)
	}
	atLeast(v, at("timeout_s"), m.TimeoutSeconds, 1)
	atLeast(v, at("max_rounds"), m.MaxRounds, 1)
	atLeast(v, at("max_context"), m.MaxContext, 0)
	if atLeast(v, at("max_output"), m.MaxOutput, 0) && m.MaxContext > 0 && m.MaxOutput >= m.MaxContext {
		v.fail(at("max_output"), "must be less than max_context (%d), got %d", m.MaxContext, m.MaxOutput)
	}
	if r := m.HistoryCompactionRatio; !(r >= 0 && r <= 1) {
		v.fail(at("history_compaction_ratio"), "must be between 0 and 1, got %v", r)
	}
	v.oneOf(at("history_compaction_reset"), m.HistoryCompactionReset, []string{ResetZero, ResetCurrent, ResetKeep})
	v.oneOf(at("tool_call_mode"), m.ToolCallMode, toolCallModes)
	for i, s := range m.Stop {
		if s == "" {
			v.fail(indexPath(at("stop"), i), "must not be empty")
		}
	}
	atLeast(v, joinPath(at("retry"), "max_attempts"), m.Retry.MaxAttempts, 1)
	if atLeast(v, joinPath(at("retry"), "initial_backoff_ms"), m.Retry.InitialBackoffMillis, 0) &&
		m.Retry.MaxBackoffMillis < m.Retry.InitialBackoffMillis {
		v.fail(joinPath(at("retry"), "max_backoff_ms"), "must be at least initial_backoff_ms (%d), got %d",
			m.Retry.InitialBackoffMillis, m.Retry.MaxBackoffMillis)
	}
}

// checker reports problems with the origin of the value (or of its nearest
// ancestor whose origin is known).
type checker struct {
	c *Config
	p *problems
}

func (v checker) fail(path, format string, args ...any) {
	if v.p.reported[path] {
		return // the loader already said what is wrong there
	}
	at := origin{}
	for p := path; p != ""; {
		if o := v.c.originOf(p); o.source != "" {
			at = o
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	v.p.add(path, at, format, args...)
}

func (v checker) between(path string, got, lo, hi int) bool {
	if got < lo || got > hi {
		v.fail(path, "must be between %d and %d, got %d", lo, hi, got)
		return false
	}
	return true
}

func atLeast[T int | int64](v checker, path string, got, lo T) bool {
	if got < lo {
		v.fail(path, "must be at least %d, got %d", lo, got)
		return false
	}
	return true
}

func (v checker) oneOf(path, got string, allowed []string) bool {
	if !slices.Contains(allowed, got) {
		v.fail(path, "must be one of %s, got %s", strings.Join(allowed, ", "), quoteShort(got))
		return false
	}
	return true
}

func (v checker) eachOneOf(path string, list, allowed []string) {
	seen := map[string]bool{}
	for i, s := range list {
		if v.oneOf(indexPath(path, i), s, allowed) && seen[s] {
			v.fail(indexPath(path, i), "%q is listed twice", s)
		}
		seen[s] = true
	}
}

// eachWord checks a list of names: non-empty, no spaces, no duplicates.
func (v checker) eachWord(path string, list []string) bool {
	ok := true
	seen := map[string]bool{}
	for i, s := range list {
		switch {
		case s == "" || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
			v.fail(indexPath(path, i), "must be a non-empty word without spaces, got %s", quoteShort(s))
			ok = false
		case seen[s]:
			v.fail(indexPath(path, i), "%q is listed twice", s)
		}
		seen[s] = true
	}
	return ok
}

func (v checker) eachToken(path string, list []string) {
	for i, s := range list {
		if !tokenRE.MatchString(s) {
			v.fail(indexPath(path, i), "must be an HTTP token, got %s", quoteShort(s))
		}
	}
}

// httpURL checks an optional absolute http(s) URL.
func (v checker) httpURL(path, s string, allowQuery bool) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(!allowQuery && (u.RawQuery != "" || u.Fragment != "")) {
		v.fail(path, "must be an absolute http:// or https:// URL, got %s", quoteShort(s))
	}
}

// hostForHumans quotes a server.host for a message; "" says what it means.
func hostForHumans(host string) string {
	if host == "" {
		return `"" (all interfaces)`
	}
	return quoteShort(host)
}

// validateAllowedHosts checks server.allowed_hosts: host names or
// "*.suffix" patterns without scheme, port or path, and "*" only where an
// API key guards the server (without one, "*" would let any page that
// rebinds a name to this machine drive it).
func (c *Config) validateAllowedHosts(v checker) {
	for i, h := range c.Server.AllowedHosts {
		path := fmt.Sprintf("server.allowed_hosts[%d]", i)
		name := strings.TrimPrefix(h, "*.")
		switch {
		case h == "*":
			if c.Security.APIKey == "" {
				v.fail(path, `"*" (every host) needs security.api_key: without one, any web page that points a name at this server could drive it`)
			}
		case name == "" || strings.ContainsAny(name, "/:@?#* ") || strings.Contains(name, ".."):
			v.fail(path, "must be a host name such as wunder.example.com or *.example.com, without scheme, port or path, got %q", h)
		}
	}
}

// maxTokenTTLSeconds is the most auth.max_token_ttl_s may be: a hundred
// years, far from where seconds overflow a time.Duration.
const maxTokenTTLSeconds = 100 * 365 * 86400

// validateAuthLimits checks the bounds of tokens, logins and hashing.
func (c *Config) validateAuthLimits(v checker) {
	a := c.Auth
	if atLeast(v, "auth.max_token_ttl_s", a.MaxTokenTTLSeconds, 60) && a.MaxTokenTTLSeconds > maxTokenTTLSeconds {
		v.fail("auth.max_token_ttl_s", "must be at most %d (a hundred years), got %d", maxTokenTTLSeconds, a.MaxTokenTTLSeconds)
	}
	if atLeast(v, "auth.token_ttl_s", a.TokenTTLSeconds, 60) && a.TokenTTLSeconds > a.MaxTokenTTLSeconds {
		v.fail("auth.token_ttl_s", "must be at most auth.max_token_ttl_s (%d), got %d", a.MaxTokenTTLSeconds, a.TokenTTLSeconds)
	}
	v.rateLimit("auth.login.per_user", a.Login.PerUser)
	v.rateLimit("auth.login.per_address", a.Login.PerAddress)
	atLeast(v, "auth.password_hashing.max_memory_mb", a.PasswordHashing.MaxMemoryMB, 64)
	if atLeast(v, "auth.password_hashing.max_wait_s", a.PasswordHashing.MaxWaitSeconds, 0) && a.PasswordHashing.MaxWaitSeconds > 60 {
		v.fail("auth.password_hashing.max_wait_s", "must be at most 60, got %d", a.PasswordHashing.MaxWaitSeconds)
	}
}

// rateLimit checks a token bucket's keys under path.
func (v checker) rateLimit(path string, r RateLimit) {
	if r.PerSecond < 0 {
		v.fail(path+".per_second", "must not be negative (0 = no limit)")
	}
	atLeast(v, path+".burst", r.Burst, 1)
}
