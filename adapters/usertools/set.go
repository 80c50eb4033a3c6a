package usertools

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Connector opens users' MCP servers; cmd/wunder implements it over
// adapters/mcptools. A server's configuration is an mcp.servers entry as
// JSON (with its name, without shared_tools).
type Connector interface {
	// Check parses a server's configuration and applies the admin's
	// policy (transports, the SSRF guard on its URL, which resolves the
	// host). Its errors wrap orchestrator.ErrInvalidArgument.
	Check(ctx context.Context, config json.RawMessage) (ServerInfo, error)
	// Open returns a connection to a server whose configuration passed
	// Check. It does not wait for the server: the first tools/list runs
	// in the background, and [Conn.Tools] waits for it.
	Open(ctx context.Context, config json.RawMessage) (Conn, error)
}

// ServerInfo is what the toolset needs to know of a checked server.
type ServerInfo struct {
	// Enabled servers are connected; disabled ones are kept, unused.
	Enabled bool
	// AllowTools lists the tools the server offers; empty = all.
	AllowTools []string
}

// Conn is a live connection to one server.
type Conn interface {
	// Tools returns the server's tools, named server@tool. The first call
	// waits, bounded by ctx, for the first discovery; later calls answer
	// at once from what the connection knows. An error with no tools says
	// why there are none.
	Tools(ctx context.Context) ([]orchestrator.Tool, error)
	// Close ends the connection; calls in flight fail.
	Close() error
}

// RetryInterval is how long a server whose connection or discovery failed
// is left alone before it is tried again.
const RetryInterval = 30 * time.Second

