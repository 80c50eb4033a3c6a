package config

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is the whole wunder configuration. The zero value is not useful: start
// from [Default] or [Load]. Every field's default is set in defaults.go and
// nowhere else; the comments below repeat them for the reader.
//
// YAML keys are snake_case. Keys ending in _s hold whole seconds and keys
// ending in _ms whole milliseconds; the sections have methods that return
// them as [time.Duration].
type Config struct {
	// DataDir holds the SQLite file, workspaces and the override file.
	// Default "./data"; env WUNDER_DATA_DIR.
	DataDir string `yaml:"data_dir"`

	Server        Server        `yaml:"server"`
	Concurrency   Concurrency   `yaml:"concurrency"`
	Security      Security      `yaml:"security"`
	Auth          Auth          `yaml:"auth"`
	I18n          I18n          `yaml:"i18n"`
	CORS          CORS          `yaml:"cors"`
	LLM           LLM           `yaml:"llm"`
	Tools         Tools         `yaml:"tools"`
	Workspace     Workspace     `yaml:"workspace"`
	Storage       Storage       `yaml:"storage"`
	Observability Observability `yaml:"observability"`
	Tuning        Tuning        `yaml:"tuning"`
	MCP           MCP           `yaml:"mcp"`
	A2A           A2A           `yaml:"a2a"`
	LSP           LSP           `yaml:"lsp"`
	Sandbox       Sandbox       `yaml:"sandbox"`
	Skills        Skills        `yaml:"skills"`
	Replan        Replan        `yaml:"replan"`
	GoalCheck     GoalCheck     `yaml:"goal_check"`
	Approvals     Approvals     `yaml:"approvals"`
	Questions     Questions     `yaml:"questions"`
	UserTools     UserTools     `yaml:"user_tools"`
	Knowledge     Knowledge     `yaml:"knowledge"`
	Memory        Memory        `yaml:"memory"`
	Attachments   Attachments   `yaml:"attachments"`
	Compaction    Compaction    `yaml:"compaction"`
	Evaluation    Evaluation    `yaml:"evaluation"`
	Throughput    Throughput    `yaml:"throughput"`

	// meta is what Load learned on the way: where each value came from and
	// the warnings to log. It is nil for a Config built in code.
	meta *meta
}

// Server configures the HTTP listener.
type Server struct {
	// Host to listen on. Default "127.0.0.1": only this machine can connect.
	// "0.0.0.0", "::" and "" mean all interfaces; any host that is not a
	// loopback address (see [IsLoopback]) needs security.api_key or
	// security.allow_unauthenticated. Env WUNDER_HOST.
	Host string `yaml:"host"`
	// Port to listen on, 1-65535. Default 8000; env WUNDER_PORT.
	Port int `yaml:"port"`
	// MaxBodyBytes caps a request body. Default 1 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadHeaderTimeoutSeconds (read_header_timeout_s) bounds reading request
	// headers. Default 10.
	ReadHeaderTimeoutSeconds int `yaml:"read_header_timeout_s"`
	// ReadTimeoutSeconds (read_timeout_s) bounds reading a whole request,
	// headers and body: a body still arriving after it is cut off (408 on
	// the JSON routes). Streamed answers are not bounded by it. Default 30.
	ReadTimeoutSeconds int `yaml:"read_timeout_s"`
	// IdleTimeoutSeconds (idle_timeout_s) closes a keep-alive connection
	// idle that long. Default 120.
	IdleTimeoutSeconds int `yaml:"idle_timeout_s"`
	// MaxHeaderBytes bounds a request's header block (HTTP/1.1 request
	// line and headers; the HTTP/2 header list). Default 65536.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// AllowedHosts are the host names, without port, the server answers
	// for besides the loopback names (localhost, *.localhost), IP literals
	// and the host of public_url: "wunder.example.com", "*.example.com"
	// for its subdomains, "*" for every host (only with security.api_key).
	// Any other Host header gets 421, and a browser Origin that is none of
	// them (nor in cors.allow_origins) 403: the defence against DNS
	// rebinding and cross-site requests (docs/security.md). Env
	// WUNDER_ALLOWED_HOSTS, comma-separated. Default none.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// ShutdownTimeoutSeconds (shutdown_timeout_s) bounds graceful shutdown.
	// Default 15.
	ShutdownTimeoutSeconds int `yaml:"shutdown_timeout_s"`
	// DrainDelaySeconds (drain_delay_s) is how long a server told to stop
	// with SIGTERM keeps serving after its /readyz turned 503, so that a
	// load balancer's health checks take it out of rotation before it
	// stops taking work (docs/operations.md). Ctrl-C (SIGINT) does not
	// wait. Default 0.
	DrainDelaySeconds int `yaml:"drain_delay_s"`
	// SSEHeartbeatSeconds (sse_heartbeat_s) is the interval of SSE comment
	// heartbeats; 0 turns them off. Default 15.
	SSEHeartbeatSeconds int `yaml:"sse_heartbeat_s"`
	// HTTP2PingSeconds (http2_ping_s): an HTTP/2 connection on which
	// nothing arrived for this long is sent a PING, and closed when no
	// answer comes within 15 s. This is the keep-alive of gRPC streams
	// (which have no comments), so that proxies keep a quiet stream open
	// and a peer that went away is noticed. 0 turns it off. Default 30.
	HTTP2PingSeconds int `yaml:"http2_ping_s"`
	// PublicURL is the external base URL (scheme://host[:port][/prefix])
	// used in agent cards and links; "" derives it from the request.
	PublicURL string `yaml:"public_url"`
}

