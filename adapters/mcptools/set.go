package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Transports.
const (
	TransportStdio          = "stdio"
	TransportSSE            = "sse"
	TransportStreamableHTTP = "streamable-http"
)

// ServerConfig describes one upstream MCP server.
type ServerConfig struct {
	// Name prefixes its tools (name@tool).
	Name string
	// Transport is stdio, sse or streamable-http.
	Transport string
	// Command, Args, Env (extra KEY=VALUE pairs) and Dir start a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL of an sse or streamable-http server; Headers and BearerToken go
	// with every HTTP request.
	URL         string
	Headers     map[string]string
	BearerToken string
	// AllowTools lists the tools offered; empty = all.
	AllowTools []string
	// AllowResources and AllowPrompts list what the pass-through offers
	// of the server's resources (URI patterns, '*' any run of characters)
	// and prompts; empty = all. The policy point applies them
	// (AllowsResource, AllowsPrompt).
	AllowResources []string
	AllowPrompts   []string
	Description    string
	// Timeout bounds one call; 0 = Options.Timeout.
	Timeout time.Duration
	// OAuth, when set, authorizes a streamable-http server's requests (the
	// go-sdk's auth.AuthorizationCodeHandler: protected-resource and
	// authorization-server discovery, client registration, PKCE, token
	// exchange, scope step-up); nil = Headers and BearerToken only.
	OAuth auth.OAuthHandler
}

// SpecCache persists the tool lists of servers, so a restart does not need
// the servers to build a prompt. Implemented by *storage.Store. The blob is
// the JSON array of the server's tools as tools/list returned them.
type SpecCache interface {
	LoadMCPToolSpecs(ctx context.Context, server string) (tools json.RawMessage, updated time.Time, err error)
	SaveMCPToolSpecs(ctx context.Context, server string, tools json.RawMessage) error
}

