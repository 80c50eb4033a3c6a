// Package toolconfig keeps the tool sources configured at run time:
// uploaded packages (skills, knowledge bases: [File], [FileStore]) and each
// user's own tool configuration ([UserConfig], [Store], read through the
// [Configs] cache). Both live in the store, so every replica sees the same;
// adapters/skills, adapters/knowledge and adapters/usertools build tools
// from them, storage implements the stores (toolconfigtest.RunStoreTests is
// their contract), and cmd/wunder hands one [Configs] to every source.
//
// The orchestrator never reads a tool configuration: the toolsets that
// use one offer their tools to its registry like any other toolset, and
// the per-user tool rule the registry's policy applies
// (orchestrator.ToolAccess) stays in the core. This package imports the
// core for its sentinel errors only.
package toolconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// Kinds of [File] packages.
const (
	KindSkill     = "skill"
	KindKnowledge = "knowledge"
)

// File is one file of an uploaded package: a skill (Kind
// [KindSkill], Name the skill's) or a knowledge base
// ([KindKnowledge], Name the base's).
type File struct {
	// Owner is the user who uploaded it; "" means installed by an admin,
	// for everyone.
	Owner string
	Kind  string
	Name  string
	// Path is slash-separated, relative and clean (see [CheckFilePath]).
	Path string
	// Data is nil when listed without data.
	Data []byte
	Size int64
	// SHA256 is the hex digest of Data; the store computes it.
	SHA256    string
	UpdatedAt time.Time
}

// FileStore keeps uploaded packages. A package is the set of files of
// one (owner, kind, name). storage.Store and the in-memory store implement
// it; both pass toolconfigtest.RunStoreTests.
type FileStore interface {
	// PutToolFiles writes files into the package (owner, kind, name),
	// replacing files of the same path; with replace, the package's other
	// files are removed in the same transaction. Size, SHA256 and UpdatedAt
	// are computed. The files' own Owner, Kind and Name are ignored.
	PutToolFiles(ctx context.Context, owner, kind, name string, files []File, replace bool) error
	// ListToolFiles lists the files of owner's packages of kind, of the
	// package name only when name is not "", ordered by name then path;
	// Data is filled only when withData.
	ListToolFiles(ctx context.Context, owner, kind, name string, withData bool) ([]File, error)
	// DeleteToolFiles removes the named paths of a package, or the whole
	// package when paths is empty. It returns an error wrapping orchestrator.ErrNotFound
	// when nothing was removed.
	DeleteToolFiles(ctx context.Context, owner, kind, name string, paths ...string) error
}

// Limits of package names and file paths.
const (
	maxToolNameLen = 64
	maxToolPathLen = 512
)

// clipped bounds a name or path echoed in an error message.
func clipped(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// CheckName reports whether name may name a skill, knowledge base or
// user MCP server: 1 to 64 characters, letters (any script), digits, "_",
// "-" and "." not leading, no "@" (the owner separator). The error wraps
// orchestrator.ErrInvalidArgument.
func CheckName(kind, name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: %s name %q %s", orchestrator.ErrInvalidArgument, kind, clipped(name), why)
	}
	switch {
	case name == "":
		return fmt.Errorf("%w: %s name is required", orchestrator.ErrInvalidArgument, kind)
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case utf8.RuneCountInString(name) > maxToolNameLen:
		return bad(fmt.Sprintf("is longer than %d characters", maxToolNameLen))
	case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "-"):
		return bad("may not start with '.' or '-'")
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return bad(fmt.Sprintf("contains %q (allowed: letters, digits, '_', '-', '.')", r))
		}
	}
	return nil
}

// CheckFilePath reports whether p may be the path of a file in a
// package: relative, slash-separated, clean (no "." or ".." element, no
// empty element), no backslash or control character, at most 512 bytes.
// The error wraps orchestrator.ErrInvalidArgument.
func CheckFilePath(p string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: file path %q %s", orchestrator.ErrInvalidArgument, clipped(p), why)
	}
	switch {
	case p == "":
		return fmt.Errorf("%w: file path is required", orchestrator.ErrInvalidArgument)
	case len(p) > maxToolPathLen:
		return bad(fmt.Sprintf("is longer than %d bytes", maxToolPathLen))
	case !utf8.ValidString(p):
		return bad("is not valid UTF-8")
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' || r == ':' }):
		return bad("contains a control character, '\\' or ':'")
	case strings.HasPrefix(p, "/"):
		return bad("is absolute")
	case path.Clean(p) != p:
		return bad("is not clean (no '.', '..' or empty elements)")
	case p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return bad("leaves its package")
	}
	return nil
}

