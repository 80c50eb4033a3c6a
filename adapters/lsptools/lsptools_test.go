package lsptools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/lsptools"
	"github.com/wunder/wunder/lsp"
)

// newOffline wires a server that is never started: every test here must
// fail before a server would be needed.
func newOffline(t *testing.T, root string) *env {
	t.Helper()
	return wire(t, root, lsp.ServerConfig{ID: "nope", Command: []string{filepath.Join(t.TempDir(), "no-such-server")},
		Extensions: []string{".go"}, RootMarkers: []string{"../go.mod", "go.mod"}}, 5*time.Second, nil)
}

func TestWorkspaceEscapes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "x.go"), []byte("package x\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "go.mod"), []byte("module above\n"), 0o644))
	// The workspaces root itself is reached through a symlink.
	must(t, os.MkdirAll(filepath.Join(base, "real"), 0o755))
	must(t, os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "root")))
	e := newOffline(t, filepath.Join(base, "root"))
	ws, err := e.builtin.Workspace("alice")
	must(t, err)
	dir, err := ws.Resolve("")
	must(t, err)
	must(t, os.Symlink(outside, filepath.Join(dir, "link")))
	must(t, os.Symlink(filepath.Join(outside, "x.go"), filepath.Join(dir, "y.go")))

	for _, path := range []string{"../outside/x.go", "../../outside/x.go", "link/x.go", "y.go", "/etc/hostname.go", filepath.Join(outside, "x.go")} {
		res := e.call(t, e.lsp, "lsp", map[string]any{"operation": "definition", "path": path, "line": 1, "character": 1})
		if !res.IsError {
			t.Errorf("lsp on %s: %q, want an error", path, res.Content)
		}
		if !strings.Contains(path, outside) && strings.Contains(res.Content, outside) {
			t.Errorf("lsp on %s names the outside path: %q", path, res.Content)
		}
	}
	// The hook never looks outside either.
	if got := e.lsp.After(context.Background(), "alice", filepath.Join(outside, "x.go")); got != "" {
		t.Errorf("After(outside) = %q, want nothing", got)
	}
	if len(e.pool.Workers()) != 0 {
		t.Errorf("a server was started: %+v", e.pool.Workers())
	}
}

func TestArgumentsAndNoServer(t *testing.T) {
	t.Parallel()
	e := newOffline(t, t.TempDir())
	res := e.call(t, e.builtin, "write_file", map[string]any{"path": "notes.txt", "content": "x"})
	if res.Content != "created notes.txt (1 bytes)" {
		t.Errorf("write_file of a file no server handles = %q, want no summary", res.Content)
	}
	res = e.call(t, e.builtin, "write_file", map[string]any{"path": "a.go", "content": "package a\n"})
	if !strings.Contains(res.Content, "LSP (nope) on a.go") && !strings.Contains(res.Content, "LSP (nope): unavailable") {
		t.Errorf("write_file with a broken server = %q, want a short note", res.Content)
	}
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"operation": "nope", "path": "a.go"}, "unknown operation"},
		{map[string]any{"operation": "definition"}, `"path" is required`},
		{map[string]any{"operation": "definition", "path": "a.go"}, "1-based"},
		{map[string]any{"operation": "definition", "path": "a.go", "line": 9, "character": 1}, "past the end"},
		{map[string]any{"operation": "hover", "path": "notes.txt", "line": 1, "character": 1}, "no language server handles"},
		{map[string]any{"operation": "hover", "path": "missing.go", "line": 1, "character": 1}, "missing.go"},
	}
	for _, tt := range tests {
		res := e.call(t, e.lsp, "lsp", tt.args)
		if !res.IsError || !strings.Contains(res.Content, tt.want) {
			t.Errorf("lsp %v = %q, want an error containing %q", tt.args, res.Content, tt.want)
		}
	}
}

func TestNoServersNoTool(t *testing.T) {
	t.Parallel()
	pool := lsp.NewPool(nil)
	set := lsptools.New(pool, func(string) (lsptools.Workspace, error) { return nil, nil }, nil)
	tools, err := set.Tools(context.Background(), "alice")
	if err != nil || len(tools) != 0 {
		t.Errorf("Tools() = %v, %v; want none", tools, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
