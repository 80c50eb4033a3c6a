package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
)

// Every bound docs/configuration.md states for a key is enforced, and the
// error names the key, where it was set and the bound.
func TestSectionBounds(t *testing.T) {
	t.Parallel()
	const m = "llm:\n  models:\n    gpt:\n      model: m\n"
	tests := []struct{ name, yaml, want string }{
		// server
		{"header bytes", "server:\n  max_header_bytes: 1000\n", "config/wunder.yaml:2: server.max_header_bytes: must be between 4096 and 16777216, got 1000"},
		{"read timeout", "server:\n  read_timeout_s: 0\n", "server.read_timeout_s: must be at least 1, got 0"},
		{"idle timeout", "server:\n  idle_timeout_s: 0\n", "server.idle_timeout_s: must be at least 1, got 0"},
		{"shutdown timeout", "server:\n  shutdown_timeout_s: -1\n", "server.shutdown_timeout_s: must be at least 0, got -1"},
		{"heartbeat", "server:\n  sse_heartbeat_s: -1\n", "server.sse_heartbeat_s: must be at least 0, got -1"},
		{"body bytes", "server:\n  max_body_bytes: 0\n", "server.max_body_bytes: must be at least 1, got 0"},
		{"public url with query", "server:\n  public_url: https://x.example/?a=b\n", "server.public_url: must be an absolute http:// or https:// URL"},
		{"any host without a key", "server:\n  allowed_hosts: ['*']\n", `config/wunder.yaml:2: server.allowed_hosts[0]: "*" (every host) needs security.api_key`},
		{"host with scheme", "server:\n  allowed_hosts: [ok.example, 'https://x.example']\n", `server.allowed_hosts[1]: must be a host name such as wunder.example.com or *.example.com, without scheme, port or path, got "https://x.example"`},
		{"host with port", "server:\n  allowed_hosts: ['x.example:8000']\n", `server.allowed_hosts[0]: must be a host name`},
		{"empty host", "server:\n  allowed_hosts: ['']\n", `server.allowed_hosts[0]: must be a host name`},
		{"bare wildcard suffix", "server:\n  allowed_hosts: ['*.']\n", `server.allowed_hosts[0]: must be a host name`},
		{"double dot", "server:\n  allowed_hosts: ['a..example']\n", `server.allowed_hosts[0]: must be a host name`},
		{"wildcard inside", "server:\n  allowed_hosts: ['a.*.example']\n", `server.allowed_hosts[0]: must be a host name`},
		// concurrency
		{"retry after", "concurrency:\n  queue_retry_after_s: 0\n", "concurrency.queue_retry_after_s: must be at least 1, got 0"},
		{"per user", "concurrency:\n  per_user: -1\n", "concurrency.per_user: must be at least 0, got -1"},
		{"per user agents", "concurrency:\n  per_user_agents: -1\n", "concurrency.per_user_agents: must be at least 0, got -1"},
		{"lock ttl", "concurrency:\n  lock_ttl_s: 0\n", "concurrency.lock_ttl_s: must be at least 1, got 0"},
		// security
		{"empty glob", "security:\n  deny_globs: ['']\n", `security.deny_globs[0]: invalid glob ""`},
		{"output bytes", "security:\n  max_output_bytes: 0\n", "security.max_output_bytes: must be at least 1, got 0"},
		{"file bytes", "security:\n  max_file_bytes: 0\n", "security.max_file_bytes: must be at least 1, got 0"},
		// auth
		{"jwt issuer", "auth:\n  jwt: {jwks_url: 'https://idp.example/jwks', audience: wunder}\n", "auth.jwt.issuer: is required when auth.jwt.jwks_url is set"},
		{"jwt audience", "auth:\n  jwt: {jwks_url: 'https://idp.example/jwks', issuer: idp}\n", "auth.jwt.audience: is required when auth.jwt.jwks_url is set"},
		{"jwt user claim", "auth:\n  jwt: {jwks_url: 'https://idp.example/jwks', issuer: i, audience: a, user_claim: ''}\n", "auth.jwt.user_claim: must not be empty"},
		{"jwt leeway", "auth:\n  jwt: {leeway_s: -5}\n", "auth.jwt.leeway_s: must be at least 0, got -5"},
		{"token ttl floor", "auth:\n  token_ttl_s: 59\n", "auth.token_ttl_s: must be at least 60, got 59"},
		{"max token ttl floor", "auth:\n  max_token_ttl_s: 10\n", "auth.max_token_ttl_s: must be at least 60, got 10"},
		{"rate burst", "auth:\n  rate_limit: {burst: 0}\n", "auth.rate_limit.burst: must be at least 1, got 0"},
		{"negative rate", "auth:\n  rate_limit: {per_second: -0.5}\n", "auth.rate_limit.per_second: must not be negative (0 = no limit)"},
		// i18n
		{"no language", "i18n:\n  supported_languages: []\n", "i18n.supported_languages: must list at least one language"},
		{"unknown language", "i18n:\n  supported_languages: [en, fr]\n", `i18n.supported_languages[1]: must be one of en, zh, got "fr"`},
		{"language twice", "i18n:\n  supported_languages: [en, en]\n", `i18n.supported_languages[1]: "en" is listed twice`},
		{"alias to an unsupported language", "i18n:\n  supported_languages: [en]\n  aliases: {fr-fr: zh}\n", `config/wunder.yaml:3: i18n.aliases.fr-fr: must name one of supported_languages (en), got "zh"`},
		{"empty alias", "i18n:\n  aliases: {'': en}\n", "i18n.aliases: an alias must not be empty"},
		// cors
		{"origin with user", "cors:\n  allow_origins: ['https://u@a.example']\n", `cors.allow_origins[0]: must be "*" or scheme://host[:port]`},
		{"origin without scheme", "cors:\n  allow_origins: [a.example]\n", `cors.allow_origins[0]: must be "*" or scheme://host[:port], got "a.example"`},
		// llm
		{"request override", "llm:\n  request_overrides: [temperature, stream]\n", `llm.request_overrides[1]: must be one of temperature, max_rounds, tool_call_mode, max_output, got "stream"`},
		{"request override twice", "llm:\n  request_overrides: [max_rounds, max_rounds]\n", `llm.request_overrides[1]: "max_rounds" is listed twice`},
		{"circuit", "llm:\n  circuit_open_s: 0\n", "llm.circuit_open_s: must be at least 1, got 0"},
		{"own fallback", m + "      fallbacks: [gpt]\n", "llm.models.gpt.fallbacks[0]: a model cannot be its own fallback"},
		{"unknown fallback", m + "      fallbacks: [gtp]\n", `llm.models.gpt.fallbacks[0]: no model named "gtp"`},
		{"disabled fallback", m + "      fallbacks: [old]\n    old: {model: o, enabled: false}\n  default: gpt\n", `llm.models.gpt.fallbacks[0]: model "old" is disabled`},
		{"compaction ratio", m + "      history_compaction_ratio: 1.5\n", "llm.models.gpt.history_compaction_ratio: must be between 0 and 1, got 1.5"},
		{"compaction reset", m + "      history_compaction_reset: never\n", `llm.models.gpt.history_compaction_reset: must be one of zero, current, keep, got "never"`},
		{"empty stop", m + "      stop: ['']\n", "llm.models.gpt.stop[0]: must not be empty"},
		{"model timeout", m + "      timeout_s: 0\n", "llm.models.gpt.timeout_s: must be at least 1, got 0"},
		{"retry attempts", m + "      retry: {max_attempts: 0}\n", "llm.models.gpt.retry.max_attempts: must be at least 1, got 0"},
		{"model name with a space", "llm:\n  models:\n    'my model': {model: m}\n", "a model name must be non-empty without spaces"},
		{"default without models", "llm:\n  default: gpt\n", `llm.default: no model named "gpt": llm.models is empty`},
		// tools
		{"admin_only pattern", "tools:\n  admin_only: ['ops@[']\n", "tools.admin_only[0]: is not a valid pattern"},
		{"admin_only twice", "tools:\n  admin_only: [a, a]\n", `tools.admin_only[1]: "a" is listed twice`},
		{"builtin with a space", "tools:\n  builtin: {enabled: ['read file']}\n", `tools.builtin.enabled[0]: must be a non-empty word without spaces, got "read file"`},
		// workspace and storage
		{"upload total", "workspace:\n  max_upload_bytes: 100\n  max_upload_total_bytes: 99\n", "workspace.max_upload_total_bytes: must be at least 100, got 99"},
		{"history items", "workspace:\n  max_history_items: 0\n", "workspace.max_history_items: must be at least 1, got 0"},
		{"quota", "workspace:\n  max_bytes_per_user: -1\n", "workspace.max_bytes_per_user: must be at least 0, got -1"},
		{"audit retention", "storage:\n  audit_retention_days: 40000\n", "storage.audit_retention_days: must be between 0 and 36500, got 40000"},
		{"peer id retention", "storage:\n  a2a_peer_id_retention_days: -1\n", "storage.a2a_peer_id_retention_days: must be between 0 and 36500, got -1"},
		{"janitor", "storage:\n  janitor_interval_s: 59\n", "storage.janitor_interval_s: must be at least 60, got 59"},
		{"pool", "storage:\n  postgres: {max_open_conns: 0}\n", "storage.postgres.max_open_conns: must be at least 1, got 0"},
		// observability
		{"monitor limit low", "observability:\n  monitor_event_limit: 0\n", "observability.monitor_event_limit: must be between 1 and 2000, got 0"},
		{"monitor limit high", "observability:\n  monitor_event_limit: 2001\n", "observability.monitor_event_limit: must be between 1 and 2000, got 2001"},
		{"metrics users", "observability:\n  metrics_max_users: 1000001\n", "observability.metrics_max_users: must be between 0 and 1000000, got 1000001"},
		{"drop error", "observability:\n  drop_event_types: [error]\n", `observability.drop_event_types[0]: "error" cannot be dropped: a resumed stream ends on it`},
		{"drop twice", "observability:\n  drop_event_types: [progress, progress]\n", `observability.drop_event_types[1]: "progress" is listed twice`},
		{"payload chars", "observability:\n  event_payload_max_chars: -1\n", "observability.event_payload_max_chars: must be at least 0, got -1"},
		// mcp
		{"mcp timeout", "mcp:\n  timeout_s: 0\n", "mcp.timeout_s: must be at least 1, got 0"},
		{"mcp ready", "mcp:\n  ready_timeout_s: 0\n", "mcp.ready_timeout_s: must be at least 1, got 0"},
		{"mcp user", "mcp:\n  server: {user_id: '..'}\n", "mcp.server.user_id: contains a forbidden character"},
		{"mcp server twice", "mcp:\n  servers:\n    - {name: fs, url: 'http://a/mcp'}\n    - {name: fs, transport: stdio, command: fs}\n", `config/wunder.yaml:4: mcp.servers[1].name: "fs" is used by another server`},
		{"mcp sse needs url", "mcp:\n  servers:\n    - {name: s, transport: sse}\n", "mcp.servers[0].url: is required with transport sse"},
		{"mcp stdio needs command", "mcp:\n  servers:\n    - {name: s, transport: stdio}\n", "mcp.servers[0].command: is required with transport stdio"},
		{"mcp resource twice", "mcp:\n  servers:\n    - {name: s, url: 'http://a', allow_resources: ['file:///*', 'file:///*']}\n", "mcp.servers[0].allow_resources[1]"},
		// a2a
		{"a2a user", "a2a:\n  server: {user_id: 'a/b'}\n", "a2a.server.user_id: contains a forbidden character"},
		{"a2a long user", "a2a:\n  server: {user_id: '" + strings.Repeat("u", 129) + "'}\n", "a2a.server.user_id: must be at most 128 bytes"},
		{"a2a empty user", "a2a:\n  server: {user_id: ''}\n", "a2a.server.user_id: must not be empty"},
		{"a2a service name", "a2a:\n  services:\n    - {name: 'a@b', endpoint: 'http://p'}\n", `a2a.services[0].name: must be 1-64 letters, digits, - or _, got "a@b"`},
		{"a2a service reserved", "a2a:\n  services:\n    - {name: v1, endpoint: 'http://p'}\n", `a2a.services[0].name: "v1" is reserved: /a2a/v1 is a binding's path (names v<digits> are reserved)`},
		{"a2a publish needs the card", "a2a:\n  services:\n    - {name: p, endpoint: 'http://p/rpc', version: '1.0', publish: true}\n", `a2a.services[0].publish: needs the peer's card, but version "1.0" skips it: leave version empty`},
		{"a2a tenant reserved", "a2a:\n  server:\n    tenants: {tasks: alice}\n", `a2a.server.tenants.tasks: "tasks" is reserved: it is a route of the HTTP+JSON binding`},
		{"a2a tenant of a peer", "a2a:\n  server:\n    tenants: {'peers/research': alice}\n", `a2a.server.tenants.peers/research: "peers/research" is reserved: tenants peers/<name> name the peers published through wunder (gRPC)`},
		{"a2a tenant slash", "a2a:\n  server:\n    tenants: {'a/b': alice}\n", `a2a.server.tenants.a/b: a tenant is 1-128 characters without / ? # % or surrounding spaces`},
		{"a2a tenant user", "a2a:\n  server:\n    tenants: {acme: '..'}\n", `a2a.server.tenants.acme: must name a user id: the user id contains a forbidden character`},
		{"a2a service twice", "a2a:\n  services:\n    - {name: p, endpoint: 'http://p'}\n    - {name: p, endpoint: 'http://q'}\n", `a2a.services[1].name: "p" is used by another service`},
		{"a2a endpoint", "a2a:\n  services:\n    - {name: p}\n", "a2a.services[0].endpoint: is required"},
		{"a2a endpoint scheme", "a2a:\n  services:\n    - {name: p, endpoint: 'grpc://p'}\n", "a2a.services[0].endpoint: must be an absolute http:// or https:// URL"},
		{"a2a version", "a2a:\n  services:\n    - {name: p, endpoint: 'http://p', version: '2.0'}\n", `a2a.services[0].version: must be one of , 1.0, 0.3, got "2.0"`},
		{"a2a depth", "a2a:\n  services:\n    - {name: p, endpoint: 'http://p', max_depth: 0}\n", "a2a.services[0].max_depth: must be at least 1, got 0"},
		{"a2a push attempts", "a2a:\n  push: {max_attempts: 0}\n", "a2a.push.max_attempts: must be at least 1, got 0"},
		// lsp and sandbox
		{"lsp env", "lsp:\n  servers:\n    - {id: a, env: {'A=B': x}}\n", "lsp.servers[0].env.A=B: invalid variable name"},
		{"lsp command", "lsp:\n  servers:\n    - {id: a, command: [gopls, '']}\n", "lsp.servers[0].command[1]: must be a non-empty argument"},
		{"lsp debounce", "lsp:\n  diagnostics_debounce_ms: 0\n", "lsp.diagnostics_debounce_ms: must be at least 1, got 0"},
		// skills, replan, evaluation, throughput
		{"skill name", "skills:\n  enabled: [a, '']\n", "skills.enabled[1]: must not be empty"},
		{"skill zip", "skills:\n  max_zip_bytes: 1023\n", "skills.max_zip_bytes: must be at least 1024, got 1023"},
		{"skill files", "skills:\n  max_files: 0\n", "skills.max_files: must be at least 1, got 0"},
		{"skill retention", "skills:\n  retention_turns: 0\n", "skills.retention_turns: must be at least 1, got 0"},
		{"skill idle", "skills:\n  mcp_idle_s: 0\n", "skills.mcp_idle_s: must be at least 1, got 0"},
		{"replan retries", "replan:\n  max_retries: 0\n", "replan.max_retries: must be at least 1, got 0"},
		{"replans", "replan:\n  max_replans: 0\n", "replan.max_replans: must be at least 1, got 0"},
		{"cases dir", "evaluation:\n  cases_dir: ''\n", "evaluation.cases_dir: must not be empty"},
		{"case timeout", "evaluation:\n  case_timeout_s: 0\n", "evaluation.case_timeout_s: must be at least 1, got 0"},
		{"judge model", m + "evaluation:\n  judge_model: strict\n", `evaluation.judge_model: must name an llm.models entry, got "strict"`},
		{"throughput concurrency", "throughput:\n  max_concurrency: 0\n", "throughput.max_concurrency: must be at least 1, got 0"},
		{"throughput duration", "throughput:\n  max_duration_s: 0\n", "throughput.max_duration_s: must be at least 1, got 0"},
		{"throughput runs", "throughput:\n  max_runs_per_step: 0\n", "throughput.max_runs_per_step: must be at least 1, got 0"},
		{"throughput timeout", "throughput:\n  request_timeout_s: 0\n", "throughput.request_timeout_s: must be at least 1, got 0"},
		// approvals
		{"approval glob", "approvals:\n  tools: [write_file, '[']\n", `approvals.tools[1]: must be a tool name or a glob, got "["`},
		{"approval empty", "approvals:\n  tools: ['']\n", `approvals.tools[0]: must be a tool name or a glob, got ""`},
		{"approval mode", "approvals:\n  mode: yolo\n", `approvals.mode: must be one of suggest, auto_edit, full_auto, got "yolo"`},
		{"approval timeout", "approvals:\n  timeout_s: -1\n", "approvals.timeout_s: must be at least 0, got -1"},
		{"approval on timeout", "approvals:\n  on_timeout: approve\n", `approvals.on_timeout: must be one of reject, cancel, got "approve"`},
		// attachments
		{"attachment total", "attachments:\n  max_bytes: 100\n  max_total_bytes: 50\n", "attachments.max_total_bytes: must be at least attachments.max_bytes (100), got 50"},
		{"attachment count", "attachments:\n  max_count: 1001\n", "attachments.max_count: must be between 1 and 1000, got 1001"},
		{"attachment pages", "attachments:\n  max_pdf_pages: 0\n", "attachments.max_pdf_pages: must be between 1 and 100000, got 0"},
		{"attachment chars", "attachments:\n  max_chars: 99\n", "attachments.max_chars: must be at least 100, got 99"},
		{"attachment depth", "attachments:\n  max_xml_depth: 7\n", "attachments.max_xml_depth: must be between 8 and 100000, got 7"},
		{"attachment entries", "attachments:\n  max_zip_entries: 0\n", "attachments.max_zip_entries: must be between 1 and 1000000, got 0"},
		{"attachment output", "attachments:\n  max_output_bytes: 1023\n", "attachments.max_output_bytes: must be at least 1024, got 1023"},
		{"attachment concurrency", "attachments:\n  max_concurrent: 1025\n", "attachments.max_concurrent: must be between 1 and 1024, got 1025"},
		{"attachment ratio", "attachments:\n  max_unzip_ratio: 0\n", "attachments.max_unzip_ratio: must be at least 1, got 0"},
		// compaction, memory
		{"summary tokens", "compaction:\n  summary_max_tokens: 63\n", "compaction.summary_max_tokens: must be at least 64, got 63"},
		{"summary timeout", "compaction:\n  summary_timeout_s: 0\n", "compaction.summary_timeout_s: must be at least 1, got 0"},
		{"tail tokens", "compaction:\n  keep_tail_tokens: -1\n", "compaction.keep_tail_tokens: must be at least 0, got -1"},
		{"margin", "compaction:\n  safety_margin_tokens: -1\n", "compaction.safety_margin_tokens: must be at least 0, got -1"},
		// user tools
		{"extra prompt", "user_tools:\n  max_extra_prompt_chars: -1\n", "user_tools.max_extra_prompt_chars: must be at least 0, got -1"},
		{"user tools idle", "user_tools:\n  idle_ttl_s: 0\n", "user_tools.idle_ttl_s: must be at least 1, got 0"},
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

// Values at the documented edges load.
func TestSectionBoundsAccepted(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server:
  max_header_bytes: 4096
  allowed_hosts: [wunder.example.com, '*.example.com', WUNDER.example.org]
security:
  api_key: k
i18n:
  default_language: zh
  aliases: {zh-mo: zh}
storage:
  audit_retention_days: 36500
  a2a_peer_id_retention_days: 36500
  janitor_interval_s: 60
observability:
  monitor_event_limit: 2000
  metrics_max_users: 0
  drop_event_types: [llm_output_delta, progress]
auth:
  token_ttl_s: 60
  max_token_ttl_s: 3153600000
  password_hashing: {max_wait_s: 60, max_memory_mb: 64}
attachments:
  max_bytes: 100
  max_total_bytes: 100
approvals:
  timeout_s: 0
  tools: ['*@*', execute_command]
`}, nil)
	if len(c.Server.AllowedHosts) != 3 || c.I18n.DefaultLanguage != "zh" || c.I18n.Aliases["zh-mo"] != "zh" || c.I18n.Aliases["english"] != "en" || c.Observability.MetricsMaxUsers != 0 {
		t.Errorf("loaded %+v %+v", c.Server, c.I18n)
	}
	// "*" is allowed with an API key, from the file or the environment.
	mustLoad(t, files{basePath: "server:\n  allowed_hosts: ['*']\nsecurity:\n  api_key: k\n"}, nil)
	mustLoad(t, files{basePath: "server:\n  allowed_hosts: ['*']\n"}, env{"WUNDER_API_KEY": "k"})
}

// What the documented special values of some keys mean, as the code that
// uses them reads it.
func TestSpecialValues(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: "approvals:\n  timeout_s: 0\nconcurrency:\n  max_active_runs: 4\n  per_user: 50\n  per_user_agents: 2\n"}, nil)
	if c.Approvals.Timeout() >= 0 {
		t.Errorf("approvals.timeout_s 0 = %v, want never (negative)", c.Approvals.Timeout())
	}
	if d := config.Default().Approvals.Timeout(); d != time.Hour {
		t.Errorf("default approvals timeout = %v, want an hour", d)
	}
	if c.Concurrency.UserLimit() != 4 || c.Concurrency.AgentUserLimit() != 2 {
		t.Errorf("per_user 50 over max_active_runs 4 = %d (agents %d), want the global 4 (and 2)", c.Concurrency.UserLimit(), c.Concurrency.AgentUserLimit())
	}

	// skills.enabled: omitted or null is every skill, [] is none.
	for yaml, wantNil := range map[string]bool{"": true, "skills:\n  enabled: ~\n": true, "skills:\n  enabled: []\n": false} {
		c := mustLoad(t, files{basePath: yaml}, nil)
		if (c.Skills.Enabled == nil) != wantNil || len(c.Skills.Enabled) != 0 {
			t.Errorf("%q: skills.enabled = %#v, want nil %v", yaml, c.Skills.Enabled, wantNil)
		}
	}
	if got := config.Default().SkillPaths(); !slices.Equal(got, []string{"data/skills", "skills"}) {
		t.Errorf("default skill paths = %q", got)
	}
	c = mustLoad(t, files{basePath: "skills:\n  paths: [/srv/skills]\n"}, env{"WUNDER_DATA_DIR": "/d"})
	if got := c.SkillPaths(); !slices.Equal(got, []string{"/srv/skills"}) || c.SkillCacheDir() != "/d/cache/skills" {
		t.Errorf("skill paths %q, cache %q", got, c.SkillCacheDir())
	}

	// The routes that carry attachments take the larger body limit.
	c = mustLoad(t, files{basePath: "server:\n  max_body_bytes: 100000000\n"}, nil)
	if c.AttachmentBodyBytes() != 100000000 || config.Default().AttachmentBodyBytes() != 32<<20 {
		t.Errorf("attachment body limit = %d (default %d)", c.AttachmentBodyBytes(), config.Default().AttachmentBodyBytes())
	}
	// An explicit backend wins over a DSN.
	c = mustLoad(t, files{basePath: "storage:\n  backend: sqlite\n"}, env{"WUNDER_POSTGRES_DSN": "postgres://db/w"})
	if c.Storage.EffectiveBackend() != config.BackendSQLite {
		t.Errorf("backend sqlite with a DSN = %s", c.Storage.EffectiveBackend())
	}
	// A model listed only in a disabled state is no default.
	c = mustLoad(t, files{basePath: "llm:\n  models:\n    a: {model: a, enabled: false}\n"}, nil)
	if c.DefaultModelName() != "" || len(c.EnabledModelNames()) != 0 {
		t.Errorf("default of disabled models = %q", c.DefaultModelName())
	}
}

// Each entry of mcp.servers, a2a.services and lsp.servers starts from the
// entry's defaults, whatever the entries around it set; an entry's
// timeout falls back to the section's.
func TestListEntriesStartFromTheirDefaults(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
mcp:
  timeout_s: 45
  servers:
    - {name: off, url: 'http://a/mcp', enabled: false, timeout_s: 5}
    - {name: fs, transport: stdio, command: fs-server}
    - {name: web, url: 'http://b/mcp'}
a2a:
  timeout_s: 90
  services:
    - {name: deep, endpoint: 'http://p', max_depth: 9, enabled: false, timeout_s: 3}
    - {name: plain, endpoint: 'http://q'}
lsp:
  servers:
    - {id: a, enabled: false}
    - {id: b}
`}, nil)
	mcp := c.MCP.Servers
	if mcp[1].Enabled != true || mcp[2].Transport != config.MCPStreamableHTTP || !mcp[2].Enabled || mcp[0].Enabled {
		t.Errorf("mcp servers = %+v", mcp)
	}
	if mcp[0].Timeout(c.MCP) != 5*time.Second || mcp[2].Timeout(c.MCP) != 45*time.Second {
		t.Errorf("mcp timeouts %v, %v; want the server's 5s and the section's 45s", mcp[0].Timeout(c.MCP), mcp[2].Timeout(c.MCP))
	}
	a2a := c.A2A.Services
	if a2a[1].MaxDepth != 3 || !a2a[1].Enabled || a2a[0].MaxDepth != 9 || a2a[0].Enabled {
		t.Errorf("a2a services = %+v", a2a)
	}
	if a2a[0].Timeout(c.A2A) != 3*time.Second || a2a[1].Timeout(c.A2A) != 90*time.Second {
		t.Errorf("a2a timeouts %v, %v", a2a[0].Timeout(c.A2A), a2a[1].Timeout(c.A2A))
	}
	if c.LSP.Servers[0].Enabled || !c.LSP.Servers[1].Enabled {
		t.Errorf("lsp servers = %+v", c.LSP.Servers)
	}

	// An override replaces a list whole; its entries start from the
	// defaults again, not from the base file's entry at that index.
	c = mustLoad(t, files{
		basePath:     "a2a:\n  services:\n    - {name: deep, endpoint: 'http://p', max_depth: 9, enabled: false}\n",
		overridePath: "a2a:\n  services:\n    - {name: other, endpoint: 'http://o'}\n",
	}, nil)
	if s := c.A2A.Services; len(s) != 1 || s[0].Name != "other" || s[0].MaxDepth != 3 || !s[0].Enabled {
		t.Errorf("services after the override = %+v", s)
	}
}