// Addr is the listen address, host:port (IPv6 hosts are bracketed).
func (c *Config) Addr() string {
	return net.JoinHostPort(c.Server.Host, strconv.Itoa(c.Server.Port))
}

// IsLoopback reports whether a server.host value (or the host of a bound
// address) is reachable from this machine only: "localhost" or a loopback
// IP such as 127.0.0.1 or ::1. "", "0.0.0.0" and "::" mean all interfaces.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ReadHeaderTimeout is read_header_timeout_s as a duration.
func (s Server) ReadHeaderTimeout() time.Duration { return seconds(s.ReadHeaderTimeoutSeconds) }

// ReadTimeout is read_timeout_s as a duration.
func (s Server) ReadTimeout() time.Duration { return seconds(s.ReadTimeoutSeconds) }

// IdleTimeout is idle_timeout_s as a duration.
func (s Server) IdleTimeout() time.Duration { return seconds(s.IdleTimeoutSeconds) }

// HTTP2Ping is http2_ping_s as a duration; 0 means no pings.
func (s Server) HTTP2Ping() time.Duration { return seconds(s.HTTP2PingSeconds) }

// DrainDelay is drain_delay_s as a duration.
func (s Server) DrainDelay() time.Duration { return seconds(s.DrainDelaySeconds) }

// ShutdownTimeout is shutdown_timeout_s as a duration.
func (s Server) ShutdownTimeout() time.Duration { return seconds(s.ShutdownTimeoutSeconds) }

// SSEHeartbeat is sse_heartbeat_s as a duration; 0 means no heartbeats.
func (s Server) SSEHeartbeat() time.Duration { return seconds(s.SSEHeartbeatSeconds) }

// Auth configures user accounts and their tokens (the /wunder/auth routes).
type Auth struct {
	// AllowRegister (allow_register) opens POST /wunder/auth/register to
	// anyone who reaches the server. Default false: admins create accounts
	// (POST /wunder/admin/user_accounts, or `wunder user add`).
	AllowRegister bool `yaml:"allow_register"`
	// TokenTTLSeconds (token_ttl_s) is the lifetime of a login token, at
	// most max_token_ttl_s. Default 86400 (a day).
	TokenTTLSeconds int `yaml:"token_ttl_s"`
	// MaxTokenTTLSeconds (max_token_ttl_s) bounds the lifetime of every
	// token wunder issues: login tokens, and named API tokens, whose ttl_s
	// may not exceed it (an API token that names none gets it). At least
	// 60 and at most 3153600000 (a hundred years). Default 31536000 (a
	// year).
	MaxTokenTTLSeconds int `yaml:"max_token_ttl_s"`
	// JWT accepts bearer JWTs of an external identity provider, verified
	// against its JWKS. Off while jwks_url is empty.
	JWT JWT `yaml:"jwt"`
	// RateLimit limits requests per principal.
	RateLimit RateLimit `yaml:"rate_limit"`
	// MaxInFlight (max_in_flight) bounds the requests one principal (a
	// user, or an anonymous caller's address) has in flight at once on
	// this replica,
	// streams included: past it a request gets 429 with Retry-After. The
	// API key is not limited. Behind a proxy every anonymous caller has
	// the proxy's address, and shares its limit. 0 = no limit. Default 128.
	MaxInFlight int `yaml:"max_in_flight"`
	// Login limits password logins (and registrations) before any password
	// is hashed.
	Login Login `yaml:"login"`
	// PasswordHashing bounds what hashing passwords may take at once.
	PasswordHashing PasswordHashing `yaml:"password_hashing"`
}

