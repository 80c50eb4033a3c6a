package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.opentelemetry.io/otel/trace"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/orchestrator"
)

// Backend is what the MCP front-end needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	Approvals(ctx context.Context, userID, runID string) ([]*orchestrator.Approval, error)
	Wait(ctx context.Context, userID, runID string, after int64, each func(orchestrator.Event) error) (orchestrator.Waited, error)
	Decide(ctx context.Context, userID, runID, approvalID string, d orchestrator.ApprovalDecision) (*orchestrator.Approval, error)
	// GetRun and ListRuns read the runs of wunder@run's tasks (tasks.go).
	GetRun(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error)
	Registry() *orchestrator.Registry
	// The one policy point and its audit, for the pass-through
	// (passthrough_policy.go).
	DecideTool(ctx context.Context, c orchestrator.ToolCheck) orchestrator.Decision
	DecideTools(ctx context.Context, checks []orchestrator.ToolCheck) []orchestrator.Decision
	AppResource(ctx context.Context, userID, uri string) (server, upstream string, err error)
	RecordToolCall(l *orchestrator.ToolLog)
}

var _ Backend = (*orchestrator.Orchestrator)(nil)

// Upstreams reaches the configured MCP servers for the pass-through routes;
// implemented by adapters/mcptools.Set.
type Upstreams interface {
	Servers() []string
	// HTTPEndpoint is the URL and HTTP client (its credentials included)
	// of a streamable-HTTP server; ok is false for other transports.
	HTTPEndpoint(name string) (url string, client *http.Client, ok bool)
	// Dial opens a dedicated connection to a server of another transport
	// (stdio, SSE); it lives until closed.
	Dial(ctx context.Context, name string) (mcp.Connection, error)
}

// Options configure the front-end; zero values mean the defaults stated.
type Options struct {
	// Stateless serves /wunder/mcp without sessions only: every request
	// goes to go-sdk's stateless handler, so revision 2026-07-28 works and
	// older clients get no session (no elicitation, no GET stream). Default
	// false: 2026-07-28 is served stateless and the older revisions get
	// their sessions, side by side (revisions.go).
	Stateless bool
	// UserID is who a caller acts as when its principal belongs to no user
	// (the API key, the anonymous local operator) and over stdio. Default
	// "wunder".
	UserID string
	// PublicURL is the external base URL (scheme://host[:port][/prefix]) of
	// the protected-resource metadata; "" derives it from the request.
	PublicURL string
	// AuthorizationServers are named in the protected-resource metadata:
	// the issuers whose tokens the gateway accepts (auth.jwt.issuer);
	// empty when only wunder's own tokens and the API key are accepted.
	AuthorizationServers []string
	// HostsChecked says the gateway in front checks every request's Host
	// and Origin (its guard, server.allowed_hosts): the SDK's own rule,
	// which refuses any name but localhost on a loopback listener, is then
	// turned off so the names an operator allows work. Default false: the
	// SDK's rule applies.
	HostsChecked bool
	// Upstreams enables the pass-through routes; nil = none.
	Upstreams Upstreams
	// Catalog, when set, offers the calling user's tool catalog on
	// /wunder/mcp next to wunder@run (config mcp.server.expose_catalog), so
	// an IDE sees wunder as one aggregated MCP endpoint; nil = wunder@run
	// only.
	Catalog Catalog
	// Apps, with Catalog, serves the MCP Apps of the upstreams' catalog
	// tools: their ui:// resources, namespaced per upstream, in
	// resources/list and resources/read (apps.go); nil = none (a tool's
	// ui:// URI is then left out of its _meta).
	Apps Apps
	// Tracer, when set, gives each request to /wunder/mcp a server span
	// (trace.go); nil = none of its own, though a request's trace context
	// (_meta's traceparent) is still joined.
	Tracer trace.TracerProvider
	// Language, when set, is the language of the error messages answering
	// a call with these HTTP headers (nil headers over stdio); the gateway's
	// [gateway.Server.HeaderLanguage]: Accept-Language, else
	// i18n.default_language. Nil = English.
	Language func(http.Header) string
	// MaxBodyBytes caps a request to /wunder/mcp (wunder@run's attachments
	// need room: attachments.max_request_bytes). Default: go-sdk's, 4 MiB.
	MaxBodyBytes int64
	// Attachments converts the attachments argument of wunder@run as
	// POST /wunder converts its attachments; nil = doc2md's default limits.
	Attachments *doc2md.Converter
	// Sessions keeps the records of the MCP sessions (of /wunder/mcp's
	// session-based revisions and of the pass-through), so that every
	// replica on one database serves every session (sessions.go); nil = in
	// memory, the sessions of this process.
	Sessions mcpsession.Store
	// SessionTimeout ends a session no request used for this long
	// (mcp.server.session_timeout_s). Default DefaultSessionTimeout; < 0:
	// never.
	SessionTimeout time.Duration
	// ListChangedPoll, with a Catalog, is how often the catalog of a user
	// with a subscriptions/listen stream open is read to learn that it
	// changed (listen.go; mcp.server.list_changed_poll_s). Default
	// DefaultListChangedPoll; < 0: list changes are not announced.
	ListChangedPoll time.Duration
	// MaxListens bounds the subscriptions/listen streams one user has open
	// on this replica (mcp.server.max_listens). Default DefaultMaxListens.
	MaxListens int
	// MaxSessionsPerUser bounds the sessions one user keeps per route
	// (/wunder/mcp, each pass-through upstream): a new one ends the
	// user's least recently used beyond it (mcp.server.max_sessions_per_user).
	// Default DefaultMaxSessionsPerUser.
	MaxSessionsPerUser int
	// InputTimeout bounds how long a pass-through call of a 2026-07-28
	// client waits, parked, for the client's answers to its upstream's
	// questions (passthrough_input.go; mcp.server.input_timeout_s).
	// Default DefaultInputTimeout.
	InputTimeout time.Duration
	Version      string
	Logger       *slog.Logger
}

