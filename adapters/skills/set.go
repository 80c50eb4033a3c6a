package skills

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// LoadSkillTool is the canonical name of the tool that loads a skill.
const LoadSkillTool = "load_skill"

// Defaults of [Options].
const (
	DefaultRetentionTurns = 5
	DefaultTimeout        = 60 * time.Second
	DefaultPython         = "python3"
	DefaultListingTTL     = toolconfig.DefaultTTL
)

// Options configures a [Set]. nil means the defaults.
type Options struct {
	// Paths are directories holding one folder per skill; a missing one is
	// skipped. Default none.
	Paths []string
	// RetentionTurns is how many turns of a session a loaded skill stays
	// in the prompt. Default 5.
	RetentionTurns int
	// Enabled names the skills every user has that are offered (folders
	// under Paths and admin uploads) until an admin sets the list
	// ([Set.SetAdminEnabled]); nil means all found.
	Enabled []string
	// Sandbox runs entry scripts; nil runs them unconfined (sandbox.mode
	// none).
	Sandbox *sandbox.Sandbox
	// Workspace returns a user's workspace directory (created); nil
	// refuses entry scripts.
	Workspace func(userID string) (string, error)
	// Timeout bounds an entry script. Default 60 s.
	Timeout time.Duration
	// Python is the interpreter, a name on PATH (inside the sandbox when
	// there is one). Default python3.
	Python string
	// Logger receives the reasons skills are skipped. Default: discard.
	Logger *slog.Logger

	// Store keeps uploaded packages (kind toolconfig.KindSkill);
	// nil: the skills under Paths only, and uploads are refused.
	Store toolconfig.FileStore
	// Configs reads users' skill settings (enabled, shared, preload) and
	// the admin's enabled list (the configuration of owner ""); required
	// with Store.
	Configs *toolconfig.Configs
	// CacheDir is where uploaded packages are unpacked; required with
	// Store.
	CacheDir string
	// Limits bound uploads; zero fields mean their defaults.
	Limits Limits
	// AllowUserCode lets users' uploaded skills run their entry scripts
	// and connect their (HTTP) MCP servers. Default false: a user's skill
	// is instructions only.
	AllowUserCode bool
	// MCP connects skills' MCP servers; nil: they are not connected (the
	// prompt says so).
	MCP Connector
	// MCPIdle is how long an unused skill MCP connection stays open.
	// Default 5 minutes.
	MCPIdle time.Duration
	// ListingTTL is how long the list of an owner's uploads is kept before
	// the store is read again (a change made in this process is seen at
	// once, one made on another replica within the TTL). Default 5 s.
	ListingTTL time.Duration
}

// Set is the skills [orchestrator.Toolset]: load_skill plus one tool per
// skill a user may use, named after it (which resolves a skill named in a
// request's tool_names; the loop offers it to the model only while the
// skill is loaded and may run its entry script). See the package doc for
// the sources and names of skills. Safe for concurrent use.
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	opts Options
	log  *slog.Logger
	// dirSkills are the skills under Paths, read once by New, by name.
	dirSkills []*Skill
	cache     *cache   // nil without a store
	mcp       *mcpPool // nil without a connector

	// listMu guards listings.
	listMu   sync.Mutex
	listings map[string]listing // by owner

	// loadSpecs are load_skill's specs by the skills they offer (its
	// schema lists their names), built once each: up to maxLoadSpecs.
	loadSpecs  sync.Map // string (the names, NUL-separated) -> orchestrator.ToolSpec
	loadSpecsN atomic.Int64

	// lifeMu guards started and closed, so the janitor never starts
	// after Close began waiting.
	lifeMu  sync.Mutex
	started bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// listing is an owner's uploaded skills as last read from the store.
type listing struct {
	skills []*Skill // by name
	at     time.Time
}

var (
	_ orchestrator.Toolset           = (*Set)(nil)
	_ orchestrator.PromptContributor = (*Set)(nil)
)