// UserConfig is one user's own tool configuration (the original's
// /wunder/user_tools/*): MCP servers, skills, knowledge bases and an extra
// prompt. What the user marks shared is offered to every other user as
// owner@tool, run with this configuration.
type UserConfig struct {
	UserID     string      `json:"user_id"`
	MCPServers []MCPServer `json:"mcp_servers"`
	Skills     Skills      `json:"skills"`
	Knowledge  []Knowledge `json:"knowledge"`
	// ExtraPrompt is added to the system prompt of the user's own runs,
	// never to anyone else's.
	ExtraPrompt string `json:"extra_prompt"`
	// Revision counts writes, from 1; see [Store].
	Revision  int64     `json:"revision"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MCPServer is one MCP server of a user. Config is the server as
// mcp.servers[] takes it (parsed and checked by adapters/usertools).
type MCPServer struct {
	Name        string          `json:"name"`
	Config      json.RawMessage `json:"config"`
	SharedTools []string        `json:"shared_tools,omitempty"`
}

// Skills says which of a user's uploaded skills are enabled and which
// shared (names as in their SKILL.md), and which skills the user's runs
// preload (canonical names: "code-review", "alice@review", "bob@shared").
type Skills struct {
	Enabled []string `json:"enabled"`
	Shared  []string `json:"shared"`
	Preload []string `json:"preload,omitempty"`
}

// Knowledge is one knowledge base of a user (its files are the
// user's [KindKnowledge] package of the same name).
type Knowledge struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Shared      bool   `json:"shared"`
}

// Shares reports whether c offers anything to other users.
func (c *UserConfig) Shares() bool {
	if len(c.Skills.Shared) > 0 {
		return true
	}
	for _, s := range c.MCPServers {
		if len(s.SharedTools) > 0 {
			return true
		}
	}
	for _, k := range c.Knowledge {
		if k.Shared {
			return true
		}
	}
	return false
}

// Store keeps users' tool configurations. storage.Store and
// the in-memory store implement it; both pass
// toolconfigtest.RunStoreTests.
type Store interface {
	// GetUserToolConfig returns the user's configuration, an error
	// wrapping orchestrator.ErrNotFound when none was ever written.
	GetUserToolConfig(ctx context.Context, userID string) (*UserConfig, error)
	// PutUserToolConfig writes c whole if the stored revision is still
	// c.Revision (0: none stored yet), else returns an error wrapping
	// orchestrator.ErrConflict. On success c.Revision is the new revision and
	// c.UpdatedAt the time of the write.
	PutUserToolConfig(ctx context.Context, c *UserConfig) error
	// ListSharedToolConfigs returns the configurations that share anything
	// ([UserConfig.Shares]), by user id.
	ListSharedToolConfigs(ctx context.Context) ([]*UserConfig, error)
}

// DefaultTTL is how long [Configs] keeps what it read.
const DefaultTTL = 5 * time.Second

// Configs reads users' tool configurations for the toolsets that
// build tools from them, with a short cache: a change made through
// [Configs.Update] is seen at once in this process and within the
// TTL in every other replica. Safe for concurrent use.
type Configs struct {
	store Store
	ttl   time.Duration
	now   func() time.Time

	mu     sync.Mutex // held briefly, never across store calls
	users  map[string]cachedConfig
	shared cachedShared
}

type cachedConfig struct {
	c  *UserConfig // nil: none stored
	at time.Time
}

type cachedShared struct {
	list []*UserConfig
	at   time.Time
	ok   bool
}

// NewConfigs returns a reader over store; ttl <= 0 means
// [DefaultTTL].
func NewConfigs(store Store, ttl time.Duration) *Configs {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Configs{store: store, ttl: ttl, now: time.Now, users: map[string]cachedConfig{}}
}

// Get returns the user's configuration; an empty one (Revision 0) when
// none is stored. Callers must not modify it.
func (u *Configs) Get(ctx context.Context, userID string) (*UserConfig, error) {
	u.mu.Lock()
	e, ok := u.users[userID]
	u.mu.Unlock()
	if ok && u.now().Sub(e.at) < u.ttl {
		return orEmpty(e.c, userID), nil
	}
	c, err := u.store.GetUserToolConfig(ctx, userID)
	switch {
	case errors.Is(err, orchestrator.ErrNotFound):
		c = nil
	case err != nil:
		return nil, err
	}
	u.mu.Lock()
	u.users[userID] = cachedConfig{c: c, at: u.now()}
	u.mu.Unlock()
	return orEmpty(c, userID), nil
}

// Shared returns the configurations that share something, by user id.
// Callers must not modify them.
func (u *Configs) Shared(ctx context.Context) ([]*UserConfig, error) {
	u.mu.Lock()
	e := u.shared
	u.mu.Unlock()
	if e.ok && u.now().Sub(e.at) < u.ttl {
		return e.list, nil
	}
	list, err := u.store.ListSharedToolConfigs(ctx)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	u.shared = cachedShared{list: list, at: u.now(), ok: true}
	u.mu.Unlock()
	return list, nil
}

// maxUpdateAttempts bounds the retries of [Configs.Update] when
// concurrent writers keep winning.
const maxUpdateAttempts = 8

// Update reads the user's configuration, applies edit to a copy and writes
// it, retrying from a fresh read when another writer came first. An error
// from edit is returned as it is, and nothing is written.
func (u *Configs) Update(ctx context.Context, userID string, edit func(*UserConfig) error) (*UserConfig, error) {
	for range maxUpdateAttempts {
		c, err := u.store.GetUserToolConfig(ctx, userID)
		switch {
		case errors.Is(err, orchestrator.ErrNotFound):
			c = &UserConfig{UserID: userID}
		case err != nil:
			return nil, err
		}
		if err := edit(c); err != nil {
			return nil, err
		}
		c.UserID = userID
		err = u.store.PutUserToolConfig(ctx, c)
		if errors.Is(err, orchestrator.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		u.mu.Lock()
		u.users[userID] = cachedConfig{c: c, at: u.now()}
		u.shared = cachedShared{}
		u.mu.Unlock()
		return c, nil
	}
	return nil, fmt.Errorf("%w: tool configuration of %q changed %d times while being written; try again", orchestrator.ErrBusy, userID, maxUpdateAttempts)
}

func orEmpty(c *UserConfig, userID string) *UserConfig {
	if c == nil {
		return &UserConfig{UserID: userID}
	}
	return c
}