// DefaultInputTimeout is Options.InputTimeout's default.
const DefaultInputTimeout = 10 * time.Minute

func (o Options) withDefaults() Options {
	if o.UserID == "" {
		o.UserID = "wunder"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sessions == nil {
		o.Sessions = mcpsession.NewMemStore()
	}
	if o.ListChangedPoll == 0 {
		o.ListChangedPoll = DefaultListChangedPoll
	}
	if o.MaxListens <= 0 {
		o.MaxListens = DefaultMaxListens
	}
	if o.MaxSessionsPerUser <= 0 {
		o.MaxSessionsPerUser = DefaultMaxSessionsPerUser
	}
	if o.InputTimeout <= 0 {
		o.InputTimeout = DefaultInputTimeout
	}
	switch {
	case o.SessionTimeout == 0:
		o.SessionTimeout = DefaultSessionTimeout
	case o.SessionTimeout < 0:
		o.SessionTimeout = 0
	}
	return o
}

// Handler serves /wunder/mcp and /wunder/mcp/{server}.
type Handler struct {
	b      Backend
	opts   Options
	server *mcp.Server
	mux    *http.ServeMux
	paths  []string
	// wg tracks the pass-through's goroutines (one per session whose
	// upstream is reached over a connection, passthrough_conn.go).
	wg sync.WaitGroup
	// sessionsMu guards sessions, the live pass-through sessions, and
	// closed; wg.Add happens under it, so never after Close's Wait began.
	sessionsMu sync.Mutex
	sessions   map[*passSession]bool
	closed     bool
	// routesMu guards routes, the pass-through route of each upstream name
	// used so far.
	routesMu sync.Mutex
	routes   map[string]http.Handler
	// toolsPageSize is how many tools a page of tools/list holds.
	toolsPageSize int
	// tracer makes the requests' server spans; nil without Options.Tracer.
	tracer trace.Tracer
	// front serves /wunder/mcp's sessions (sessions.go); nil with
	// Options.Stateless.
	front *sessionFront
	// listens serves subscriptions/listen (listen.go); nil when list
	// changes are not announced.
	listens *listens
	// shared says the session records outlive this process (Options.Sessions
	// given): Close then leaves the upstream sessions to other replicas.
	shared bool
	// purgeMu guards lastPurge, when idle session records were last purged.
	purgeMu   sync.Mutex
	lastPurge time.Time
}

// New returns the MCP front-end over b.
func New(b Backend, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	h := &Handler{b: b, opts: o.withDefaults(), shared: o.Sessions != nil, mux: http.NewServeMux(), sessions: map[*passSession]bool{}, routes: map[string]http.Handler{},
		toolsPageSize: defaultToolsPageSize}
	if h.opts.Tracer != nil {
		h.tracer = h.opts.Tracer.Tracer("github.com/wunder/wunder/mcpserver")
	}
	h.server = h.newServer()
	// One server, two handlers (revisions.go): sessions for the revisions
	// before 2026-07-28 (wunder's own, kept in the store: sessions.go),
	// none from it on (the SDK's stateless handler).
	var main http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.server },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: h.opts.Logger, MaxRequestBodyBytes: h.opts.MaxBodyBytes,
			DisableLocalhostProtection: h.opts.HostsChecked,
			// From 2026-07-28 the POST is the request's whole life: a
			// client cancels a call by closing it, and a wunder@run call
			// cancelled so cancels its run.
			PropagateRequestCancellation: true})
	if !h.opts.Stateless {
		h.front = newSessionFront(h)
		main = h.revisionMux(h.front, main)
	}
	if h.listChangesOffered() {
		h.listens = newListens(h)
		main = h.listens.route(main)
	}
	h.paths = []string{"/wunder/mcp"}
	h.mux.Handle("/wunder/mcp", h.auth(h.taskHeaders(main)))
	if o.Upstreams != nil {
		// One subtree for every upstream, looked up per request: servers an
		// admin adds or removes while wunder runs get or lose their route.
		// The pass-through reads the principal itself (it is no SDK
		// handler): no TokenInfo to carry.
		h.mux.Handle("/wunder/mcp/", h.requirePrincipal(http.HandlerFunc(h.serveUpstream)))
		h.paths = append(h.paths, "/wunder/mcp/")
	}
	h.mux.HandleFunc("GET "+metadataPath, h.serveMetadata)
	return h
}

