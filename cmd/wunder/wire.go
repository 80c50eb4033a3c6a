package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"sync/atomic"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/evaluation"
	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
	"github.com/wunder/wunder/toolconfig"
)

// loadConfig reads the configuration; its errors carry exitConfig.
func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		return nil, withCode(exitConfig, fmt.Errorf("invalid configuration:\n%w", err))
	}
	return cfg, nil
}

func newLogger(cfg *config.Config) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.Observability.LogLevel))
	opts := &slog.HandlerOptions{Level: lvl}
	if cfg.Observability.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger, migrate bool) (*storage.Store, error) {
	return openServerStore(ctx, cfg, log, migrate, nil, false)
}

// openServerStore is openStore telling observe of every operation and,
// with sole, asking to hold a SQLite database alone (storage.Options.Sole:
// the process that runs the orchestrator).
func openServerStore(ctx context.Context, cfg *config.Config, log *slog.Logger, migrate bool, observe storage.OpFunc, sole bool) (*storage.Store, error) {
	return storage.Open(ctx, storage.Options{
		Sole:           sole,
		Observe:        observe,
		Backend:        cfg.Storage.EffectiveBackend(),
		SQLitePath:     cfg.Storage.DBPath,
		PostgresDSN:    cfg.Storage.Postgres.DSN,
		MaxOpenConns:   cfg.Storage.Postgres.MaxOpenConns,
		ConnectTimeout: cfg.Storage.Postgres.ConnectTimeout(),
		Logger:         log,
		AutoMigrate:    migrate,
	})
}

// newModels builds the model registry from llm.models.
func newModels(cfg *config.Config) (*llm.Registry, error) {
	entries := map[string]llm.Entry{}
	for _, name := range cfg.EnabledModelNames() {
		m := cfg.LLM.Models[name]
		includeUsage := m.StreamIncludeUsage
		lc := llm.Config{
			Name: name, Provider: m.Provider, BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Model,
			Script: m.Script, Temperature: m.Temperature, MaxOutput: m.MaxOutput,
			Timeout: m.Timeout(), Stream: m.Stream && m.StreamAlways, StreamIncludeUsage: &includeUsage,
			Retry: llm.RetryConfig{MaxAttempts: m.Retry.MaxAttempts, InitialBackoff: m.Retry.InitialBackoff(), MaxBackoff: m.Retry.MaxBackoff()},
		}
		model, err := llm.NewModel(lc)
		if err != nil {
			return nil, withCode(exitConfig, fmt.Errorf("llm.models.%s: %w", name, err))
		}
		entries[name] = llm.Entry{Model: model, Settings: orchestrator.ModelSettings{
			Name: name, ToolCallMode: m.ToolCallMode, MaxRounds: m.MaxRounds, MaxOutput: m.MaxOutput,
			Temperature: m.Temperature, Stop: m.Stop, Stream: m.Stream, StreamAlways: m.StreamAlways,
			MaxContext: m.MaxContext, CompactionRatio: m.HistoryCompactionRatio,
			CompactionReset: m.HistoryCompactionReset, ModelID: m.Model, SupportVision: m.SupportVision,
		}}
	}
	// Fallbacks wrap a model in a failover over the plain clients, sharing
	// one circuit breaker.
	breaker := llm.NewBreaker(cfg.LLM.CircuitOpen())
	plain := maps.Clone(entries)
	for name, e := range entries {
		fbs := cfg.LLM.Models[name].Fallbacks
		if len(fbs) == 0 {
			continue
		}
		var chain []llm.Named
		for _, fb := range fbs {
			chain = append(chain, llm.Named{Name: fb, Model: plain[fb].Model})
		}
		e.Model = llm.NewFailover(breaker, llm.Named{Name: name, Model: plain[name].Model}, chain...)
		entries[name] = e
	}
	return llm.NewRegistry(cfg.LLM.Default, entries), nil
}

