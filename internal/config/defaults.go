package config

import (
	"path/filepath"
	"slices"
)

// This file is the single source of truth for defaults: [Default] for the
// whole tree and one applyDefaults method per type that appears as a map or
// list entry (a new entry decoded from YAML starts from it). Documentation
// (docs/configuration.md, field comments) repeats these values; a test checks
// that the documented table agrees.

// Default returns the configuration wunder runs with when no file and no
// environment variable says otherwise. Values derived from others
// (workspace.root, storage.db_path) are left empty here and filled by
// [Config.Derive].
func Default() *Config {
	return &Config{
		DataDir: "./data",
		Server: Server{
			Host:                     "127.0.0.1",
			Port:                     8000,
			MaxBodyBytes:             1 << 20,
			ReadHeaderTimeoutSeconds: 10,
			ReadTimeoutSeconds:       30,
			IdleTimeoutSeconds:       120,
			MaxHeaderBytes:           64 << 10,
			ShutdownTimeoutSeconds:   15,
			SSEHeartbeatSeconds:      15,
			HTTP2PingSeconds:         30,
		},
		Concurrency: Concurrency{
			MaxActiveRuns:          32,
			QueueSize:              128,
			QueueRetryAfterSeconds: 5,
			PerUser:                1,
			PerUserAgents:          0,
			LockTTLSeconds:         15,
			ResumeInterrupted:      true,
		},
		Security: Security{
			AllowCommands: []string{
				"ls", "cat", "echo", "pwd", "head", "tail", "wc", "grep", "find", "sort",
				"uniq", "diff", "mkdir", "python3", "python", "go", "node", "git",
			},
			DenyGlobs:                []string{".env", "**/.env", "**/*.pem", "**/*.key"},
			CommandTimeoutSeconds:    60,
			MaxCommandTimeoutSeconds: 600,
			MaxOutputBytes:           65536,
			MaxFileBytes:             1 << 20,
		},
		Auth: Auth{TokenTTLSeconds: 86400, MaxTokenTTLSeconds: 365 * 86400, JWT: JWT{UserClaim: "sub"}, RateLimit: RateLimit{Burst: 20}, MaxInFlight: 128,
			Login:           Login{PerUser: RateLimit{PerSecond: 1, Burst: 5}, PerAddress: RateLimit{PerSecond: 1, Burst: 20}},
			PasswordHashing: PasswordHashing{MaxMemoryMB: 256, MaxWaitSeconds: 2}},
		I18n: I18n{
			DefaultLanguage:    "en",
			SupportedLanguages: []string{"en", "zh"},
			Aliases:            defaultAliases(),
		},
		CORS: CORS{
			AllowOrigins: []string{},
			AllowMethods: []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"},
			AllowHeaders: []string{"Content-Type", "Authorization", "X-API-Key", "Last-Event-ID", "Idempotency-Key"},
		},
		LLM: LLM{
			Models:             map[string]Model{},
			CircuitOpenSeconds: 30,
			RequestOverrides:   []string{"temperature", "max_rounds", "tool_call_mode", "max_output"},
		},
		Tools: Tools{
			NameSeparator: "__",
			Builtin:       Builtin{Enabled: []string{}},
		},
		Workspace: Workspace{
			MaxHistoryItems:     200,
			MaxUploadBytes:      64 << 20,
			MaxUploadTotalBytes: 256 << 20,
			MaxTreeEntries:      10000,
			MaxTreeBytes:        512 << 20,
			MaxBytesPerUser:     1 << 30,
		},
		Storage: Storage{
			Backend:                BackendAuto,
			JanitorIntervalSeconds: 3600,
			AuditRetentionDays:     90,
			A2APeerIDRetentionDays: 30,
			Postgres: Postgres{
				ConnectTimeoutSeconds: 10,
				MaxOpenConns:          20,
			},
		},
		Observability: Observability{
			LogLevel:             "info",
			LogFormat:            "text",
			MonitorEventLimit:    200,
			MetricsMaxUsers:      1000,
			DropEventTypes:       []string{},
			StoreSpanThresholdMS: 10,
		},
		MCP:       mcpDefaults(),
		A2A:       a2aDefaults(),
		LSP:       lspDefaults(),
		Sandbox:   sandboxDefaults(),
		Skills:    skillsDefaults(),
		Replan:    replanDefaults(),
		Approvals: approvalDefaults(),
		Questions: questionDefaults(),

		UserTools:   userToolsDefaults(),
		Knowledge:   knowledgeDefaults(),
		Memory:      memoryDefaults(),
		Attachments: attachmentsDefaults(),
		Compaction:  compactionDefaults(),

		Evaluation: evaluationDefaults(),
		Throughput: throughputDefaults(),
	}
}

// applyDefaults sets the defaults of a new llm.models entry.
func (m *Model) applyDefaults() {
	*m = Model{
		Enabled:                true,
		Provider:               ProviderOpenAI,
		TimeoutSeconds:         120,
		MaxRounds:              8,
		Stream:                 true,
		HistoryCompactionRatio: 0.8,
		HistoryCompactionReset: ResetZero,
		StreamIncludeUsage:     true,
		ToolCallMode:           ToolCallMode,
		Stop:                   []string{},
		Retry: Retry{
			MaxAttempts:          3,
			InitialBackoffMillis: 500,
			MaxBackoffMillis:     8000,
		},
	}
}

// NewModel returns an llm.models entry with its defaults, for code that adds
// models (tests, the admin API).
func NewModel() Model {
	var m Model
	m.applyDefaults()
	return m
}

// entryDefaulter is implemented by the types decoded as map or list entries.
type entryDefaulter interface{ applyDefaults() }

var _ entryDefaulter = (*Model)(nil)

// defaultAliases are the default i18n.aliases: the common regional tags
// and names of en and zh.
func defaultAliases() map[string]string {
	return map[string]string{
		"zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "zh-tw": "zh", "zh-hk": "zh", "zh-hant": "zh", "chinese": "zh", "中文": "zh",
		"en-us": "en", "en-gb": "en", "en-au": "en", "en-ca": "en", "english": "en",
	}
}

// Derive fills the values that default to a path under data_dir:
// workspace.root (<data_dir>/workspaces) and storage.db_path
// (<data_dir>/wunder.db), when they are empty; and leaves out the default
// i18n.aliases of a language that is not in supported_languages (they
// cannot be removed otherwise: maps merge into their defaults). [Load]
// calls it; call it yourself after changing DataDir on a Config from
// [Default].
func (c *Config) Derive() {
	if c.Workspace.Root == "" {
		c.Workspace.Root = filepath.Join(c.DataDir, "workspaces")
	}
	if c.Storage.DBPath == "" {
		c.Storage.DBPath = filepath.Join(c.DataDir, "wunder.db")
	}
	for alias, lang := range defaultAliases() {
		if c.I18n.Aliases[alias] == lang && !slices.Contains(c.I18n.SupportedLanguages, lang) {
			delete(c.I18n.Aliases, alias)
		}
	}
}

// overrideFile is the override file's place under data_dir.
func overrideFile(dataDir string) string {
	return filepath.Join(dataDir, "config", "wunder.override.yaml")
}

// baseFile is the base file looked for when no path is given.
const baseFile = "config/wunder.yaml"