// serveUpstream routes /wunder/mcp/{server} to the server's pass-through
// route, made on first use and kept while the server is configured. A name
// that is not a configured upstream is 404.
func (h *Handler) serveUpstream(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/wunder/mcp/")
	if name == "" || strings.Contains(name, "/") || !slices.Contains(h.opts.Upstreams.Servers(), name) {
		lang := i18n.FromContext(r.Context()) // the gateway's rule for this HTTP request
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		b, _ := json.Marshal(map[string]any{"type": "about:blank", "title": i18n.Title(lang, http.StatusNotFound), "status": http.StatusNotFound,
			"code": "not_found", "detail": localize(lang, "not_found", fmt.Sprintf("no MCP server %q is configured for pass-through", name))})
		_, _ = w.Write(b)
		return
	}
	h.routesMu.Lock()
	rt, ok := h.routes[name]
	if !ok {
		rt = h.passThrough(name)
		h.routes[name] = rt
	}
	h.routesMu.Unlock()
	rt.ServeHTTP(w, r)
}

// metadataPath serves the OAuth protected-resource metadata (RFC 9728) of
// /wunder/mcp.
const metadataPath = "/.well-known/oauth-protected-resource/wunder/mcp"

// Paths are the paths to mount on the gateway behind its authenticator
// (gateway.Server.MountChallenged, with [Handler.Challenge]): /wunder/mcp,
// and the subtree of the pass-through routes when there are upstreams.
func (h *Handler) Paths() []string { return slices.Clone(h.paths) }

// PublicPaths are the paths to mount readable without credentials: the
// protected-resource metadata a 401 points to.
func (h *Handler) PublicPaths() []string { return []string{metadataPath} }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Server returns the MCP server of /wunder/mcp, for `wunder mcp stdio`.
func (h *Handler) Server() *mcp.Server { return h.server }

// Close ends this process's copies of the live sessions and waits for
// their goroutines; sessions initialized afterwards are refused. A
// pass-through session's upstream session is ended too, unless the
// session records outlive the process (Options.Sessions), so that other
// replicas go on with it.
func (h *Handler) Close() {
	if h.listens != nil {
		h.listens.close()
	}
	if h.front != nil {
		h.front.close()
	}
	h.sessionsMu.Lock()
	h.closed = true
	live := make([]*passSession, 0, len(h.sessions))
	for s := range h.sessions {
		live = append(live, s)
	}
	h.sessionsMu.Unlock()
	var ended sync.WaitGroup
	for _, s := range live {
		if h.shared && !s.shared {
			// Another replica may go on with it: its upstream session is
			// left open.
			ended.Go(s.detach)
			continue
		}
		ended.Go(s.close) // each tells its upstream, bounded (closeTimeout)
	}
	ended.Wait()
	h.wg.Wait()
}