// New reads the skills under opts.Paths. A skill that fails to parse or
// validate is skipped with its reason logged; a name found twice keeps the
// first (in Paths order).
func New(opts *Options) *Set {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.RetentionTurns <= 0 {
		o.RetentionTurns = DefaultRetentionTurns
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MCPIdle <= 0 {
		o.MCPIdle = DefaultMCPIdle
	}
	if o.ListingTTL <= 0 {
		o.ListingTTL = DefaultListingTTL
	}
	o.Limits = o.Limits.withDefaults()
	s := &Set{opts: o, log: o.Logger, listings: map[string]listing{}, stop: make(chan struct{})}
	if o.Store != nil {
		s.cache = newCache(o.CacheDir, o.Store, o.Logger)
	}
	if o.MCP != nil {
		s.mcp = newMCPPool(o.MCP, o.MCPIdle, o.Logger)
	}
	seen := map[string]*Skill{}
	for _, root := range o.Paths {
		entries, err := os.ReadDir(root)
		if err != nil {
			o.Logger.Debug("skills path skipped", "path", root, "err", err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			dir := filepath.Join(root, e.Name())
			sk, err := ParseSkill(dir)
			switch {
			case err != nil:
				o.Logger.Warn("skill skipped", "dir", dir, "reason", err)
			case seen[sk.Name] != nil:
				o.Logger.Warn("skill skipped: its name is taken", "dir", dir, "name", sk.Name, "by", seen[sk.Name].Dir)
			default:
				seen[sk.Name] = sk
				s.dirSkills = append(s.dirSkills, sk)
			}
		}
	}
	sortSkills(s.dirSkills)
	return s
}

func sortSkills(list []*Skill) {
	sort.Slice(list, func(i, j int) bool { return list[i].Canonical() < list[j].Canonical() })
}

// Close disconnects skills' MCP servers and stops the janitor. The Set
// must not be used afterwards.
func (s *Set) Close() error {
	s.lifeMu.Lock()
	if s.closed {
		s.lifeMu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	s.lifeMu.Unlock()
	s.wg.Wait()
	if s.mcp != nil {
		s.mcp.close()
	}
	return nil
}

// startJanitor starts, once, the goroutine that closes idle MCP
// connections and removes the cache folders of replaced packages.
func (s *Set) startJanitor() {
	s.lifeMu.Lock()
	defer s.lifeMu.Unlock()
	if s.started || s.closed {
		return
	}
	s.started = true
	s.wg.Add(1)
	go s.janitor()
}

func (s *Set) janitor() {
	defer s.wg.Done()
	every := min(s.opts.MCPIdle/2, 30*time.Second)
	tick := time.NewTicker(max(every, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			if s.mcp != nil {
				s.mcp.sweep(now)
			}
			if s.cache != nil {
				// A script of the old version may still run for Timeout.
				s.cache.sweep(s.opts.Timeout + time.Minute)
			}
		}
	}
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "skills" }

// Tools implements [orchestrator.Toolset]: load_skill over the skills every
// user has and the user's own, and one tool per skill the user may use
// (those two kinds and the skills others share, which are offered only
// when named). A source that cannot be read is logged and left out.
func (s *Set) Tools(ctx context.Context, userID string) ([]orchestrator.Tool, error) {
	v := s.visible(ctx, userID)
	tools := []orchestrator.Tool{&loadTool{set: s, avail: v.loadable()}}
	for _, sk := range v.all() {
		tools = append(tools, &skillTool{set: s, sk: sk})
	}
	return tools, nil
}

// Skills returns the skills under Paths that are enabled, by name.
func (s *Set) Skills() []*Skill {
	en := s.globalEnabled(context.Background())
	var out []*Skill
	for _, sk := range s.dirSkills {
		if en == nil || slices.Contains(en, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// runnable reports whether sk's entry script may run: it has one, and it
// is not a user's or users' code is allowed.
func (s *Set) runnable(sk *Skill) bool {
	return sk.Entry != "" && (sk.Owner == "" || s.opts.AllowUserCode)
}

// ContributePrompt implements [orchestrator.PromptContributor]. The skills
// a run offers are those its tool_names name, or every user's and the
// user's own when they name load_skill, plus the preloaded ones (the
// request's preload_skills and the user's own list) the user may select.
// The prompt lists their summaries and the bodies of those loaded within
// the last RetentionTurns turns (or preloaded); load_skill is offered, and
// for each loaded skill its entry tool (where it may run), the tools it
// brings and the tools of its MCP servers.
func (s *Set) ContributePrompt(ctx context.Context, in orchestrator.PromptContext) (orchestrator.Contribution, error) {
	v := s.visible(ctx, in.UserID)
	preload := slices.Concat(in.Preload, v.preload)
	avail := s.available(v, in, preload)
	if len(avail) == 0 {
		return orchestrator.Contribution{}, nil
	}
	loaded := s.loaded(in, avail, preload)
	c := orchestrator.Contribution{Tools: []orchestrator.Tool{&loadTool{set: s, avail: avail}}}
	notes := map[string][]string{}
	for _, sk := range avail {
		if !loaded[sk.Canonical()] {
			c.Hide = append(c.Hide, sk.Canonical())
			continue
		}
		if s.runnable(sk) {
			c.Tools = append(c.Tools, &skillTool{set: s, sk: sk})
		} else {
			c.Hide = append(c.Hide, sk.Canonical())
		}
		brought, n := s.brought(ctx, in, sk)
		c.Tools = append(c.Tools, brought...)
		notes[sk.Canonical()] = n
	}
	c.Prompt = renderSkills(in.Language, avail, loaded, notes)
	return c, nil
}

// available returns the skills a run offers (see ContributePrompt).
func (s *Set) available(v *visibleSkills, in orchestrator.PromptContext, preload []string) []*Skill {
	loadAll := slices.Contains(in.Selected, LoadSkillTool)
	var out []*Skill
	for _, sk := range v.all() {
		name := sk.Canonical()
		named := slices.Contains(in.Selected, name)
		// load_skill offers every user's and the user's own skills;
		// another user's shared skill only when named or preloaded.
		all := loadAll && (sk.Owner == "" || sk.Owner == in.UserID)
		if !named && !((all || slices.Contains(preload, name)) && s.selectable(in, name)) {
			continue // the user's tool rule applies to skills load_skill offers too
		}
		out = append(out, sk)
	}
	return out
}

// selectable reports whether the user may select the named tool.
func (s *Set) selectable(in orchestrator.PromptContext, name string) bool {
	if in.Lookup == nil {
		return true
	}
	_, ok := in.Lookup(name)
	return ok
}

// loaded reports which of avail are in the prompt: preloaded, or loaded by
// a load_skill call of the last RetentionTurns turns.
func (s *Set) loaded(in orchestrator.PromptContext, avail []*Skill, preload []string) map[string]bool {
	offered := map[string]bool{}
	for _, sk := range avail {
		offered[sk.Canonical()] = true
	}
	out := map[string]bool{}
	for _, n := range preload {
		if offered[n] {
			out[n] = true
		}
	}
	for _, c := range in.Calls {
		if c.Name != LoadSkillTool || in.Turn-c.Turn >= s.opts.RetentionTurns {
			continue
		}
		if n, err := skillArg(c.Arguments); err == nil && offered[n] {
			out[n] = true
		}
	}
	return out
}

// brought returns the tools a loaded skill brings: those its frontmatter
// names that the user may select, and those of its MCP servers; notes say
// what is missing, for the prompt.
func (s *Set) brought(ctx context.Context, in orchestrator.PromptContext, sk *Skill) (tools []orchestrator.Tool, notes []string) {
	for _, name := range sk.Tools {
		if in.Lookup == nil {
			continue
		}
		if t, ok := in.Lookup(name); ok {
			tools = append(tools, t)
		} else {
			notes = append(notes, fmt.Sprintf("tool %s is not available to you", name))
		}
	}
	for _, srv := range sk.MCPServers {
		ts, err := s.mcpTools(ctx, sk, srv)
		if err != nil {
			notes = append(notes, fmt.Sprintf("MCP server %s is unavailable: %v", srv.Name, err))
			continue
		}
		for _, t := range ts {
			if in.Lookup != nil {
				if _, taken := in.Lookup(t.Spec().Name); taken {
					// Never shadow a tool of the user's catalog.
					notes = append(notes, fmt.Sprintf("tool %s of MCP server %s is left out: the name is taken", t.Spec().Name, srv.Name))
					continue
				}
			}
			tools = append(tools, t)
		}
	}
	return tools, notes
}

// mcpTools connects (or reuses) one MCP server of a loaded skill.
func (s *Set) mcpTools(ctx context.Context, sk *Skill, srv MCPServer) ([]orchestrator.Tool, error) {
	switch {
	case s.mcp == nil:
		return nil, errNoConnector
	case sk.Owner != "" && !s.opts.AllowUserCode:
		return nil, fmt.Errorf("users' skills connect no MCP servers here (skills.allow_user_code is off)")
	case sk.Owner != "" && isStdio(srv):
		return nil, fmt.Errorf("users' skills may not start stdio servers")
	}
	s.startJanitor()
	return s.mcp.acquire(ctx, sk, srv)
}

// isStdio reports whether srv starts a local process.
func isStdio(srv MCPServer) bool {
	t, _ := srv.Config["transport"].(string)
	return t == "stdio" || srv.Config["command"] != nil
}

// skillArg reads load_skill's argument.
func skillArg(args json.RawMessage) (string, error) {
	var a struct {
		Name      *string `json:"name"`
		SkillName *string `json:"skill_name"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("load_skill's arguments must be a JSON object: %v", err)
	}
	switch {
	case a.Name != nil:
		return strings.TrimSpace(*a.Name), nil
	case a.SkillName != nil:
		return strings.TrimSpace(*a.SkillName), nil
	}
	return "", fmt.Errorf("load_skill needs name (a string)")
}
