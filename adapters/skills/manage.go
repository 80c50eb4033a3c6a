package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// The management API behind /wunder/admin/skills and
// /wunder/user_tools/skills (cmd/wunder adapts it to the gateway). owner
// "" is the admin, acting on the skills every user has; any other owner
// acts on their own uploads only. Errors wrap the core's sentinels.

// Info describes a skill.
type Info struct {
	// Name is the skill's name (SKILL.md); ToolName its tool name
	// ("alice@review" for a user's).
	Name        string          `json:"name"`
	ToolName    string          `json:"tool_name"`
	Description string          `json:"description"`
	Source      string          `json:"source"`
	Owner       string          `json:"owner,omitempty"`
	Enabled     bool            `json:"enabled"`
	Shared      bool            `json:"shared,omitempty"`
	HasScript   bool            `json:"has_script"`
	RunsCode    bool            `json:"runs_code"`
	InputSchema json.RawMessage `json:"input_schema"`
	Tools       []string        `json:"tools,omitempty"`
	MCPServers  []string        `json:"mcp_servers,omitempty"`
}

// AdminView is GET /wunder/admin/skills.
type AdminView struct {
	Paths   []string `json:"paths"`
	Enabled []string `json:"enabled"`
	Skills  []Info   `json:"skills"`
}

// UserView is GET /wunder/user_tools/skills.
type UserView struct {
	UserID  string   `json:"user_id"`
	Enabled []string `json:"enabled"`
	Shared  []string `json:"shared"`
	Preload []string `json:"preload"`
	Skills  []Info   `json:"skills"`
}

// Content is a skill's SKILL.md and the list of its files.
type Content struct {
	Name    string     `json:"name"`
	Path    string     `json:"path"`
	Content string     `json:"content"`
	Files   []FileInfo `json:"files"`
}

// FileInfo is one file of a skill.
type FileInfo struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// UserSettings is the body of POST /wunder/user_tools/skills; a nil list
// is left as it is.
type UserSettings struct {
	Enabled, Shared, Preload *[]string
}

var errNoUploads = fmt.Errorf("%w: skill uploads need the store (this wunder has none)", orchestrator.ErrUnavailable)

// Limits returns the upload limits in force.
func (s *Set) Limits() Limits { return s.opts.Limits }

func (s *Set) info(sk *Skill, enabled, shared bool) Info {
	in := Info{Name: sk.Name, ToolName: sk.Canonical(), Description: sk.Description, Source: sk.Source, Owner: sk.Owner,
		Enabled: enabled, Shared: shared, HasScript: sk.Entry != "", RunsCode: s.runnable(sk), InputSchema: sk.Inputs, Tools: sk.Tools}
	for _, m := range sk.MCPServers {
		in.MCPServers = append(in.MCPServers, m.Name)
	}
	return in
}

// AdminSkills lists every user's skills, enabled or not.
func (s *Set) AdminSkills(ctx context.Context) (*AdminView, error) {
	en := s.globalEnabled(ctx)
	v := &AdminView{Paths: nonNil(s.opts.Paths), Skills: []Info{}, Enabled: []string{}}
	for _, sk := range s.allGlobal(ctx) {
		on := en == nil || slices.Contains(en, sk.Name)
		if on {
			v.Enabled = append(v.Enabled, sk.Name)
		}
		v.Skills = append(v.Skills, s.info(sk, on, false))
	}
	return v, nil
}

// SetAdminEnabled stores the admin's list of enabled skills (of those
// every user has); every replica follows it.
func (s *Set) SetAdminEnabled(ctx context.Context, names []string) (*AdminView, error) {
	if s.opts.Configs == nil {
		return nil, errNoUploads
	}
	if len(names) > MaxListLen {
		return nil, fmt.Errorf("%w: enabled lists %d skills, over %d", orchestrator.ErrInvalidArgument, len(names), MaxListLen)
	}
	names = dedupe(names)
	var known []string
	for _, sk := range s.allGlobal(ctx) {
		known = append(known, sk.Name)
	}
	if bad := missing(names, known); len(bad) > 0 {
		return nil, fmt.Errorf("%w: no skill %s (the skills are: %s)", orchestrator.ErrInvalidArgument, strings.Join(bad, ", "), strings.Join(known, ", "))
	}
	if _, err := s.opts.Configs.Update(ctx, "", func(c *toolconfig.UserConfig) error {
		c.Skills.Enabled = names
		return nil
	}); err != nil {
		return nil, err
	}
	return s.AdminSkills(ctx)
}