// Options are the Set's knobs; the zero value of each means the default
// stated on it.
type Options struct {
	// MaxServers caps a user's MCP servers; 0 = 10, negative = none
	// allowed.
	MaxServers int
	// MaxExtraPromptChars caps the extra prompt, in characters; 0 = 4000,
	// negative = no extra prompt allowed.
	MaxExtraPromptChars int
	// DiscoveryTimeout bounds how long a listing waits for the first
	// tools/list of a server. Default 5s.
	DiscoveryTimeout time.Duration
	// IdleTTL: a connection no listing or call used for this long is
	// closed. Default 10 minutes.
	IdleTTL time.Duration
	// Access, when set, gives each owner's tool rule: a tool its owner
	// may not use is neither offered to the owner (the registry sees to
	// that) nor shared. Nil = no rules.
	Access orchestrator.ToolAccessSource
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	switch {
	case o.MaxServers == 0:
		o.MaxServers = 10
	case o.MaxServers < 0:
		o.MaxServers = 0
	}
	switch {
	case o.MaxExtraPromptChars == 0:
		o.MaxExtraPromptChars = 4000
	case o.MaxExtraPromptChars < 0:
		o.MaxExtraPromptChars = 0
	}
	if o.DiscoveryTimeout <= 0 {
		o.DiscoveryTimeout = 5 * time.Second
	}
	if o.IdleTTL <= 0 {
		o.IdleTTL = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Set is the toolset of users' own and shared tools.
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	configs *toolconfig.Configs
	conn    Connector
	opts    Options
	log     *slog.Logger
	now     func() time.Time

	// mu guards pool and closed; never held across I/O.
	mu     sync.Mutex
	pool   map[ownerServer]*entry
	closed bool

	base context.Context // parent of discoveries; cancelled by Close
	stop context.CancelFunc
	wg   sync.WaitGroup
}

var (
	_ orchestrator.Toolset           = (*Set)(nil)
	_ orchestrator.PromptContributor = (*Set)(nil)
)

// New returns the toolset over users' configurations; conn opens their
// servers.
func New(configs *toolconfig.Configs, conn Connector, opts *Options) *Set {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Set{configs: configs, conn: conn, opts: o, log: o.Logger, now: time.Now,
		pool: map[ownerServer]*entry{}, base: ctx, stop: cancel}
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "user_tools" }

// Tools implements [orchestrator.Toolset]: the user's own servers' tools
// and the tools other users share. A server that cannot be listed within
// Options.DiscoveryTimeout is left out (and logged); only a failure to
// read the configurations is an error.
func (s *Set) Tools(ctx context.Context, userID string) ([]orchestrator.Tool, error) {
	own, err := s.configs.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	shared, err := s.configs.Shared(ctx)
	if err != nil {
		return nil, err
	}
	s.sweep()
	var wants []want
	mine := s.usable(own)
	for _, sv := range mine {
		wants = append(wants, want{owner: userID, srv: sv})
	}
	s.forget(userID, mine)
	for _, c := range shared {
		if c.UserID == userID {
			continue
		}
		for _, sv := range s.usable(c) {
			if len(sv.SharedTools) > 0 {
				wants = append(wants, want{owner: c.UserID, srv: sv})
			}
		}
	}
	if len(wants) == 0 {
		return nil, nil
	}
	lists := s.discover(ctx, wants, userID)
	var out []orchestrator.Tool
	for i, w := range wants {
		if w.owner == userID {
			out = append(out, lists[i]...)
			continue
		}
		out = append(out, s.sharedOnly(ctx, w, lists[i])...)
	}
	return out, nil
}

// want is one server a listing needs.
type want struct {
	owner string
	srv   toolconfig.MCPServer
}

// usable returns the servers of c that the rules let be used: at most
// MaxServers, each with a valid name.
func (s *Set) usable(c *toolconfig.UserConfig) []toolconfig.MCPServer {
	var out []toolconfig.MCPServer
	for _, sv := range c.MCPServers {
		if len(out) == s.opts.MaxServers {
			s.log.Warn("user mcp servers over the limit left out", "user_id", c.UserID, "max_servers", s.opts.MaxServers)
			break
		}
		if err := checkServerName(sv.Name); err != nil {
			s.log.Warn("user mcp server left out", "user_id", c.UserID, "err", err)
			continue
		}
		out = append(out, sv)
	}
	return out
}

// sharedOnly keeps the tools of another user's server that its owner
// shares and may use.
func (s *Set) sharedOnly(ctx context.Context, w want, tools []orchestrator.Tool) []orchestrator.Tool {
	var rule *orchestrator.ToolAccess
	if s.opts.Access != nil {
		r, err := s.opts.Access.ToolAccess(ctx, w.owner)
		if err != nil {
			s.log.WarnContext(ctx, "shared tools left out: owner's tool access unknown", "owner", w.owner, "err", err)
			return nil
		}
		rule = r
	}
	var out []orchestrator.Tool
	for _, t := range tools {
		ut := t.(*userTool)
		if slices.Contains(w.srv.SharedTools, ut.bare) && rule.Permits(ut.name) {
			out = append(out, ut)
		}
	}
	return out
}

// ContributePrompt implements [orchestrator.PromptContributor]: the
// user's extra prompt, in the user's own runs only (in.UserID is the run's
// user), cut to Options.MaxExtraPromptChars.
func (s *Set) ContributePrompt(ctx context.Context, in orchestrator.PromptContext) (orchestrator.Contribution, error) {
	c, err := s.configs.Get(ctx, in.UserID)
	if err != nil {
		return orchestrator.Contribution{}, err
	}
	p := strings.TrimSpace(truncateChars(c.ExtraPrompt, s.opts.MaxExtraPromptChars))
	if p == "" {
		return orchestrator.Contribution{}, nil
	}
	head := "### Additional instructions from the user"
	if strings.HasPrefix(in.Language, "zh") {
		head = "### 用户补充说明"
	}
	return orchestrator.Contribution{Prompt: head + "\n\n" + p}, nil
}

// Close closes every connection and waits for the Set's goroutines.
func (s *Set) Close() error {
	s.mu.Lock()
	s.closed = true
	entries := make([]*entry, 0, len(s.pool))
	for k, e := range s.pool {
		entries = append(entries, e)
		delete(s.pool, k)
	}
	s.mu.Unlock()
	s.stop()
	for _, e := range entries {
		e.retire()
	}
	s.wg.Wait()
	return nil
}

func truncateChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
