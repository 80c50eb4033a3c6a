package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/wunder/wunder/orchestrator"
)

var (
	_ orchestrator.Toolset   = (*Set)(nil)
	_ orchestrator.Workspace = (*Set)(nil)
)

// summaryMaxEntries caps how many top-level entries [Set.Summary] names.
const summaryMaxEntries = 20

// Set is the built-in toolset: the workspace file tools, execute_command and
// ptc, each bound to the calling user's workspace. It also summarises a
// user's workspace for the prompt builder. A Set is safe for concurrent use.
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	opts      Options
	defs      atomic.Pointer[[]*toolDef] // enabled tools, in catalog order; replaced whole by SetEnabled
	summaries summaries                  // each workspace's last Summary (summary.go)
	quota     *quota                     // each workspace's usage against Options.MaxBytesPerUser (quota.go)
}

// New returns the built-in toolset configured by opts (nil means defaults).
// Bad options are an error wrapping [orchestrator.ErrInvalidArgument].
func New(opts *Options) (*Set, error) {
	o := defaults(opts)
	if err := o.validate(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, fmt.Errorf("%w: builtin: root %q: %w", orchestrator.ErrInvalidArgument, o.Root, err)
	}
	o.Root = root
	if o.Sandbox != nil {
		// The sandbox's identity must be able to pass through the root to
		// mount a workspace (not to list it).
		if err := o.Sandbox.PrepareRoot(root); err != nil {
			return nil, fmt.Errorf("builtin: workspace root: %w", err)
		}
	}
	s := &Set{opts: o, quota: newQuota(o.MaxBytesPerUser)}
	s.defs.Store(enabledDefs(o.Enabled))
	return s, nil
}

// enabledDefs are the catalog's tools that enabled names (all when empty).
func enabledDefs(enabled []string) *[]*toolDef {
	var defs []*toolDef
	for _, d := range catalog {
		if len(enabled) == 0 || slices.ContainsFunc(enabled, d.hasName) {
			defs = append(defs, d)
		}
	}
	return &defs
}

// SetEnabled changes which tools the Set offers (by canonical name or
// alias; empty = all), for the admin API; the next call of Tools sees it. A
// run that already has a tool keeps it. An unknown name is an error
// wrapping [orchestrator.ErrInvalidArgument] and changes nothing.
func (s *Set) SetEnabled(enabled []string) error {
	for _, name := range enabled {
		if lookupDef(name) == nil {
			return fmt.Errorf("%w: builtin: enabled: unknown tool %q", orchestrator.ErrInvalidArgument, name)
		}
	}
	s.defs.Store(enabledDefs(enabled))
	return nil
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "builtin" }

// Tools implements [orchestrator.Toolset]: the enabled tools bound to userID's
// workspace. A bad user id is an error wrapping
// [orchestrator.ErrInvalidArgument]. The workspace directory is created by
// the first tool that needs it.
func (s *Set) Tools(_ context.Context, userID string) ([]orchestrator.Tool, error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return nil, err
	}
	defs := *s.defs.Load()
	tools := make([]orchestrator.Tool, 0, len(defs))
	for _, d := range defs {
		tools = append(tools, &boundTool{def: d, set: s, ws: ws})
	}
	return tools, nil
}

// Workspace returns userID's workspace, Root/<user_id>/, without creating it.
// A user id that breaks [orchestrator.ValidateUserID] (the one rule, which
// keeps the id a single path element) is an error wrapping
// [orchestrator.ErrInvalidArgument].
func (s *Set) Workspace(userID string) (*Workspace, error) {
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return nil, err
	}
	return &Workspace{dir: filepath.Join(s.opts.Root, userID), deny: s.opts.DenyGlobs}, nil
}

// Summary implements [orchestrator.Workspace]: a one-line listing of the
// workspace's top-level entries, e.g.
// "3 entries: a.txt (12 B), notes.md (1.1 KiB), src/". Denied entries are
// left out. It never creates the workspace.
func (s *Set) Summary(_ context.Context, userID string) (string, error) {
	ws, err := s.Workspace(userID)
	if err != nil {
		return "", err
	}
	if text, ok := s.summaries.get(ws.dir); ok {
		return text, nil
	}
	// The directory's time before its entries: a change while they are
	// read leaves a time the summary does not match. A workspace that does
	// not exist yet (most agents' callers never write one) is told by the
	// stat alone, one system call a run; one removed between the two, by
	// the listing.
	dirInfo, err := os.Stat(ws.dir)
	var entries []os.DirEntry
	if err == nil {
		entries, err = os.ReadDir(ws.dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return summarize(0, nil), nil
	}
	if err != nil {
		return "", fmt.Errorf("builtin: workspace summary: %w", err)
	}
	var parts []string
	sizes := map[string]int64{}
	n := 0
	for _, e := range entries {
		if ws.denied(e.Name()) {
			continue
		}
		n++
		if len(parts) < summaryMaxEntries {
			size, sized := sizeOf(e)
			parts = append(parts, describe(e, size, sized))
			if sized {
				sizes[e.Name()] = size
			}
		}
	}
	text := summarize(n, parts)
	s.summaries.put(ws.dir, &summary{dirTime: dirInfo.ModTime(), sizes: sizes, text: text})
	return text, nil
}

// summarize renders n entries, of which parts are described.
func summarize(n int, parts []string) string {
	if n == 0 {
		return "The workspace is empty."
	}
	noun := "entries"
	if n == 1 {
		noun = "entry"
	}
	out := fmt.Sprintf("%d %s: %s", n, noun, strings.Join(parts, ", "))
	if n > len(parts) {
		out += fmt.Sprintf(", ... and %d more", n-len(parts))
	}
	return out
}

// describeEntry renders one directory entry for listings: "src/",
// "a.txt (12 B)", "link@".
func describeEntry(e fs.DirEntry) string {
	size, sized := sizeOf(e)
	return describe(e, size, sized)
}

// describe is describeEntry given sizeOf(e).
func describe(e fs.DirEntry, size int64, sized bool) string {
	switch {
	case e.IsDir():
		return e.Name() + "/"
	case e.Type()&fs.ModeSymlink != 0:
		return e.Name() + "@"
	case !sized:
		return e.Name()
	}
	return fmt.Sprintf("%s (%s)", e.Name(), formatSize(size))
}

// formatSize renders a byte count for people and models: 12 B, 1.1 KiB.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}

// Known reports whether name is a built-in tool's canonical name or alias.
func Known(name string) bool { return lookupDef(name) != nil }