// Login limits password attempts: a token bucket per user id (its case
// folded) and one per client address, across every id it tries. A refused
// attempt is 429 with Retry-After and costs no hashing.
type Login struct {
	// PerUser (per_user) limits the attempts on one user id, from
	// anywhere. Default 1 a second, 5 at once.
	PerUser RateLimit `yaml:"per_user"`
	// PerAddress (per_address) limits the attempts of one client address
	// (an IPv6 address by its /64), whatever ids it names: password
	// spraying. Behind a proxy every client has the proxy's address.
	// Default 1 a second, 20 at once.
	PerAddress RateLimit `yaml:"per_address"`
}

// PasswordHashing bounds argon2id hashing (login, registration, password
// changes): each hash takes 64 MiB while it runs, so the memory allowed
// decides how many run at once. A request that finds them all busy waits
// up to max_wait_s, then gets 503 with Retry-After.
type PasswordHashing struct {
	// MaxMemoryMB (max_memory_mb) is the memory password hashes may take
	// at once: max_memory_mb / 64 hashes run side by side. At least 64.
	// Default 256 (four at once).
	MaxMemoryMB int `yaml:"max_memory_mb"`
	// MaxWaitSeconds (max_wait_s) is how long a request waits for a free
	// hash; 0 answers 503 at once. At most 60. Default 2.
	MaxWaitSeconds int `yaml:"max_wait_s"`
}

// MaxWait is max_wait_s as a duration.
func (p PasswordHashing) MaxWait() time.Duration { return seconds(p.MaxWaitSeconds) }

// RateLimit is a token bucket per principal (a user, the API key, or the
// address of an anonymous caller).
type RateLimit struct {
	// PerSecond (per_second) is the sustained rate; 0 = no limit.
	// Default 0.
	PerSecond float64 `yaml:"per_second"`
	// Burst is how many requests may come at once, >= 1. Default 20.
	Burst int `yaml:"burst"`
}

// JWT configures tokens from an external identity provider.
type JWT struct {
	// Issuer (iss) the tokens must carry. Required with jwks_url.
	Issuer string `yaml:"issuer"`
	// Audience (aud) the tokens must carry. Required with jwks_url.
	Audience string `yaml:"audience"`
	// JWKSURL is where the provider publishes its keys: https, or http on
	// a loopback host. "" turns JWTs off. Default "".
	JWKSURL string `yaml:"jwks_url"`
	// UserClaim carries the wunder user id; a dotted name reads a nested
	// claim. Default "sub".
	UserClaim string `yaml:"user_claim"`
	// RolesClaim, when set, carries roles ("admin", "user"). Default "".
	RolesClaim string `yaml:"roles_claim"`
	// LeewaySeconds (leeway_s) tolerates clock skew on exp/nbf/iat.
	// Default 0.
	LeewaySeconds int `yaml:"leeway_s"`
}

// TokenTTL is token_ttl_s as a duration.
func (a Auth) TokenTTL() time.Duration { return time.Duration(a.TokenTTLSeconds) * time.Second }

// MaxTokenTTL is max_token_ttl_s as a duration.
func (a Auth) MaxTokenTTL() time.Duration { return time.Duration(a.MaxTokenTTLSeconds) * time.Second }

// Concurrency configures the session manager's limits and queue.
type Concurrency struct {
	// MaxActiveRuns is the global limit on running runs. Default 32.
	// Deprecated spelling accepted: server.max_active_sessions.
	MaxActiveRuns int `yaml:"max_active_runs"`
	// QueueSize bounds the FIFO of runs waiting for a slot; when it is full a
	// request gets 503 with Retry-After. 0 = no queue. Default 128.
	QueueSize int `yaml:"queue_size"`
	// QueueRetryAfterSeconds (queue_retry_after_s) is the Retry-After sent
	// with that 503. Default 5.
	QueueRetryAfterSeconds int `yaml:"queue_retry_after_s"`
	// PerUser is the number of running runs one user may have through
	// /wunder; 0 = the global limit. Default 1.
	PerUser int `yaml:"per_user"`
	// PerUserAgents is the same limit for A2A, MCP and Connect callers;
	// 0 = the global limit. Default 0.
	PerUserAgents int `yaml:"per_user_agents"`
	// ClusterMaxRuns bounds the runs in flight (queued, running or
	// waiting) across every replica sharing the store; beyond it a request
	// gets 503 cluster_full with Retry-After. 0 = none: max_active_runs and
	// the queue bound each replica alone. Default 0.
	ClusterMaxRuns int `yaml:"cluster_max_runs"`
	// LockTTLSeconds (lock_ttl_s) is the time-to-live of a session lock
	// and of an instance's lease, renewed every third of it while the
	// process lives: a replica that dies is taken over within it, and the
	// reapers look every third of it. Default 15.
	LockTTLSeconds int `yaml:"lock_ttl_s"`
	// ResumeInterrupted resumes a run whose server died, on the server that
	// finds it, from its last stored round, instead of ending it failed
	// with stop_reason "interrupted". Default true.
	ResumeInterrupted bool `yaml:"resume_interrupted"`
}