// Options are the Set's knobs; the zero value of each means the default
// stated on it.
type Options struct {
	// Timeout bounds one call of a server that sets none. Default 60s.
	Timeout time.Duration
	// Cache persists tool specs; nil keeps them in memory only.
	Cache SpecCache
	// MinBackoff and MaxBackoff bound the wait between failed connects.
	// Defaults 1s and 60s.
	MinBackoff, MaxBackoff time.Duration
	// TerminateDuration is how long a stdio child gets after stdin closes
	// before SIGTERM (and again before SIGKILL). Default 2s.
	TerminateDuration time.Duration
	// ClientName and ClientVersion identify wunder to servers. Defaults
	// "wunder" and "dev".
	ClientName, ClientVersion string
	// Elicitation is the policy for servers' elicitation/create requests:
	// [ElicitDecline] (default) or [ElicitDefaults].
	Elicitation string
	// ReadyTimeout bounds how long [Set.Ready] waits for the first
	// discovery of every server after [Set.Start]; a server still being
	// discovered then counts as failed. Default 30s.
	ReadyTimeout time.Duration
	// StdioDepth is this wunder's depth in a chain of MCP stdio servers
	// ([StdioDepthEnv]): 0 for a wunder no wunder started. At
	// [MaxStdioDepth] or deeper, stdio servers are not started.
	StdioDepth int
	// HTTPTransport carries the requests of sse and streamable-http
	// servers (with their headers added on top); nil = a transport of the
	// Set's own, like http.DefaultTransport but keeping enough idle
	// connections per host for concurrent sessions. adapters/usertools' servers get one that
	// refuses private addresses at dial time (internal/netguard).
	HTTPTransport http.RoundTripper
	// WrapTransport, when set, wraps the transport of every HTTP server
	// (tracing: traceparent on outgoing requests); nil = none.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// DropServerLogs stops forwarding servers' log notifications to the
	// Output of calls in flight. A log message names no call, so it goes to
	// every call on the server; set this when the calls of one session
	// belong to different users (a user's shared server), so that no user
	// reads what another's call logged. Progress, matched per call, is
	// forwarded either way. Default false.
	DropServerLogs bool
	Logger         *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(60*time.Second, o.MinBackoff)
	}
	if o.TerminateDuration <= 0 {
		o.TerminateDuration = 2 * time.Second
	}
	if o.ClientName == "" {
		o.ClientName = "wunder"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	if o.Elicitation == "" {
		o.Elicitation = ElicitDecline
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Set is the toolset of all configured MCP servers.
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	opts Options
	log  *slog.Logger

	// mu guards servers, byName and retired. [Set.Reconfigure] replaces
	// servers and byName whole; readers take a snapshot.
	mu      sync.RWMutex
	servers []*server // in configuration order
	byName  map[string]*server
	// retired are servers Reconfigure removed or replaced: runs that hold
	// their tools may still call them (each call dials if it must, and the
	// session closes when no call is in flight); Close closes them.
	retired map[*server]struct{}
	// transport carries HTTP servers' requests when Options.HTTPTransport
	// is nil (transport.go).
	transport *http.Transport

	baseCtx context.Context // parent of background work; cancelled by Close
	stop    context.CancelFunc
	wg      sync.WaitGroup

	// readyMu guards readyTimer.
	readyMu    sync.Mutex
	readyTimer *time.Timer // ends the wait for first discoveries (ready.go)
}

var _ orchestrator.Toolset = (*Set)(nil)

// New returns a Set over servers; nothing is dialled until [Set.Start] or
// the first call. Names must be unique (the configuration checks it).
func New(servers []ServerConfig, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Set{opts: o, log: o.Logger, byName: map[string]*server{}, baseCtx: ctx, stop: cancel}
	if o.HTTPTransport == nil {
		s.transport = newTransport()
	}
	if o.Elicitation != ElicitDecline && o.Elicitation != ElicitDefaults {
		cancel()
		return nil, fmt.Errorf("unknown elicitation policy %q (want %s or %s)", o.Elicitation, ElicitDecline, ElicitDefaults)
	}
	if err := checkServers(servers); err != nil {
		cancel()
		return nil, err
	}
	s.retired = map[*server]struct{}{}
	for _, c := range servers {
		sv := newServer(s, s.withTimeout(c))
		s.servers = append(s.servers, sv)
		s.byName[c.Name] = sv
	}
	return s, nil
}

// checkServers refuses empty or repeated names and unknown transports.
func checkServers(servers []ServerConfig) error {
	seen := map[string]bool{}
	for _, c := range servers {
		if seen[c.Name] || c.Name == "" {
			return fmt.Errorf("mcp server name %q is empty or used twice", c.Name)
		}
		seen[c.Name] = true
		switch c.Transport {
		case TransportStdio, TransportSSE, TransportStreamableHTTP:
		default:
			return fmt.Errorf("mcp server %s: unknown transport %q", c.Name, c.Transport)
		}
	}
	return nil
}

func (s *Set) withTimeout(c ServerConfig) ServerConfig {
	if c.Timeout <= 0 {
		c.Timeout = s.opts.Timeout
	}
	return c
}

// snapshot returns the current servers (the slice is never changed in place).
func (s *Set) snapshot() []*server {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.servers
}

// lookup returns the current server called name.
func (s *Set) lookup(name string) (*server, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sv, ok := s.byName[name]
	return sv, ok
}

// Reconfigure replaces the servers while the Set serves, for the admin
// API. A server whose configuration did not change keeps its session and
// tools. A new or changed one is started, and Reconfigure waits (bounded by
// ctx and Options.ReadyTimeout) for its first discovery, so the next run
// sees its tools. A removed or replaced server is retired: a run that
// already holds one of its tools can still call it (the run finishes on the
// configuration it started with), its session is closed once no call is in
// flight. On a validation error nothing changes.
func (s *Set) Reconfigure(ctx context.Context, servers []ServerConfig) error {
	if err := checkServers(servers); err != nil {
		return err
	}
	s.mu.Lock()
	if s.baseCtx.Err() != nil {
		s.mu.Unlock()
		return errShuttingDown
	}
	var (
		next    []*server
		byName  = map[string]*server{}
		started []*server
	)
	for _, c := range servers {
		c = s.withTimeout(c)
		if old, ok := s.byName[c.Name]; ok && sameConfig(old.cfg, c) {
			next = append(next, old)
			byName[c.Name] = old
			continue
		}
		sv := newServer(s, c)
		next = append(next, sv)
		byName[c.Name] = sv
		started = append(started, sv)
	}
	var retired []*server
	for name, old := range s.byName {
		if byName[name] != old {
			retired = append(retired, old)
			s.retired[old] = struct{}{}
		}
	}
	s.servers, s.byName = next, byName
	s.mu.Unlock()

	for _, sv := range retired {
		s.log.Info("mcp server retired", "server", sv.cfg.Name)
		sv.retire()
	}
	for _, sv := range started {
		s.log.Info("mcp server added", "server", sv.cfg.Name, "transport", sv.cfg.Transport)
		s.startServer(ctx, sv)
		// Its first discovery settles within ReadyTimeout, so /readyz does
		// not wait on a server an admin just added.
		time.AfterFunc(s.opts.ReadyTimeout, func() {
			sv.settle(fmt.Errorf("%w (%s)", errDiscoveryTimeout, s.opts.ReadyTimeout))
		})
	}
	wait, cancel := context.WithTimeout(ctx, s.opts.ReadyTimeout)
	defer cancel()
	for _, sv := range started {
		select {
		case <-sv.settled:
		case <-wait.Done():
			return nil // still being discovered; its tools appear when it is
		}
	}
	return nil
}

// sameConfig reports whether a and b configure the server alike (an OAuth
// handler is compared by identity).
func sameConfig(a, b ServerConfig) bool {
	oa, ob := a.OAuth, b.OAuth
	a.OAuth, b.OAuth = nil, nil
	return oa == ob && reflect.DeepEqual(a, b)
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "mcp" }

// Tools implements [orchestrator.Toolset]: the cached tools of every
// server. It never dials; a server whose tools were never listed offers
// none yet.
func (s *Set) Tools(context.Context, string) ([]orchestrator.Tool, error) {
	var out []orchestrator.Tool
	for _, sv := range s.snapshot() {
		out = append(out, sv.tools()...)
	}
	return out, nil
}

// Servers returns the configured server names, in configuration order.
func (s *Set) Servers() []string {
	servers := s.snapshot()
	names := make([]string, len(servers))
	for i, sv := range servers {
		names[i] = sv.cfg.Name
	}
	return names
}

// Start loads the cached specs and refreshes every server in the
// background (its first discovery, which [Set.Ready] and [Set.WaitTool]
// wait for); it returns at once. A stdio server that the depth guard
// refuses is not started: it is logged, and its discovery fails at once.
func (s *Set) Start(ctx context.Context) {
	s.readyMu.Lock()
	s.readyTimer = time.AfterFunc(s.opts.ReadyTimeout, s.readyTimeout)
	s.readyMu.Unlock()
	for _, sv := range s.snapshot() {
		s.startServer(ctx, sv)
	}
}

// startServer begins sv's first discovery: its cached specs now, a refresh
// in the background.
func (s *Set) startServer(ctx context.Context, sv *server) {
	sv.started.Store(true)
	if sv.refused != nil {
		s.log.Warn("mcp stdio server not started", "server", sv.cfg.Name, "depth", s.opts.StdioDepth, "err", sv.refused)
		sv.settle(sv.refused)
		return
	}
	sv.loadCache(ctx)
	s.goRefresh(sv, "start")
}

// Refresh lists a server's tools now and caches them (the admin endpoint).
// An unknown name wraps [orchestrator.ErrNotFound].
func (s *Set) Refresh(ctx context.Context, name string) ([]orchestrator.ToolSpec, error) {
	sv, ok := s.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, name)
	}
	if err := sv.refresh(ctx); err != nil {
		return nil, fmt.Errorf("%w: mcp server %s: %w", orchestrator.ErrUnavailable, name, err)
	}
	var specs []orchestrator.ToolSpec
	for _, t := range sv.tools() {
		specs = append(specs, t.Spec())
	}
	return specs, nil
}