// Upload checks a ZIP (ReadPackage, the MCP servers it declares) and
// stores it as owner's skill, replacing an earlier upload of the same
// name. The new skill is enabled: an admin's in the stored enabled list
// (when there is one), a user's in the user's.
func (s *Set) Upload(ctx context.Context, owner string, zipData []byte) (*Info, error) {
	if s.cache == nil || s.opts.Configs == nil {
		return nil, errNoUploads
	}
	pkg, err := ReadPackage(zipData, s.opts.Limits)
	if err != nil {
		return nil, err
	}
	sk := pkg.Skill
	if owner == "" && slices.ContainsFunc(s.dirSkills, func(d *Skill) bool { return d.Name == sk.Name }) {
		return nil, fmt.Errorf("%w: a skill named %q comes from skills.paths; choose another name", orchestrator.ErrConflict, sk.Name)
	}
	for _, m := range sk.MCPServers {
		if owner != "" && isStdio(MCPServer{Config: m.Config}) {
			return nil, invalid("mcpServers.%s: users' skills may not start stdio servers; use an HTTP MCP server", m.Name)
		}
		if s.opts.MCP != nil {
			m.Owner = owner
			if err := s.opts.MCP.Check(m); err != nil {
				return nil, invalid("mcpServers.%s: %v", m.Name, err)
			}
		}
	}
	if err := s.opts.Store.PutToolFiles(ctx, owner, toolconfig.KindSkill, sk.Name, pkg.Files, true); err != nil {
		return nil, err
	}
	s.invalidate(owner)
	_, err = s.opts.Configs.Update(ctx, owner, func(c *toolconfig.UserConfig) error {
		switch {
		case owner != "" && !slices.Contains(c.Skills.Enabled, sk.Name):
			c.Skills.Enabled = append(c.Skills.Enabled, sk.Name)
		case owner == "" && c.Skills.Enabled == nil && s.opts.Enabled != nil:
			c.Skills.Enabled = append(slices.Clone(s.opts.Enabled), sk.Name)
		case owner == "" && c.Skills.Enabled != nil && !slices.Contains(c.Skills.Enabled, sk.Name):
			c.Skills.Enabled = append(c.Skills.Enabled, sk.Name)
		default:
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, err
	}
	sk.Owner = owner
	in := s.info(sk, true, false)
	return &in, nil
}

// errUnchanged ends an Update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// find returns owner's skill named name: for the admin one of every
// user's (enabled or not), for a user one of their uploads. name may be
// the tool name ("alice@review") when it names owner. Not found wraps
// ErrNotFound; so does another user's skill.
func (s *Set) find(ctx context.Context, owner, name string) (*Skill, error) {
	if owner != "" {
		if o, n, ok := cutOwner(name); ok {
			if o != owner {
				return nil, fmt.Errorf("%w: you have no skill %q", orchestrator.ErrNotFound, name)
			}
			name = n
		}
	}
	if !skillName.MatchString(name) {
		return nil, fmt.Errorf("%w: %q is not a skill name (1-64 of a-z, 0-9, '_' and '-')", orchestrator.ErrInvalidArgument, name)
	}
	var list []*Skill
	if owner == "" {
		list = s.allGlobal(ctx)
	} else {
		s.invalidate(owner) // a fresh read: the user just uploaded, perhaps on another replica
		list = s.uploads(ctx, owner)
	}
	for _, sk := range list {
		if sk.Name == name {
			return sk, nil
		}
	}
	if owner == "" {
		return nil, fmt.Errorf("%w: no skill %q", orchestrator.ErrNotFound, name)
	}
	return nil, fmt.Errorf("%w: you have no skill %q", orchestrator.ErrNotFound, name)
}

// cutOwner splits "owner@name" at its last '@'.
func cutOwner(s string) (owner, name string, ok bool) {
	i := strings.LastIndexByte(s, '@')
	if i < 0 {
		return "", s, false
	}
	return s[:i], s[i+1:], true
}

// SkillContent returns a skill's SKILL.md and its file list.
func (s *Set) SkillContent(ctx context.Context, owner, name string) (*Content, error) {
	sk, err := s.find(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(filepath.Join(sk.Dir, "SKILL.md"))
	if err != nil {
		return nil, err
	}
	c := &Content{Name: sk.Name, Path: "SKILL.md", Content: string(doc), Files: []FileInfo{}}
	err = filepath.WalkDir(sk.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sk.Dir, p)
		c.Files = append(c.Files, FileInfo{Path: filepath.ToSlash(rel), Size: st.Size()})
		return nil
	})
	return c, err
}

// Delete removes owner's uploaded skill (and, for a user, its name from
// their lists). A skill under skills.paths cannot be deleted here.
func (s *Set) Delete(ctx context.Context, owner, name string) error {
	if s.cache == nil || s.opts.Configs == nil {
		return errNoUploads
	}
	sk, err := s.find(ctx, owner, name)
	if err != nil {
		return err
	}
	if sk.Source != SourceUpload {
		return fmt.Errorf("%w: skill %q comes from skills.paths (%s); remove its folder instead", orchestrator.ErrConflict, sk.Name, sk.Dir)
	}
	if err := s.opts.Store.DeleteToolFiles(ctx, owner, toolconfig.KindSkill, sk.Name); err != nil {
		return err
	}
	s.invalidate(owner)
	s.cache.forget(owner, sk.Name)
	drop := func(list []string, n string) []string {
		if list == nil {
			return nil
		}
		return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == n })
	}
	_, err = s.opts.Configs.Update(ctx, owner, func(c *toolconfig.UserConfig) error {
		c.Skills.Enabled = drop(c.Skills.Enabled, sk.Name)
		c.Skills.Shared = drop(c.Skills.Shared, sk.Name)
		c.Skills.Preload = drop(c.Skills.Preload, sk.Canonical())
		return nil
	})
	return err
}