// QueueRetryAfter is queue_retry_after_s as a duration.
func (c Concurrency) QueueRetryAfter() time.Duration { return seconds(c.QueueRetryAfterSeconds) }

// LockTTL is lock_ttl_s as a duration.
func (c Concurrency) LockTTL() time.Duration { return seconds(c.LockTTLSeconds) }

// UserLimit is the effective per-user limit for /wunder callers.
func (c Concurrency) UserLimit() int { return effectiveLimit(c.PerUser, c.MaxActiveRuns) }

// AgentUserLimit is the effective per-user limit for A2A, MCP and Connect
// callers.
func (c Concurrency) AgentUserLimit() int { return effectiveLimit(c.PerUserAgents, c.MaxActiveRuns) }

func effectiveLimit(n, global int) int {
	if n <= 0 || n > global {
		return global
	}
	return n
}

// Security configures the admin key and what tools may touch.
type Security struct {
	// APIKey is the admin API key (X-API-Key or bearer); "" = no admin key.
	// Env WUNDER_API_KEY. Masked by [Config.Redacted].
	APIKey string `yaml:"api_key" secret:"true"`
	// AllowUnauthenticated (allow_unauthenticated) lets the server listen
	// beyond loopback without an API key, so that anyone who reaches the
	// port can run tasks. Default false: with no API key, server.host must
	// be a loopback address.
	AllowUnauthenticated bool `yaml:"allow_unauthenticated"`
	// AllowCommands are the executables execute_command may start.
	AllowCommands []string `yaml:"allow_commands"`
	// DenyGlobs are workspace paths no file tool may read or write.
	DenyGlobs []string `yaml:"deny_globs"`
	// CommandTimeoutSeconds (command_timeout_s) is a command's timeout when
	// the call names none. Default 60.
	CommandTimeoutSeconds int `yaml:"command_timeout_s"`
	// MaxCommandTimeoutSeconds (max_command_timeout_s) caps the timeout a
	// call may ask for. Default 600.
	MaxCommandTimeoutSeconds int `yaml:"max_command_timeout_s"`
	// MaxOutputBytes caps the output a command returns to the model.
	// Default 65536.
	MaxOutputBytes int `yaml:"max_output_bytes"`
	// MaxFileBytes caps a file read or written by a tool. Default 1 MiB.
	MaxFileBytes int64 `yaml:"max_file_bytes"`
}

// CommandTimeout is command_timeout_s as a duration.
func (s Security) CommandTimeout() time.Duration { return seconds(s.CommandTimeoutSeconds) }

// MaxCommandTimeout is max_command_timeout_s as a duration.
func (s Security) MaxCommandTimeout() time.Duration { return seconds(s.MaxCommandTimeoutSeconds) }

// I18n configures the languages of prompts and messages.
type I18n struct {
	// DefaultLanguage is used when a request names none. Default "en".
	DefaultLanguage string `yaml:"default_language"`
	// SupportedLanguages are the languages offered; each is en or zh.
	SupportedLanguages []string `yaml:"supported_languages"`
	// Aliases map other names of a language (a request's language or an
	// Accept-Language tag, compared case-insensitively) to a supported one:
	// zh-CN -> zh. Default: the common regional tags of en and zh.
	Aliases map[string]string `yaml:"aliases"`
}

// CORS configures cross-origin access to the HTTP API.
type CORS struct {
	// AllowOrigins lists origins (scheme://host[:port]) or "*"; empty turns
	// CORS off.
	AllowOrigins     []string `yaml:"allow_origins"`
	AllowMethods     []string `yaml:"allow_methods"`
	AllowHeaders     []string `yaml:"allow_headers"`
	AllowCredentials bool     `yaml:"allow_credentials"`
}

