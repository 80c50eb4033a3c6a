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
	"time"

	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
)

// LoadSkillTool is the canonical name of the tool that loads a skill.
const LoadSkillTool = "load_skill"

// Defaults of [Options].
const (
	DefaultRetentionTurns = 5
	DefaultTimeout        = 60 * time.Second
	DefaultPython         = "python3"
)

// Options configures a [Set]. nil means the defaults.
type Options struct {
	// Paths are directories holding one folder per skill; a missing one is
	// skipped. Default none.
	Paths []string
	// RetentionTurns is how many turns of a session a loaded skill stays
	// in the prompt. Default 5.
	RetentionTurns int
	// Enabled names the skills offered; nil means all found.
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
}

// Set is the skills [orchestrator.Toolset]: load_skill plus one tool per
// enabled skill, named after it (which resolves a skill named in a
// request's tool_names; the loop offers it to the model only while the
// skill is loaded and has an entry script). It is safe for concurrent use:
// skills are read once, by [New].
type Set struct {
	opts   Options
	skills []*Skill // enabled, by name
	byName map[string]*Skill
	tools  []orchestrator.Tool
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
	s := &Set{opts: o, byName: map[string]*Skill{}}
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
			case s.byName[sk.Name] != nil:
				o.Logger.Warn("skill skipped: its name is taken", "dir", dir, "name", sk.Name, "by", s.byName[sk.Name].Dir)
			case o.Enabled != nil && !slices.Contains(o.Enabled, sk.Name):
			default:
				s.byName[sk.Name] = sk
				s.skills = append(s.skills, sk)
			}
		}
	}
	sort.Slice(s.skills, func(i, j int) bool { return s.skills[i].Name < s.skills[j].Name })
	s.tools = append(s.tools, &loadTool{set: s, avail: s.skills})
	for _, sk := range s.skills {
		s.tools = append(s.tools, &skillTool{set: s, sk: sk})
	}
	return s
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "skills" }

// Tools implements [orchestrator.Toolset]; every user sees the same skills.
func (s *Set) Tools(context.Context, string) ([]orchestrator.Tool, error) { return s.tools, nil }

// Skills returns the enabled skills, by name.
func (s *Set) Skills() []*Skill { return slices.Clone(s.skills) }

// ContributePrompt implements [orchestrator.PromptContributor]. The skills
// a run offers are those its tool_names name, or all when they name
// load_skill. The prompt lists their summaries and the bodies of those
// loaded within the last RetentionTurns turns (or preloaded); load_skill
// is offered, and so is the entry tool of each loaded skill that has one.
func (s *Set) ContributePrompt(_ context.Context, in orchestrator.PromptContext) (orchestrator.Contribution, error) {
	avail := s.available(in.Selected)
	if len(avail) == 0 {
		return orchestrator.Contribution{}, nil
	}
	loaded := s.loaded(in, avail)
	c := orchestrator.Contribution{
		Prompt: renderSkills(in.Language, avail, loaded),
		Tools:  []orchestrator.Tool{&loadTool{set: s, avail: avail}},
	}
	for _, sk := range avail {
		if sk.Entry != "" && loaded[sk.Name] {
			c.Tools = append(c.Tools, &skillTool{set: s, sk: sk})
		} else {
			c.Hide = append(c.Hide, sk.Name)
		}
	}
	return c, nil
}

// available returns the skills a run with these selected tools offers.
func (s *Set) available(selected []string) []*Skill {
	if slices.Contains(selected, LoadSkillTool) {
		return s.skills
	}
	var out []*Skill
	for _, sk := range s.skills {
		if slices.Contains(selected, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// loaded reports which of avail are in the prompt: preloaded, or loaded by
// a load_skill call of the last RetentionTurns turns.
func (s *Set) loaded(in orchestrator.PromptContext, avail []*Skill) map[string]bool {
	offered := map[string]bool{}
	for _, sk := range avail {
		offered[sk.Name] = true
	}
	out := map[string]bool{}
	for _, n := range in.Preload {
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