// goRefresh refreshes sv in an owned goroutine.
func (s *Set) goRefresh(sv *server, why string) {
	s.wg.Add(1)
	sv.begin()
	go func() {
		defer s.wg.Done()
		defer sv.end()
		ctx, cancel := context.WithTimeout(s.baseCtx, sv.cfg.Timeout)
		defer cancel()
		if err := sv.refresh(ctx); err != nil {
			s.log.Warn("mcp tools not refreshed", "server", sv.cfg.Name, "why", why, "err", err)
		}
	}()
}

// Close closes every session (stopping stdio children and their process
// groups) and waits for background work.
func (s *Set) Close() error {
	s.stop()
	s.readyMu.Lock()
	if s.readyTimer != nil {
		s.readyTimer.Stop()
	}
	s.readyMu.Unlock()
	s.mu.Lock()
	all := slices.Clone(s.servers)
	for sv := range s.retired {
		all = append(all, sv)
	}
	s.mu.Unlock()
	for _, sv := range all {
		sv.close()
		sv.settle(errShuttingDown)
	}
	s.wg.Wait()
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	return nil
}

// Dial opens a new, dedicated connection to the named stdio or SSE server
// for the pass-through gateway (one upstream session per downstream
// session): messages go both ways as they are, and the downstream client
// initializes the session itself. The dial is bounded by ctx and the
// server's timeout; the connection outlives ctx until the caller closes it
// (or the Set closes), and closing it stops a stdio child. A
// streamable-http server is reached over [Set.HTTPEndpoint] instead. An
// unknown name wraps [orchestrator.ErrNotFound], a failed dial
// [orchestrator.ErrUnavailable].
func (s *Set) Dial(ctx context.Context, name string) (mcp.Connection, error) {
	sv, ok := s.lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, name)
	}
	conn, closeFn, err := sv.connectRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: mcp server %s: %w", orchestrator.ErrUnavailable, name, err)
	}
	c := &dialed{Connection: conn, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		stop := context.AfterFunc(s.baseCtx, func() { _ = c.Close() })
		<-c.done
		stop()
		closeFn()
	}()
	return c, nil
}

