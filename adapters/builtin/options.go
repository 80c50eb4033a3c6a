package builtin

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
)

// Defaults of [Options]; [defaults] is the one place that applies them.
const (
	// DefaultCommandTimeout bounds one execute_command or ptc call.
	DefaultCommandTimeout = 60 * time.Second
	// DefaultMaxCommandTimeout is the largest timeout_s a call may ask for.
	DefaultMaxCommandTimeout = 10 * time.Minute
	// DefaultMaxOutputBytes caps the captured output of one command.
	DefaultMaxOutputBytes = 64 << 10
	// DefaultMaxFileBytes caps what one call reads or writes.
	DefaultMaxFileBytes = 1 << 20
	// DefaultPython is the interpreter ptc runs.
	DefaultPython = "python3"
	// DefaultRoot is where workspaces live when Options.Root is empty.
	DefaultRoot = "data/workspaces"
	// DefaultMaxTreeEntries caps the entries one copy or archive of the
	// workspace API takes.
	DefaultMaxTreeEntries = 10000
	// DefaultMaxTreeBytes caps the file bytes one copy or archive takes.
	DefaultMaxTreeBytes = 512 << 20
)

// Options configures the built-in tools. The zero value means the documented
// defaults; a nil *Options passed to [New] means the same.
type Options struct {
	// Root is the directory holding one workspace per user, Root/<user_id>/.
	// Default "data/workspaces", made absolute at [New].
	Root string
	// AllowCommands lists the program names (argv[0]'s base name)
	// execute_command may run (config security.allow_commands). Empty means
	// execute_command refuses everything.
	AllowCommands []string
	// DenyGlobs are slash-separated patterns, relative to the workspace, that
	// no tool may read, write or list (config security.deny_globs), e.g.
	// ".env", "**/*.pem", ".git/**". "*", "?" and "[...]" match within one
	// path segment, "**" matches zero or more segments. A path is denied when
	// it or any of its parent directories matches. Default: none.
	DenyGlobs []string
	// CommandTimeout bounds one command when the call gives no timeout_s.
	// Default 60s.
	CommandTimeout time.Duration
	// MaxCommandTimeout is the upper bound of a call's timeout_s. Default
	// 10m, and never below CommandTimeout.
	MaxCommandTimeout time.Duration
	// MaxOutputBytes caps the output a command result keeps (head and tail
	// with a truncation marker in between). Default 64 KiB.
	MaxOutputBytes int
	// MaxFileBytes caps what read_file returns and what write_file,
	// replace_text and edit_file write; search_content skips larger files.
	// Default 1 MiB.
	MaxFileBytes int
	// Python is the interpreter ptc runs: a name looked up on PATH or an
	// absolute path. Default "python3".
	Python string
	// Enabled lists the tools to offer, by canonical name or alias
	// (config tools.builtin.enabled). Empty means all.
	Enabled []string
	// Sandbox, if set, runs execute_command and ptc confined by bubblewrap
	// (config sandbox.mode: bwrap): the workspace appears at /workspace,
	// which is also HOME, and a Sandbox whose Check fails makes both tools
	// refuse with its message. Nil runs them unconfined (sandbox.mode:
	// none), with the workspace's host path as working directory and HOME.
	Sandbox *sandbox.Sandbox
	// MaxTreeEntries and MaxTreeBytes bound one copy or archive of the
	// workspace API (config workspace.max_tree_entries, max_tree_bytes):
	// a tree over either is refused before anything is written. Defaults
	// 10000 entries, 512 MiB.
	MaxTreeEntries int
	MaxTreeBytes   int64
	// MaxBytesPerUser is each workspace's quota (config
	// workspace.max_bytes_per_user, whose default is 1 GiB): the bytes of
	// its files. A write that would take a workspace over it is refused
	// with a *QuotaError before anything is written, and a command that
	// takes it over is stopped (quota.go, quota_watch.go). Default 0: no
	// quota.
	MaxBytesPerUser int64
	// Diagnostics, if set, is asked after write_file, replace_text and
	// edit_file change a file, and its summary is appended to their result
	// (config lsp). Nil means no summary and no delay.
	Diagnostics Diagnostics
}

// defaults returns a copy of opts with every zero field set to its default.
func defaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
		o.AllowCommands = slices.Clone(opts.AllowCommands)
		o.DenyGlobs = slices.Clone(opts.DenyGlobs)
		o.Enabled = slices.Clone(opts.Enabled)
	}
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.MaxCommandTimeout <= 0 {
		o.MaxCommandTimeout = DefaultMaxCommandTimeout
	}
	o.MaxCommandTimeout = max(o.MaxCommandTimeout, o.CommandTimeout)
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.MaxTreeEntries <= 0 {
		o.MaxTreeEntries = DefaultMaxTreeEntries
	}
	if o.MaxTreeBytes <= 0 {
		o.MaxTreeBytes = DefaultMaxTreeBytes
	}
	return o
}

// validate checks the options after defaults; errors wrap
// [orchestrator.ErrInvalidArgument].
func (o *Options) validate() error {
	if o.MaxBytesPerUser < 0 {
		return fmt.Errorf("%w: builtin: max_bytes_per_user must be 0 (no quota) or more, got %d", orchestrator.ErrInvalidArgument, o.MaxBytesPerUser)
	}
	for _, g := range o.DenyGlobs {
		if err := checkGlob(g); err != nil {
			return fmt.Errorf("%w: builtin: deny_globs %q: %w", orchestrator.ErrInvalidArgument, g, err)
		}
	}
	for _, name := range o.Enabled {
		if lookupDef(name) == nil {
			return fmt.Errorf("%w: builtin: enabled: unknown tool %q", orchestrator.ErrInvalidArgument, name)
		}
	}
	for _, c := range o.AllowCommands {
		if c == "" || filepath.Base(c) != c {
			return fmt.Errorf("%w: builtin: allow_commands %q: want a program name, not a path", orchestrator.ErrInvalidArgument, c)
		}
	}
	if strings.Contains(o.Python, "/") && !filepath.IsAbs(o.Python) {
		return fmt.Errorf("%w: builtin: python %q: want a name on PATH or an absolute path", orchestrator.ErrInvalidArgument, o.Python)
	}
	return nil
}
