package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// Backend is what the HTTP front-end needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	GetRun(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	Plan(ctx context.Context, userID, runID string) (*orchestrator.PlanData, error)
	ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error)
	ToolCatalog(ctx context.Context, userID string) (map[string][]orchestrator.CatalogEntry, error)
	SystemPrompt(ctx context.Context, req orchestrator.PromptRequest) (string, error)
	GetSession(ctx context.Context, userID, sessionID string) (*orchestrator.Session, error)
	ListSessions(ctx context.Context, userID string, page orchestrator.Page) ([]*orchestrator.Session, error)
	History(ctx context.Context, userID, sessionID string, limit int) ([]orchestrator.Message, error)
	DeleteSession(ctx context.Context, userID, sessionID string) error
	RenameSession(ctx context.Context, userID, sessionID, title string) (*orchestrator.Session, error)
	Approvals(ctx context.Context, userID, runID string) ([]*orchestrator.Approval, error)
	// Pending lists the runs that wait for a person, each with what it
	// waits for (GET /wunder/pending).
	Pending(ctx context.Context, userID string, page orchestrator.Page) ([]orchestrator.PendingRun, error)
	Wait(ctx context.Context, userID, runID string, after int64, each func(orchestrator.Event) error) (orchestrator.Waited, error)
	Decide(ctx context.Context, userID, runID, approvalID string, d orchestrator.ApprovalDecision) (*orchestrator.Approval, error)
	Answer(ctx context.Context, userID, runID, questionID string, answer json.RawMessage) (*orchestrator.Approval, error)
	// AppResource is the one rule of reading an MCP App's page
	// (GET /wunder/mcp-apps/resource).
	AppResource(ctx context.Context, userID, uri string) (server, upstream string, err error)
	// CallAppTool is an MCP App's tool call from the console
	// (POST /wunder/mcp-apps/call).
	CallAppTool(ctx context.Context, userID, appURI, tool string, args json.RawMessage) (*orchestrator.ToolResult, error)
}

var _ Backend = (*orchestrator.Orchestrator)(nil)