// Enabled reports whether CORS headers are sent at all.
func (c CORS) Enabled() bool { return len(c.AllowOrigins) > 0 }

// Tools configures the tool registry.
type Tools struct {
	// NameSeparator encodes '@' in tool names on wires that forbid it
	// (OpenAI function names, MCP tool names). Default "__".
	NameSeparator string  `yaml:"name_separator"`
	Builtin       Builtin `yaml:"builtin"`
	// AdminOnly names the tools only admins may use (canonical names or
	// path.Match globs: "execute_command", "ops@*"): a user without the
	// admin role neither sees nor calls them, on any path
	// (orchestrator/policy.go). Without an API key every caller is the
	// local operator, an admin. Default none.
	AdminOnly []string `yaml:"admin_only"`
}

// Builtin configures the built-in tools.
type Builtin struct {
	// Enabled lists the built-in tools offered; empty = all of them.
	Enabled []string `yaml:"enabled"`
}

// Workspace configures the per-user workspaces.
type Workspace struct {
	// Root holds one directory per user; "" = <data_dir>/workspaces.
	Root string `yaml:"root"`
	// MaxHistoryItems caps the messages of a session kept in a prompt.
	// Default 200.
	MaxHistoryItems int `yaml:"max_history_items"`
	// MaxUploadBytes caps one file uploaded through
	// POST /wunder/workspace/upload. Default 64 MiB.
	MaxUploadBytes int64 `yaml:"max_upload_bytes"`
	// MaxUploadTotalBytes caps the body of one upload (every file of it).
	// Default 256 MiB; at least max_upload_bytes.
	MaxUploadTotalBytes int64 `yaml:"max_upload_total_bytes"`
	// MaxTreeEntries and MaxTreeBytes bound one copy or archive of the
	// workspace API. Defaults 10000 entries, 512 MiB.
	MaxTreeEntries int   `yaml:"max_tree_entries"`
	MaxTreeBytes   int64 `yaml:"max_tree_bytes"`
	// RetentionDays (retention_days): the janitor deletes workspace files
	// not modified for this many days, then the directories it emptied.
	// 0 = keep them forever. Default 0.
	RetentionDays int `yaml:"retention_days"`
	// MaxBytesPerUser (max_bytes_per_user) is each user's workspace quota:
	// the bytes of its files. Uploads, writes and copies that would go
	// over it are refused (413 quota_exceeded, or a tool error), and a
	// command that takes the workspace over it is stopped. 0 = no quota.
	// Default 1 GiB.
	MaxBytesPerUser int64 `yaml:"max_bytes_per_user"`
}

// Storage configures the database.
type Storage struct {
	// Backend is auto, sqlite or postgres. auto = postgres when a DSN is
	// set, else sqlite; see [Storage.EffectiveBackend]. Default auto.
	Backend string `yaml:"backend"`
	// DBPath is the SQLite file; "" = <data_dir>/wunder.db.
	DBPath   string   `yaml:"db_path"`
	Postgres Postgres `yaml:"postgres"`
	// EventRetentionDays (event_retention_days): the janitor deletes the
	// events of runs that ended this many days ago; the runs, their answers
	// and the sessions' history stay. 0 = keep them forever. Default 0.
	EventRetentionDays int `yaml:"event_retention_days"`
	// AuditRetentionDays (audit_retention_days): the janitor deletes the
	// audit records (tool logs: every decision on a tool call, and the
	// calls' arguments and results) older than this many days. 0 = keep
	// them forever. Default 90.
	AuditRetentionDays int `yaml:"audit_retention_days"`
	// A2APeerIDRetentionDays (a2a_peer_id_retention_days): the janitor
	// deletes the A2A pass-through's records of who owns a task or context
	// at a published peer (a2a_peer_ids) not used for this many days; the
	// owner then reaches that task no more. 0 = keep them forever.
	// Default 30.
	A2APeerIDRetentionDays int `yaml:"a2a_peer_id_retention_days"`
	// JanitorIntervalSeconds (janitor_interval_s): how often the janitor
	// applies the retention settings, >= 60. Default 3600.
	JanitorIntervalSeconds int `yaml:"janitor_interval_s"`
}

// JanitorInterval is janitor_interval_s as a duration.
func (s Storage) JanitorInterval() time.Duration { return seconds(s.JanitorIntervalSeconds) }