// app is a wired wunder.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	models *liveModels // admin_config.go: replaced by /wunder/admin/llm
	store  *storage.Store
	orch   *orchestrator.Orchestrator
	memory *memory.Memory // wire_memory.go
	gw     *gateway.Server
	ready  func(context.Context) error // readiness
	// draining is set when the server begins to stop (serve.go): it is
	// not ready from then on.
	draining *atomic.Bool
	a2a      *a2aParts         // wire_a2a.go
	lsp      *lspLive          // wire_lsp.go
	mcp      *mcpParts         // wire_mcp.go
	attach   *doc2md.Converter // wire_attachments.go

	userTools *userToolsParts      // wire_usertools.go
	knowledge *knowledgeParts      // wire_knowledge.go
	skills    *skills.Set          // wire_skills.go
	config    *configAdmin         // admin_config.go
	builtin   *builtin.Set         // the built-in tools (admin_config.go enables them)
	janitor   *janitor             // janitor.go
	orphans   *orphans             // orphans.go
	tel       *telemetry.Telemetry // wire_telemetry.go
	perf      *performance         // wire_performance.go

	throughput *throughputParts    // wire_throughput.go
	evaluation *evaluation.Manager // wire_evaluation.go
}

// build wires every component from the configuration. On failure it
// stops what it had already started, newest first.
func build(ctx context.Context, cfg *config.Config, log *slog.Logger) (*app, error) {
	var undo []func()
	fail := func(err error) (*app, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return nil, err
	}
	if err := prepareDataDir(cfg, log); err != nil { // wire_datadir.go
		return nil, err
	}
	cardSign, err := cardSigner(cfg) // wire_a2a.go
	if err != nil {
		return nil, err
	}
	tel, err := newTelemetry(ctx, cfg) // wire_telemetry.go
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { _ = tel.Shutdown(context.Background()) })
	store, err := openServerStore(ctx, cfg, log, true, tel.StoreOp, true)
	if err != nil {
		return fail(fmt.Errorf("storage: %w", err))
	}
	undo = append(undo, func() { store.Close() })
	// With PostgreSQL the admin API's changes live in the database: lay
	// them over the files before anything is built (admin_config.go).
	var cfgStore configStore
	var cfgRev int64
	if cfg.Storage.EffectiveBackend() == "postgres" {
		cfgStore = store
		if cfg, cfgRev, err = applyStoredConfig(ctx, cfg, store, log); err != nil {
			return fail(fmt.Errorf("configuration override: %w", err))
		}
	}
	registry, err := newModels(cfg)
	if err != nil {
		return fail(err)
	}
	models := newLiveModels(registry)
	lspParts := newLSPLive(cfg, log) // wire_lsp.go
	undo = append(undo, func() { _ = lspParts.close(context.Background()) })
	sb := newSandbox(cfg, log)           // wire_sandbox.go
	attach := newConverter(cfg, sb, log) // wire_attachments.go
	tools, err := builtin.New(&builtin.Options{
		Root: cfg.Workspace.Root, AllowCommands: cfg.Security.AllowCommands, DenyGlobs: cfg.Security.DenyGlobs,
		CommandTimeout: commandTimeout(cfg), MaxCommandTimeout: cfg.Security.MaxCommandTimeout(),
		MaxOutputBytes: cfg.Security.MaxOutputBytes, MaxFileBytes: int(cfg.Security.MaxFileBytes),
		Enabled: cfg.Tools.Builtin.Enabled, Diagnostics: lspParts,
		Sandbox: sb, MaxTreeEntries: cfg.Workspace.MaxTreeEntries, MaxTreeBytes: cfg.Workspace.MaxTreeBytes,
		MaxBytesPerUser: cfg.Workspace.MaxBytesPerUser,
	})
	if err != nil {
		return fail(withCode(exitConfig, fmt.Errorf("built-in tools: %w", err)))
	}
	// Tool sources: built-in, A2A peers (wire_a2a.go), LSP (wire_lsp.go),
	// MCP servers (wire_mcp.go), skills (wire_skills.go).
	// One reader of users' tool configurations for every source that has
	// them, so a change made here is seen by all of them at once.
	toolConfigs := toolconfig.NewConfigs(store, 0)
	skillSet := newSkills(cfg, log, tools, sb, store, toolConfigs)
	undo = append(undo, func() { _ = skillSet.Close() })
	toolsets := []orchestrator.Toolset{tools, skillSet}
	a2aTools := newA2ATools(cfg, log, tracedClient(tel))
	undo = append(undo, a2aTools.Close)
	toolsets = append(toolsets, a2aTools)
	lspParts.bind(tools)
	toolsets = append(toolsets, lspParts)
	mcpParts, err := newMCP(ctx, cfg, log, store, wrapTransport(tel))
	if err != nil {
		return fail(err)
	}
	undo = append(undo, mcpParts.close)
	toolsets = append(toolsets, mcpParts.toolsets()...)
	userTools := newUserTools(cfg, log, store, toolConfigs) // wire_usertools.go
	undo = append(undo, userTools.close)
	toolsets = append(toolsets, userTools.toolsets()...)
	knowledgeParts, err := newKnowledge(cfg, log, store, models, toolConfigs) // wire_knowledge.go
	if err != nil {
		return fail(err)
	}
	undo = append(undo, knowledgeParts.close)
	toolsets = append(toolsets, knowledgeParts.toolsets()...)
	jwt, err := newJWTVerifier(ctx, cfg.Auth.JWT, log)
	if err != nil {
		return fail(err)
	}
	reg := orchestrator.NewRegistry(cfg.Tools.NameSeparator, log, toolsets...)
	reg.SetAccess(toolAccess{store}) // per-user tool rules (/wunder/admin/user_accounts/{id}/tool_access)
	reg.SetPolicy(policyOptions(cfg, store, mcpParts))
	mem := newMemory(cfg, store, models, log) // wire_memory.go
	perf := newPerformance()                  // wire_performance.go: the admin's performance page
	orch := orchestrator.New(store, models, reg, &orchestrator.Options{
		MaxActiveRuns: cfg.Concurrency.MaxActiveRuns, QueueSize: queueSize(cfg.Concurrency.QueueSize),
		QueueRetryAfter: cfg.Concurrency.QueueRetryAfter(),
		PerUser:         cfg.Concurrency.UserLimit(), PerUserAgents: cfg.Concurrency.AgentUserLimit(),
		ClusterMaxRuns: cfg.Concurrency.ClusterMaxRuns,
		LockTTL:        cfg.Concurrency.LockTTL(), ResumeInterrupted: cfg.Concurrency.ResumeInterrupted,
		OneProcess:      store.Sole(), // SQLite, held alone: a person's slot may be held in memory
		MaxHistoryItems: cfg.Workspace.MaxHistoryItems,
		DefaultLanguage: cfg.I18n.DefaultLanguage, Workspace: tools,
		Events: orchestrator.EventPolicy{Drop: cfg.Observability.DropEventTypes, MaxPayloadChars: cfg.Observability.EventPayloadMaxChars,
			BlockingDelay: delay(cfg.Tuning.BlockingEventDelayMS), StreamDelay: delay(cfg.Tuning.StreamEventDelayMS),
			KeepOutputChunks: cfg.Observability.KeepOutputChunks},
		ToolLogDelay: delay(cfg.Tuning.ToolLogDelayMS),
		Watcher:      store.Watcher(), // PostgreSQL: replicas hear of each other's runs at once
		Replan: orchestrator.ReplanPolicy{Enabled: cfg.Replan.Enabled, MaxRetries: cfg.Replan.MaxRetries,
			MaxReplans: cfg.Replan.MaxReplans, GoalCheck: cfg.GoalCheck.Enabled},
		Approvals: approvalPolicy(cfg.Approvals), Questions: questionPolicy(cfg.Questions), Schemas: schemaValidator{},
		Memory:     mem,
		Compaction: compactionOptions(cfg.Compaction),
		Tokens:     llm.NewTokenCounter(), // tiktoken for OpenAI models, calibrated estimates for others
		Observer:   perf.observe(tel),
		Logger:     log,
	})
	telemetryGauges(tel, orch)
	if n, err := orch.RecoverOrphans(ctx); err != nil {
		log.Warn("orphaned runs not recovered", "err", err)
	} else if n > 0 {
		log.Info("ended runs a stopped process left unfinished", "count", n)
	}
	warnServerOwnedAccounts(ctx, cfg, store, log) // wire_auth.go
	draining := new(atomic.Bool)
	ready := readiness(store, mcpParts, draining)
	throughput := newThroughput(cfg, store, orch, log)             // wire_throughput.go; served below
	evalMgr := newEvaluation(cfg, log, models, store, orch, tools) // wire_evaluation.go
	cfgAdmin := newConfigAdmin(cfg, cfgStore, cfgRev)              // admin_config.go; its app is set below
	var limit gateway.Limiter                                      // an untyped nil when off
	if rl := cfg.Auth.RateLimit; rl.PerSecond > 0 {
		limit = auth.NewLimiter(rl.PerSecond, rl.Burst)
	}
	gw := gateway.New(orch, &gateway.Options{
		APIKey: cfg.Security.APIKey, MaxBodyBytes: cfg.Server.MaxBodyBytes, Heartbeat: cfg.Server.SSEHeartbeat(),
		Attachments: attach, AttachmentBodyBytes: cfg.AttachmentBodyBytes(), // wire_attachments.go
		RateLimit:        limit,
		MaxInFlight:      cfg.Auth.MaxInFlight,
		Auth:             authOptions(cfg, store, jwt), // wire_auth.go
		CORS:             corsOptions(cfg),
		Hosts:            gateway.HostOptions{Allowed: cfg.Server.AllowedHosts, PublicURL: cfg.Server.PublicURL},
		I18n:             gatewayI18n(cfg),
		RequestOverrides: cfg.LLM.RequestOverrides,
		Ready:            ready,
		DataDir:          cfg.DataDir, DeleteWorkspace: deleteWorkspace(tools),
		Version: version,
		Logger:  log,
		LSP:     lspParts,
		MCP:     mcpParts.admin(), // wire_mcp.go
		MCPApps: mcpParts.apps(),  // wire_mcp.go

		UserTools: userTools.api(),       // wire_usertools.go
		Knowledge: knowledgeParts.api(),  // wire_knowledge.go
		Skills:    skillRoutes{skillSet}, // wire_skills.go

		Workspaces: workspaceAPI{tools}, WorkspaceLimits: workspaceLimits(cfg), // wire_workspace.go
		PProf:             cfg.Observability.PProf,
		Config:            cfgAdmin, // admin_config.go
		Memory:            mem,
		Monitor:           monitor.New(orch), // the admin's monitor, over the core
		Performance:       perf.s,
		MonitorEventLimit: cfg.Observability.MonitorEventLimit,
		Models:            models, // GET /wunder/models (names only)

		Metrics: tel.MetricsHandler(), MetricsPublic: cfg.Observability.MetricsPublic, // wire_telemetry.go
		Trace: tracingMiddleware(tel),

		Throughput: throughputAPI{throughput.m}, Evaluation: evaluationAPI{evalMgr}, // wire_throughput.go, wire_evaluation.go
	})
	throughput.serve(gw.Handler())
	a := &app{cfg: cfg, log: log, models: models, store: store, orch: orch, memory: mem, gw: gw, tel: tel, ready: ready, draining: draining, lsp: lspParts, mcp: mcpParts,
		userTools: userTools, knowledge: knowledgeParts, skills: skillSet, config: cfgAdmin, builtin: tools,
		throughput: throughput, evaluation: evalMgr, attach: attach, perf: perf}
	cfgAdmin.a = a
	cfgAdmin.start()
	a.janitor = newJanitor(cfg, store, log) // janitor.go: retention
	a.janitor.start()
	a.perf.start(orch)
	a.orphans = startOrphans(ctx, cfg.Concurrency.LockTTL()/3, log, // orphans.go
		orphanSweep{"evaluations", evalMgr.Recover}, orphanSweep{"load tests", throughput.m.Recover})
	// Front-ends mounted on the gateway, each wired in a file of its own.
	mountConnect(a)                 // wire_connect.go
	mountA2A(a, a2aTools, cardSign) // wire_a2a.go
	mountMCP(a, mcpParts)           // wire_mcp.go
	gw.AttachmentRoutes(attachmentPaths...)
	return a, nil
}