// Options configure the gateway. Zero values mean the defaults stated.
type Options struct {
	// RateLimit, when set, limits requests per principal (auth.rate_limit);
	// nil = no limit.
	RateLimit Limiter
	// MaxInFlight, when > 0, bounds the requests a principal has in flight
	// at once, streams included (auth.max_in_flight, inflight.go); 0 = no
	// limit.
	MaxInFlight int
	// APIKey, when set, is the admin credential, and every call but the
	// open paths needs a credential. Without it, requests without
	// credentials are anonymous (the local operator; start-up allows that
	// on loopback only, unless security.allow_unauthenticated).
	APIKey string
	// Auth configures user accounts and tokens (authn.go); its APIKey and
	// Anonymous are set from APIKey above.
	Auth AuthOptions
	// MaxBodyBytes caps request bodies. Default 1 MiB.
	MaxBodyBytes int64
	// Attachments converts the attachments of run requests and serves the
	// convert routes (attachments.go); nil = a converter with doc2md's
	// default limits.
	Attachments *doc2md.Converter
	// AttachmentBodyBytes is the body limit of the routes that carry
	// attachments (POST /wunder, /wunder/runs and the convert routes),
	// instead of MaxBodyBytes. Default DefaultAttachmentBodyBytes (32 MiB).
	AttachmentBodyBytes int64
	// Heartbeat is the idle interval after which an SSE stream gets a
	// comment line. Default 15s.
	Heartbeat time.Duration
	CORS      CORSOptions
	// Hosts are the host names the server answers for besides the
	// loopback names and IP literals (guard.go); every other Host is
	// refused with 421, and an Origin that is none of them (nor one CORS
	// allows) with 403.
	Hosts HostOptions
	// Ready reports whether dependencies (the store, the first discovery of
	// MCP servers) are usable; it must not block. Nil = ready.
	Ready func(ctx context.Context) error
	// DeleteWorkspace removes a user's workspace when an admin deletes the
	// user's data (DELETE /wunder/admin/users/{user_id}); nil: workspaces
	// are left alone.
	DeleteWorkspace func(ctx context.Context, userID string) error
	// DataDir is the data directory whose disk use the monitor reports
	// ("" = not reported).
	DataDir string
	// Version is reported by /healthz.
	Version string
	Logger  *slog.Logger
	// LSP, when set, serves GET /wunder/admin/lsp and
	// POST /wunder/admin/lsp/test (admin_lsp.go). Nil = no such routes.
	LSP LSPAdmin
	// MCP, when set, serves POST /wunder/admin/mcp/{name}/refresh
	// (admin_mcp.go). Nil = no such route.
	MCP MCPAdmin
	// MCPApps reads the MCP Apps' pages of the configured MCP servers for
	// GET /wunder/mcp-apps/resource (mcp_apps.go); nil = no MCP servers
	// (every read is 404).
	MCPApps MCPApps
	// UserTools, when set, serves the /wunder/user_tools routes of MCP
	// servers, tools and the extra prompt (user_tools.go). Nil = none.
	UserTools UserTools

	// Knowledge, when set, serves /wunder/admin/knowledge and
	// /wunder/user_tools/knowledge (knowledge.go). Nil = no such routes.
	Knowledge Knowledge
	// Skills, when set, serves /wunder/admin/skills and
	// /wunder/user_tools/skills (skills.go). Nil = no such routes.
	Skills Skills
	// Workspaces, when set, serves the /wunder/workspace routes
	// (workspace.go), bounded by WorkspaceLimits. Nil = no such routes.
	Workspaces      Workspaces
	WorkspaceLimits WorkspaceLimits
	// PProf serves the Go profiler at /debug/pprof/ to admins (pprof.go).
	PProf bool
	// RequestOverrides are the config_overrides keys POST /wunder accepts
	// (llm.request_overrides); nil = none.
	RequestOverrides []string
	// I18n are the languages requests may name; zero = en and zh, en by
	// default, no aliases.
	I18n I18n
	// Memory, when set, serves the long-term memory routes
	// /wunder/admin/memory/* and /wunder/memory (memory.go). Nil = no
	// such routes.
	Memory Memory
	// Monitor, when set, serves the monitor's routes
	// /wunder/admin/monitor/* (monitor.go). Nil = no such routes.
	Monitor Monitor
	// MonitorEventLimit is how many events GET
	// /wunder/admin/monitor/{session_id} shows by default. Default 200.
	MonitorEventLimit int
	// Config, when set, serves the configuration admin routes
	// /wunder/admin/{llm,mcp,a2a} (admin_config.go). Nil = no such routes.
	Config ConfigAdmin
	// Metrics, when set, is served at GET /metrics (metrics.go): to
	// admins, or to anyone with MetricsPublic. Nil = no such route.
	Metrics       http.Handler
	MetricsPublic bool
	// Performance, when set, serves GET /wunder/admin/performance, the
	// sampled load of this process (performance.go). Nil = no such route.
	Performance Performance
	// Throughput, when set, serves the load-test routes
	// /wunder/admin/throughput/* (throughput.go). Nil = no such routes.
	Throughput Throughput
	// Evaluation, when set, serves the capability evaluation routes
	// /wunder/admin/evaluation/* (evaluation.go). Nil = no such routes.
	Evaluation Evaluation
	// Models, when set, serves GET /wunder/models: the names of the
	// configured models, for clients that let a user pick one. Nil = no
	// such route.
	Models ModelList
	// Trace, when set, is the outermost middleware: it traces each request
	// (continuing its traceparent) before the request id is assigned, so
	// the id goes on the span. Nil = no tracing.
	Trace func(http.Handler) http.Handler
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.AttachmentBodyBytes <= 0 {
		o.AttachmentBodyBytes = DefaultAttachmentBodyBytes
	}
	if o.MonitorEventLimit <= 0 {
		o.MonitorEventLimit = 200
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Server is wunder's HTTP front door.
type Server struct {
	b    Backend
	opts Options
	mux  *http.ServeMux
	// open are exact paths past the API-key check (see Open).
	open []string
	auth *Authenticator
	// bodyLimits are per-path exceptions to MaxBodyBytes (uploads), set
	// while routes are registered.
	bodyLimits map[string]int64
	// live holds what SetLive changes while the server runs.
	live atomic.Pointer[liveState]
	// draining ends when Drain is called: the event streams it serves
	// end resumably (drain.go).
	draining context.Context
	drain    context.CancelFunc
	// inFlight bounds each principal's requests in flight (nil: none).
	inFlight *inFlight
}

// New returns a gateway over b.
func New(b Backend, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{b: b, opts: o.withDefaults(), mux: http.NewServeMux(), inFlight: newInFlight(o.MaxInFlight)}
	s.draining, s.drain = context.WithCancel(context.Background())
	s.SetLive(Live{MaxBodyBytes: s.opts.MaxBodyBytes, Heartbeat: s.opts.Heartbeat, CORS: s.opts.CORS, I18n: s.opts.I18n})
	ao := s.opts.Auth
	ao.APIKey, ao.Anonymous = s.opts.APIKey, s.opts.APIKey == ""
	s.auth = NewAuthenticator(ao)
	s.routes()
	s.pprofRoutes()
	s.metricsRoutes()
	return s
}

// Live are the options that can change while the server runs
// ([Server.SetLive]); zero values mean the defaults of [Options].
type Live struct {
	MaxBodyBytes int64
	Heartbeat    time.Duration
	CORS         CORSOptions
	I18n         I18n
}

// I18n are the languages requests may name (i18n.go).
type I18n struct {
	Default   string
	Supported []string
	// Aliases map other names (lower case) to a supported language.
	Aliases map[string]string
}

// liveState is Live ready for the middleware.
type liveState struct {
	maxBody   int64
	heartbeat time.Duration
	cors      *corsPolicy
	i18n      I18n
}

// SetLive replaces the body limit, the SSE heartbeat and the CORS policy
// for the requests that start from now on (the admin API's
// /wunder/admin/server). Routes with a limit of their own (uploads) keep
// it; front-ends mounted with a limit of their own apply the lower one.
func (s *Server) SetLive(l Live) {
	o := Options{MaxBodyBytes: l.MaxBodyBytes, Heartbeat: l.Heartbeat}.withDefaults()
	s.live.Store(&liveState{maxBody: o.MaxBodyBytes, heartbeat: o.Heartbeat, cors: newCORSPolicy(l.CORS), i18n: l.I18n.normalized()})
}

// Mount adds a handler for a pattern (other front-ends: A2A, MCP, Connect).
// It goes through the same middleware as every route.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Open lets requests for these exact paths past the API-key check; every
// other middleware still applies. It is for what must be readable without
// credentials (the agent card, gRPC health for probes) and for handlers
// that apply the same key rule themselves so as to answer in their own
// protocol's shape (MCP's bearer check with protected-resource metadata).
// Call it before Handler.
func (s *Server) Open(paths ...string) { s.open = append(s.open, paths...) }

// MountOpen mounts h at path and opens it (see Open): the exact path, or
// with a trailing "/" the subtree under it.
func (s *Server) MountOpen(path string, h http.Handler) {
	s.Mount(path, h)
	s.Open(path)
}

// routes is THE route table of wunder's HTTP API.
func (s *Server) routes() {
	s.mux.HandleFunc("POST /wunder", s.handleWunder)
	s.mux.HandleFunc("POST /wunder/runs", s.handleSubmit)
	s.mux.HandleFunc("GET /wunder/runs", s.handleListRuns)
	s.mux.HandleFunc("GET /wunder/runs/{run_id}", s.handleGetRun)
	s.mux.HandleFunc("POST /wunder/runs/{run_id}/cancel", s.handleCancel)
	s.mux.HandleFunc("GET /wunder/runs/{run_id}/events", s.handleEvents)
	s.mux.HandleFunc("GET /wunder/runs/{run_id}/plan", s.handleRunPlan)
	s.mux.HandleFunc("GET /wunder/tools", s.handleTools)
	s.mux.HandleFunc("POST /wunder/system_prompt", s.handleSystemPrompt)
	s.mux.HandleFunc("GET /wunder/sessions", s.handleListSessions)
	s.mux.HandleFunc("GET /wunder/sessions/{session_id}", s.handleGetSession)
	s.mux.HandleFunc("DELETE /wunder/sessions/{session_id}", s.handleDeleteSession)
	s.mux.HandleFunc("POST /wunder/sessions/{session_id}/title", s.handleRenameSession)
	s.approvalRoutes()    // approvals.go
	s.monitorRoutes()     // monitor.go
	s.performanceRoutes() // performance.go
	s.auditRoutes()       // audit.go
	s.userDataRoutes()    // monitor.go
	s.configRoutes()      // admin_config.go
	s.probeRoutes()       // admin_config.go
	s.authRoutes()        // auth_routes.go
	s.userToolRoutes()    // user_tools.go
	s.knowledgeRoutes()   // knowledge.go
	s.skillRoutes()       // skills.go
	s.workspaceRoutes()   // workspace.go
	s.memoryRoutes()      // memory.go
	s.attachmentRoutes()  // attachments.go
	s.throughputRoutes()  // throughput.go
	s.evaluationRoutes()  // evaluation.go
	s.consoleRoutes()     // console_api.go
	s.mcpAppRoutes()      // mcp_apps.go
	s.webRoutes()         // webui.go
	s.pptRoutes()         // ppt.go
	s.mux.HandleFunc("GET /healthz", s.handleHealth)
	s.mux.HandleFunc("GET /readyz", s.handleReady)
	s.mux.HandleFunc("GET /wunder/i18n", s.handleI18n) // i18n.go
	if s.opts.LSP != nil {
		if s.opts.Config == nil { // else admin_config.go serves it, with the configuration
			s.mux.HandleFunc("GET /wunder/admin/lsp", s.handleLSPStatus)
		}
		s.mux.HandleFunc("POST /wunder/admin/lsp/test", s.handleLSPTest)
	}
	if s.opts.MCP != nil {
		s.mux.HandleFunc("POST /wunder/admin/mcp/{name}/refresh", s.handleMCPRefresh)
	}
}

// Handler returns the gateway with its middleware, outermost first:
// tracing (Options.Trace), request id and logger, access log, the
// messages' language, panic recovery, the browser guard (Host, Origin,
// nosniff: guard.go), CORS, auth, rate limit, requests in flight, body
// limit.
func (s *Server) Handler() http.Handler {
	var h http.Handler = problemForMux(s.mux)
	h = limitBody(func() int64 { return s.live.Load().maxBody }, s.bodyLimits)(h)
	open := append([]string{"/healthz", "/readyz", "/wunder/i18n", "/wunder/auth/login", "/wunder/auth/register"}, s.open...)
	h = limitInFlight(s.inFlight, open)(h)
	h = rateLimit(s.opts.RateLimit, open)(h)
	h = authenticate(s.auth, open)(h)
	corsNow := func() *corsPolicy { return s.live.Load().cors }
	h = cors(corsNow)(h)
	h = guard(newHostPolicy(s.opts.Hosts), corsNow)(h)
	h = recoverPanics(h)
	h = s.withLanguage(h)
	h = accessLog(h)
	h = withRequestID(s.opts.Logger)(h)
	if s.opts.Trace != nil {
		h = s.opts.Trace(h)
	}
	return h
}

// problemForMux answers the mux's own 404 and 405 (no route matched) in
// problem JSON instead of plain text.
func problemForMux(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			mux.ServeHTTP(&muxProblem{ResponseWriter: w, r: r}, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// muxProblem rewrites the mux's plain-text 404/405 as problems.
type muxProblem struct {
	http.ResponseWriter
	r       *http.Request
	handled bool
}

func (m *muxProblem) WriteHeader(code int) {
	switch code {
	case http.StatusMethodNotAllowed:
		m.handled = true
		writeProblem(m.ResponseWriter, m.r, code, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s (allowed: %s)", m.r.Method, m.r.URL.Path, m.ResponseWriter.Header().Get("Allow")))
	case http.StatusNotFound:
		m.handled = true
		writeProblem(m.ResponseWriter, m.r, code, "route_not_found", fmt.Sprintf("no route for %s %s", m.r.Method, m.r.URL.Path))
	default:
		m.ResponseWriter.WriteHeader(code)
	}
}

func (m *muxProblem) Write(b []byte) (int, error) {
	if m.handled {
		return len(b), nil
	}
	return m.ResponseWriter.Write(b)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok", "version": s.opts.Version})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		if err := s.opts.Ready(ctx); err != nil {
			logger(r.Context()).WarnContext(r.Context(), "not ready", "err", err)
			writeProblem(w, r, http.StatusServiceUnavailable, "not_ready", "a dependency is not ready: "+err.Error())
			return
		}
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"status": "ready"})
}