// UserSkills returns a user's own skills and settings.
func (s *Set) UserSkills(ctx context.Context, userID string) (*UserView, error) {
	if s.cache == nil || s.opts.Configs == nil {
		return nil, errNoUploads
	}
	cfg, err := s.opts.Configs.Get(ctx, userID)
	if err != nil {
		return nil, err
	}
	v := &UserView{UserID: userID, Enabled: nonNil(cfg.Skills.Enabled), Shared: nonNil(cfg.Skills.Shared),
		Preload: nonNil(cfg.Skills.Preload), Skills: []Info{}}
	for _, sk := range s.uploads(ctx, userID) {
		v.Skills = append(v.Skills, s.info(sk, slices.Contains(v.Enabled, sk.Name), slices.Contains(v.Shared, sk.Name)))
	}
	return v, nil
}

// SetUserSkills writes a user's settings: enabled names their own
// skills, shared a subset of enabled, preload skills they may use (tool
// names: "code-review", "alice@review", "bob@shared"). A list left nil
// keeps its value.
func (s *Set) SetUserSkills(ctx context.Context, userID string, in UserSettings) (*UserView, error) {
	if s.cache == nil || s.opts.Configs == nil {
		return nil, errNoUploads
	}
	for what, l := range map[string]*[]string{"enabled": in.Enabled, "shared": in.Shared, "preload": in.Preload} {
		if l != nil && len(*l) > MaxListLen {
			return nil, fmt.Errorf("%w: %s lists %d skills, over %d", orchestrator.ErrInvalidArgument, what, len(*l), MaxListLen)
		}
	}
	s.invalidate(userID)
	var own []string
	for _, sk := range s.uploads(ctx, userID) {
		own = append(own, sk.Name)
	}
	_, err := s.opts.Configs.Update(ctx, userID, func(c *toolconfig.UserConfig) error {
		next := c.Skills
		if in.Enabled != nil {
			next.Enabled = dedupe(*in.Enabled)
		}
		if in.Shared != nil {
			next.Shared = dedupe(*in.Shared)
		}
		if in.Preload != nil {
			next.Preload = dedupe(*in.Preload)
		}
		if bad := missing(next.Enabled, own); len(bad) > 0 {
			return fmt.Errorf("%w: enabled names skills you have not uploaded: %s (yours: %s)", orchestrator.ErrInvalidArgument,
				strings.Join(bad, ", "), strings.Join(own, ", "))
		}
		if bad := missing(next.Shared, next.Enabled); len(bad) > 0 {
			return fmt.Errorf("%w: shared must be a subset of enabled; not enabled: %s", orchestrator.ErrInvalidArgument, strings.Join(bad, ", "))
		}
		if len(next.Preload) > 0 {
			var usable []string
			for _, sk := range slices.Concat(s.globalSkills(ctx), s.sharedWith(ctx, userID)) {
				usable = append(usable, sk.Canonical())
			}
			for _, n := range next.Enabled {
				usable = append(usable, userID+"@"+n)
			}
			if bad := missing(next.Preload, usable); len(bad) > 0 {
				return fmt.Errorf("%w: preload names skills you cannot use: %s (use tool names such as %q)", orchestrator.ErrInvalidArgument,
					strings.Join(bad, ", "), userID+"@name")
			}
		}
		c.Skills = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.UserSkills(ctx, userID)
}

// sharedWith are the skills other users share with userID.
func (s *Set) sharedWith(ctx context.Context, userID string) []*Skill {
	return s.visible(ctx, userID).shared
}

// MaxListLen caps the lists of the settings routes.
const MaxListLen = 256

func dedupe(list []string) []string {
	out := []string{}
	for _, n := range list {
		n = strings.TrimSpace(n)
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// missing returns the names not in known.
func missing(names, known []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(known, n) {
			out = append(out, n)
		}
	}
	return out
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