// corsOptions is the cors section as the gateway takes it.
func corsOptions(cfg *config.Config) gateway.CORSOptions {
	return gateway.CORSOptions{
		AllowOrigins: cfg.CORS.AllowOrigins, AllowMethods: cfg.CORS.AllowMethods,
		AllowHeaders: cfg.CORS.AllowHeaders, AllowCredentials: cfg.CORS.AllowCredentials,
	}
}

// readiness is the check of /readyz and gRPC health: the server is not
// stopping (draining), the store answers, and the first discovery of
// every MCP server has settled (bounded by mcp.ready_timeout_s,
// wire_mcp.go).
func readiness(store *storage.Store, mcp *mcpParts, draining *atomic.Bool) func(context.Context) error {
	return func(ctx context.Context) error {
		if draining.Load() {
			return errDraining
		}
		if err := store.Ping(ctx); err != nil {
			return err
		}
		return mcp.ready(ctx)
	}
}

// errDraining is readiness's answer while the server stops.
var errDraining = errors.New("draining: the server is stopping")

// queueSize maps the config's "0 = no queue" to the orchestrator's
// "negative = no queue" (its zero means the default).
func queueSize(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func (a *app) handler() http.Handler { return a.gw.Handler() }

// close stops the orchestrator (waiting for runs until ctx ends) and the store.
func (a *app) close(ctx context.Context) error {
	a.config.close()
	a.janitor.close()
	a.orphans.close()
	a.perf.close()
	a.closeA2A()
	a.throughput.close() // before the core: its runs end first
	a.evaluation.Close()
	err := a.orch.Close(ctx)
	a.memory.Close() // after the core: a run's end may queue a memory task
	a.mcp.close()
	a.userTools.close()
	a.knowledge.close()
	_ = a.skills.Close()
	if lerr := a.lsp.close(ctx); lerr != nil && err == nil {
		err = lerr
	}
	if cerr := a.store.Close(); cerr != nil && err == nil {
		err = cerr
	}
	// Last: the spans of everything above are exported.
	if terr := a.tel.Shutdown(ctx); terr != nil {
		a.log.Warn("traces not all exported", "err", terr)
	}
	return err
}

// toolAccess reads users' tool rules from the account store; a user with
// no account (anonymous use, the A2A and MCP default users) has none.
type toolAccess struct{ st *storage.Store }

func (a toolAccess) ToolAccess(ctx context.Context, userID string) (*orchestrator.ToolAccess, error) {
	rule, err := a.st.GetToolAccess(ctx, userID)
	if errors.Is(err, orchestrator.ErrNotFound) {
		return nil, nil
	}
	return rule, err
}

// delay is one of the tuning section's delays as the orchestrator takes
// it: unset, its default; 0, none.
func delay(ms *int) orchestrator.Delay {
	d, set := config.Millis(ms)
	if !set {
		return orchestrator.Delay{}
	}
	return orchestrator.DelayOf(d)
}

// policyOptions are the one policy point's rules besides the approvals
// and the users' tool access (orchestrator/policy.go).
func policyOptions(cfg *config.Config, store *storage.Store, mcp *mcpParts) orchestrator.PolicyOptions {
	o := orchestrator.PolicyOptions{AdminOnly: cfg.Tools.AdminOnly, Admins: adminUsers{store},
		EveryoneAdmin: cfg.Security.APIKey == ""} // no key: every caller is the local operator
	if mcp != nil {
		o.AllowLists = mcp.set
	}
	return o
}

// adminUsers says who has the admin role, from the accounts; a user with
// no account is not an admin.
type adminUsers struct{ st *storage.Store }

func (a adminUsers) IsAdminUser(ctx context.Context, userID string) (bool, error) {
	u, err := a.st.GetUser(ctx, userID)
	if errors.Is(err, orchestrator.ErrNotFound) {
		return false, nil
	}
	return u.IsAdmin(), err
}

// compactionOptions maps the compaction section (0 meaning none where the
// orchestrator reads 0 as its default).
func compactionOptions(c config.Compaction) orchestrator.CompactionOptions {
	none := func(n int) int {
		if n == 0 {
			return -1
		}
		return n
	}
	return orchestrator.CompactionOptions{
		KeepTailTokens: none(c.KeepTailTokens), SummaryMaxTokens: c.SummaryMaxTokens,
		SummaryTimeout: c.SummaryTimeout(), SafetyMargin: none(c.SafetyMarginTokens),
	}
}
