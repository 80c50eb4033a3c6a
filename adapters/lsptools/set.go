package lsptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/lsp"
	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.Toolset = (*Set)(nil)

// Defaults of [Options].
const (
	DefaultDiagnosticsWait = time.Second
	DefaultMaxResultBytes  = 8 << 10
	DefaultMaxFileBytes    = 1 << 20
)

// Workspace is what lsptools needs of a user's workspace;
// *builtin.Workspace satisfies it.
type Workspace interface {
	// Dir is the workspace directory.
	Dir() string
	// Resolve maps a workspace-relative path to an absolute one inside the
	// workspace, refusing escapes.
	Resolve(rel string) (string, error)
}

// WorkspaceFunc returns a user's workspace.
type WorkspaceFunc func(userID string) (Workspace, error)

// Options configures a [Set]. Zero fields mean the documented defaults.
type Options struct {
	// DiagnosticsWait bounds how long [Set.After] and the diagnostics
	// operation wait for the server's diagnostics of a changed file
	// (config lsp.diagnostics_debounce_ms). Default 1s.
	DiagnosticsWait time.Duration
	// MaxResultBytes caps the text of one tool result. Default 8 KiB.
	MaxResultBytes int
	// MaxFileBytes caps the files sent to a server. Default 1 MiB.
	MaxFileBytes int
}

// Set is the `lsp` tool source over an [lsp.Pool], and the diagnostics
// hook of the built-in write tools ([Set.After]).
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	pool *lsp.Pool
	ws   WorkspaceFunc
	opts Options
}

// New returns the toolset; pool and ws are required.
func New(pool *lsp.Pool, ws WorkspaceFunc, opts *Options) *Set {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.DiagnosticsWait <= 0 {
		o.DiagnosticsWait = DefaultDiagnosticsWait
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	return &Set{pool: pool, ws: ws, opts: o}
}

// Name implements [orchestrator.Toolset].
func (s *Set) Name() string { return "lsp" }

// Tools implements [orchestrator.Toolset]: the lsp tool bound to userID,
// or nothing when no server is configured.
func (s *Set) Tools(_ context.Context, userID string) ([]orchestrator.Tool, error) {
	if len(s.pool.Servers()) == 0 {
		return nil, nil
	}
	return []orchestrator.Tool{&tool{set: s, user: userID}}, nil
}

// target is a file resolved for one call: its workspace, server, root and
// content.
type target struct {
	wsDir string // the workspace, symlinks resolved
	abs   string
	rel   string
	srv   lsp.ServerConfig
	text  string
}

// errNoServer is a file no server handles.
var errNoServer = errors.New("no language server handles this file")

// resolve finds the workspace file rel of userID and the server for it.
func (s *Set) resolve(userID, rel string) (*target, error) {
	ws, err := s.ws(userID)
	if err != nil {
		return nil, err
	}
	abs, err := ws.Resolve(rel)
	if err != nil {
		return nil, err
	}
	return s.resolveAbs(ws.Dir(), abs)
}

func (s *Set) resolveAbs(wsDir, abs string) (*target, error) {
	srv, ok := s.pool.ServerFor(abs)
	if !ok {
		return nil, fmt.Errorf("%w (%s); servers: %s", errNoServer, filepath.Ext(abs), s.serverList())
	}
	real, err := filepath.EvalSymlinks(wsDir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	t := &target{wsDir: real, abs: abs, srv: srv}
	if !t.inside(abs) {
		return nil, fmt.Errorf("%w: %s", lsp.ErrOutsideWorkspace, filepath.Base(abs))
	}
	t.rel = t.relPath(abs)
	return t, nil
}

// read loads the file, bounded.
func (t *target) read(limit int) error {
	info, err := os.Stat(t.abs)
	if err != nil {
		return fmt.Errorf("%s: %w", t.rel, errors.Unwrap(err))
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", t.rel)
	}
	if info.Size() > int64(limit) {
		return fmt.Errorf("%s is over the %d byte limit", t.rel, limit)
	}
	data, err := os.ReadFile(t.abs)
	if err != nil {
		return fmt.Errorf("%s: %w", t.rel, errors.Unwrap(err))
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%s is not UTF-8 text", t.rel)
	}
	t.text = string(data)
	return nil
}

// relPath renders a path for the model: relative to the workspace, or
// marked as outside it (such files are never read).
func (t *target) relPath(abs string) string {
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(t.wsDir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		parts := strings.Split(filepath.ToSlash(abs), "/")
		if len(parts) > 3 {
			parts = parts[len(parts)-3:]
		}
		return "(outside the workspace) .../" + strings.Join(parts, "/")
	}
	return filepath.ToSlash(rel)
}

// inside reports whether abs lies in the workspace.
func (t *target) inside(abs string) bool {
	return !strings.HasPrefix(t.relPath(abs), "(outside")
}

// acquire finds the project root of t and the worker for it.
func (s *Set) acquire(ctx context.Context, userID string, t *target) (*lsp.Worker, func(), error) {
	root, err := lsp.FindRoot(t.wsDir, t.abs, t.srv.RootMarkers)
	if err != nil {
		return nil, nil, err
	}
	return s.pool.Acquire(ctx, lsp.Key{User: userID, Root: root, Server: t.srv.ID})
}

func (s *Set) serverList() string {
	var ids []string
	for _, srv := range s.pool.Servers() {
		ids = append(ids, fmt.Sprintf("%s (%s)", srv.ID, strings.Join(srv.Extensions, " ")))
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// After implements the diagnostics hook of the built-in write tools: a
// short summary of what the server says about the file at abs (errors
// first), collected within DiagnosticsWait. It returns "" at once when no
// server handles the file.
func (s *Set) After(ctx context.Context, userID, abs string) string {
	ws, err := s.ws(userID)
	if err != nil {
		return ""
	}
	t, err := s.resolveAbs(ws.Dir(), abs)
	if err != nil {
		return ""
	}
	if err := t.read(s.opts.MaxFileBytes); err != nil {
		return ""
	}
	w, release, err := s.acquire(ctx, userID, t)
	if err != nil {
		return fmt.Sprintf("LSP (%s): unavailable: %s", t.srv.ID, shortErr(err))
	}
	defer release()
	mark, err := w.Sync(ctx, t.abs, t.text)
	if err != nil {
		return fmt.Sprintf("LSP (%s): unavailable: %s", t.srv.ID, shortErr(err))
	}
	diags, fresh := w.WaitDiagnostics(ctx, mark, s.opts.DiagnosticsWait)
	return renderDiagnostics(t, diags, fresh, s.opts.DiagnosticsWait, 10)
}

// shortErr is an error for the model: one line, bounded.
func shortErr(err error) string { return oneLine(err.Error(), 200) }

// oneLine puts s on one line and cuts it to at most n bytes (and "..."), on
// a character boundary.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return prefix(s, n) + "..."
}

// prefix returns s cut to at most n bytes, on a character boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	for len(cut) > 0 && !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut
}

// args are the lsp tool's arguments.
type args struct {
	Operation string `json:"operation"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Character int    `json:"character"`
	Query     string `json:"query"`
}

func decodeArgs(raw json.RawMessage) (args, error) {
	var a args
	if len(strings.TrimSpace(string(raw))) == 0 {
		return a, errors.New("invalid arguments: want a JSON object")
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && json.Unmarshal([]byte(s), &a) == nil {
			return a, nil
		}
		return a, fmt.Errorf("invalid arguments: %v", err)
	}
	return a, nil
}