// Storage backends.
const (
	BackendAuto     = "auto"
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// EffectiveBackend resolves auto to sqlite or postgres.
func (s Storage) EffectiveBackend() string {
	if s.Backend != BackendAuto {
		return s.Backend
	}
	if s.Postgres.DSN != "" {
		return BackendPostgres
	}
	return BackendSQLite
}

// Postgres configures the PostgreSQL connection.
type Postgres struct {
	// DSN is a postgres:// URL or a key=value string. Env
	// WUNDER_POSTGRES_DSN. Its password is masked by [Config.Redacted].
	DSN string `yaml:"dsn" secret:"dsn"`
	// ConnectTimeoutSeconds (connect_timeout_s). Default 10.
	ConnectTimeoutSeconds int `yaml:"connect_timeout_s"`
	// MaxOpenConns caps the pool. Default 20.
	MaxOpenConns int `yaml:"max_open_conns"`
}

// ConnectTimeout is connect_timeout_s as a duration.
func (p Postgres) ConnectTimeout() time.Duration { return seconds(p.ConnectTimeoutSeconds) }

// Observability configures logging and the event log.
type Observability struct {
	// LogLevel is debug, info, warn or error. Default info; env
	// WUNDER_LOG_LEVEL.
	LogLevel string `yaml:"log_level"`
	// LogFormat is text or json. Default text.
	LogFormat string `yaml:"log_format"`
	// EventPayloadMaxChars truncates persisted event payloads; 0 = off.
	EventPayloadMaxChars int `yaml:"event_payload_max_chars"`
	// MonitorEventLimit (monitor_event_limit): the events of a session's
	// newest run GET /wunder/admin/monitor/{session_id} shows when the
	// request names no ?events=, 1-2000. Default 200.
	MonitorEventLimit int `yaml:"monitor_event_limit"`
	// DropEventTypes are event types the event log does not record at all:
	// neither streamed nor stored, so seqs stay dense and a replay equals
	// the live stream. final and error cannot be dropped.
	DropEventTypes []string `yaml:"drop_event_types"`
	// PProf serves the Go profiler at /debug/pprof/ to admins. Default
	// false; env WUNDER_PPROF.
	PProf bool `yaml:"pprof"`
	// MetricsPublic serves /metrics without credentials (a scraper on a
	// private network). Default false: an admin credential is needed.
	MetricsPublic bool `yaml:"metrics_public"`
	// MetricsMaxUsers (metrics_max_users) bounds the users with
	// Prometheus series of their own (wunder_user_runs_total and the
	// like): past it, users are counted together as user="_other". 0
	// turns the per-user series off. Default 1000.
	MetricsMaxUsers int `yaml:"metrics_max_users"`
	// OTLP exports traces. Off unless an endpoint is set here or in the
	// OTEL_EXPORTER_OTLP_ENDPOINT variable.
	OTLP OTLP `yaml:"otlp"`
	// StoreSpanThresholdMS (store_span_threshold_ms): store operations at
	// least this slow get a span of their own. Default 10; 0 = none.
	StoreSpanThresholdMS int `yaml:"store_span_threshold_ms"`
	// KeepOutputChunks (keep_output_chunks) keeps each chunk of the
	// model's streamed output as its own llm_output_delta event, as the
	// model sent it. Default false: the chunks that come while the store
	// writes the run's events before them, which nobody has seen yet,
	// become one event.
	KeepOutputChunks bool `yaml:"keep_output_chunks"`
}

// OTLP protocols.
const (
	OTLPHTTP = "http/protobuf"
	OTLPGRPC = "grpc"
)

// OTLP is where traces are exported (observability.otlp).
type OTLP struct {
	// Endpoint is the collector's base URL: http://collector:4318 for
	// http/protobuf (/v1/traces is added), http://collector:4317 for grpc.
	// "" = the OTEL_EXPORTER_OTLP_ENDPOINT variable; neither: traces off.
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf or grpc; "" = OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string `yaml:"protocol"`
	// Headers are sent with every export. Masked by [Config.Redacted].
	Headers map[string]string `yaml:"headers" secret:"true"`
}

// StoreSpanThreshold is store_span_threshold_ms as a duration.
func (o Observability) StoreSpanThreshold() time.Duration {
	return time.Duration(o.StoreSpanThresholdMS) * time.Millisecond
}

// Warnings are the non-fatal findings of [Load], such as deprecated keys, in
// a stable order. Log them once the logger is set up.
func (c *Config) Warnings() []string {
	if c.meta == nil {
		return nil
	}
	return append([]string(nil), c.meta.warnings...)
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func millis(n int) time.Duration { return time.Duration(n) * time.Millisecond }