// auth hands the principal that the gateway's one authenticator put on
// the context (orchestrator.PrincipalFrom) to the MCP SDK as its
// TokenInfo: the tools read the caller's user from it (userOf), and the
// SDK binds each session to the user that opened it. It checks no
// credential itself. A request that reaches it without a principal (the
// handler mounted without the gateway) gets the 401 the gateway would give.
func (h *Handler) auth(next http.Handler) http.Handler {
	// The SDK puts TokenInfo on the context only in RequireBearerToken,
	// which wants a bearer header; the credential was checked already (and
	// may have been X-API-Key, or none for the anonymous local operator),
	// so a placeholder stands in for it and the verifier reads the principal.
	carry := auth.RequireBearerToken(principalTokenInfo, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return h.requirePrincipal(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer principal")
		carry.ServeHTTP(w, r)
	}))
}

// requirePrincipal answers a request without the gateway's principal with
// the 401 the gateway would give.
func (h *Handler) requirePrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := orchestrator.PrincipalFrom(r.Context()); !ok {
			w.Header().Set("WWW-Authenticate", h.Challenge(r))
			http.Error(w, "unauthenticated: missing credentials", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// principalTokenInfo is the TokenInfo of the request's principal; the
// token it is given is the placeholder auth sets.
func principalTokenInfo(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	p, ok := orchestrator.PrincipalFrom(ctx)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: p.UserID, Scopes: slices.Clone(p.Roles)}, nil
}

// Challenge is the WWW-Authenticate value of a 401 at /wunder/mcp: a
// bearer challenge pointing to the protected-resource metadata (RFC 9728),
// where MCP clients learn how to authenticate.
func (h *Handler) Challenge(r *http.Request) string {
	return fmt.Sprintf("Bearer resource_metadata=%q", h.base(r)+metadataPath)
}

func (h *Handler) serveMetadata(w http.ResponseWriter, r *http.Request) {
	auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: h.base(r) + "/wunder/mcp", ResourceName: "wunder",
		BearerMethodsSupported: []string{"header"}, AuthorizationServers: h.opts.AuthorizationServers,
	}).ServeHTTP(w, r)
}

// base is the external base URL: PublicURL, else the request's.
func (h *Handler) base(r *http.Request) string {
	if h.opts.PublicURL != "" {
		return strings.TrimSuffix(h.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// userOf is the principal's user: the token's, else the configured one.
func (h *Handler) userOf(extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID
	}
	return h.opts.UserID
}

// langOf is the language of the messages answering a call (Options.Language).
func (h *Handler) langOf(extra *mcp.RequestExtra) string {
	if h.opts.Language == nil {
		return i18n.English
	}
	var hdr http.Header
	if extra != nil {
		hdr = extra.Header
	}
	return h.opts.Language(hdr)
}

func (h *Handler) newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "wunder", Title: "wunder agent router", Version: h.opts.Version},
		&mcp.ServerOptions{
			Instructions: "wunder runs agent tasks. Call " + h.runName() + " with a task; pass session_id to continue a conversation. " +
				"A result with state waiting_approval lists tool calls that wait for a person's approval: decide each with " + h.approveName() + ".",
			Logger:       h.opts.Logger,
			SetCacheable: setCacheable,
			Capabilities: h.capabilities(),
		})
	h.addRunTool(s)
	h.addApproveTool(s)
	h.addTaskMethods(s)
	s.AddReceivingMiddleware(h.traceMiddleware, sessionListenMiddleware, h.tasksMiddleware, h.toolsMiddleware, h.sessionMiddleware)
	return s
}

// capabilities are /wunder/mcp's: tools and logging, and resources when
// it serves apps' resources.
func (h *Handler) capabilities() *mcp.ServerCapabilities {
	//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 from protocol 2026-07-28, no replacement) carries catalog tool output to clients without a progress token
	c := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{ListChanged: h.listChangesOffered()}}
	if h.appsOffered() {
		c.Resources = &mcp.ResourceCapabilities{ListChanged: h.listChangesOffered()}
	}
	return c
}

// runName is wunder@run on the wire, per the registry's encoding.
func (h *Handler) runName() string { return h.b.Registry().WireName(RunTool) }

// RunTool is the canonical name of the tool that runs a task.
const RunTool = "wunder@run"