// A deployment that offers one language loads: the default aliases of
// the other one are left out (an alias the file sets to it is still an
// error, in the bounds above), here and through the admin API.
func TestOneLanguageDropsTheOthersDefaultAliases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lang, other, kept, dropped string }{
		{"en", "zh", "english", "chinese"},
		{"zh", "en", "中文", "en-us"},
	} {
		c := mustLoad(t, files{basePath: "i18n:\n  default_language: " + tc.lang + "\n  supported_languages: [" + tc.lang + "]\n"}, nil)
		if c.I18n.Aliases[tc.kept] != tc.lang {
			t.Errorf("[%s]: alias %s = %q, want it kept", tc.lang, tc.kept, c.I18n.Aliases[tc.kept])
		}
		for alias, target := range c.I18n.Aliases {
			if target == tc.other {
				t.Errorf("[%s]: alias %s -> %s kept", tc.lang, alias, target)
			}
		}
		if _, ok := c.I18n.Aliases[tc.dropped]; ok {
			t.Errorf("[%s]: default alias %s kept", tc.lang, tc.dropped)
		}
	}
	next, err := config.Default().WithSection("i18n", map[string]any{"default_language": "en", "supported_languages": []any{"en"}})
	if err != nil {
		t.Fatalf("i18n with English only through WithSection: %v", err)
	}
	if _, ok := next.I18n.Aliases["zh-cn"]; ok || next.I18n.Aliases["en-gb"] != "en" {
		t.Errorf("aliases = %v", next.I18n.Aliases)
	}
}