// dialed is a connection of [Set.Dial]: closing it releases what it holds
// (its context, a stdio child's process group), in the Set's goroutine.
type dialed struct {
	mcp.Connection
	once sync.Once
	done chan struct{}
}

func (c *dialed) Close() error {
	err := c.Connection.Close()
	c.once.Do(func() { close(c.done) })
	return err
}

// AllowsTool implements [orchestrator.ToolAllowList] for the one policy
// point (orchestrator/policy.go): whether server's allow_tools lets tool
// through; known is false for a name that is not a configured server.
func (s *Set) AllowsTool(server, tool string) (ok, known bool) {
	sv, found := s.lookup(server)
	if !found {
		return false, false
	}
	return allowed(sv.cfg, tool), true
}

// AllowsResource implements [orchestrator.AllowLists]: whether server's
// allow_resources lets the URI (or URI template) through.
func (s *Set) AllowsResource(server, uri string) (ok, known bool) {
	sv, found := s.lookup(server)
	if !found {
		return false, false
	}
	list := sv.cfg.AllowResources
	return len(list) == 0 || slices.ContainsFunc(list, func(p string) bool { return globMatch(p, uri) }), true
}

// AllowsPrompt implements [orchestrator.AllowLists]: whether server's
// allow_prompts names the prompt.
func (s *Set) AllowsPrompt(server, prompt string) (ok, known bool) {
	sv, found := s.lookup(server)
	if !found {
		return false, false
	}
	return len(sv.cfg.AllowPrompts) == 0 || slices.Contains(sv.cfg.AllowPrompts, prompt), true
}

// globMatch reports whether s matches pattern, where '*' matches any run of
// characters, '/' included, and everything else itself.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	last := parts[len(parts)-1]
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

var _ orchestrator.AllowLists = (*Set)(nil)

func allowed(cfg ServerConfig, tool string) bool {
	return len(cfg.AllowTools) == 0 || slices.Contains(cfg.AllowTools, tool)
}
