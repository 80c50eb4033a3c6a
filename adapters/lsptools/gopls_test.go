package lsptools_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/adapters/lsptools"
	"github.com/wunder/wunder/lsp"
	"github.com/wunder/wunder/orchestrator"
)

// goplsPath finds gopls v0.23.0 as .ci/run installs it (bin/tools), or on
// PATH. Without it the test skips loudly, or fails when CI=true.
func goplsPath(t testing.TB) string {
	t.Helper()
	if p, err := filepath.Abs(filepath.Join("..", "..", "bin", "tools", "gopls")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	msg := "gopls not found in bin/tools or on PATH; install it with: GOBIN=$PWD/bin/tools go install golang.org/x/tools/gopls@v0.23.0"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPING the gopls integration test: " + msg)
	return ""
}

// env is a workspace root with the built-in tools and the lsp tool wired
// as cmd/wunder wires them.
type env struct {
	pool    *lsp.Pool
	builtin *builtin.Set
	lsp     *lsptools.Set
	root    string
}

func newEnv(t testing.TB, gopls string) *env {
	t.Helper()
	// The workspaces root is reached through a symlink, as it often is
	// (/var -> /private/var, a mounted volume): roots are resolved.
	real := t.TempDir()
	root := filepath.Join(t.TempDir(), "workspaces")
	if err := os.Symlink(real, root); err != nil {
		t.Fatal(err)
	}
	return wire(t, root, lsp.ServerConfig{ID: "gopls", Command: []string{gopls}, Extensions: []string{".go"},
		RootMarkers: []string{"go.work", "go.mod"}, Env: map[string]string{"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}},
		2*time.Minute, &lsptools.Options{DiagnosticsWait: time.Minute})
}

// wire builds the env of root: a pool of srv (requests bounded by timeout),
// the lsp tool over it, and the built-in tools with its diagnostics hook.
func wire(t testing.TB, root string, srv lsp.ServerConfig, timeout time.Duration, opts *lsptools.Options) *env {
	t.Helper()
	e := &env{root: root}
	e.pool = lsp.NewPool(&lsp.Options{
		Servers: []lsp.ServerConfig{srv},
		Timeout: timeout,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	t.Cleanup(func() {
		if err := e.pool.Close(context.Background()); err != nil {
			t.Errorf("pool close: %v", err)
		}
	})
	e.lsp = lsptools.New(e.pool, func(user string) (lsptools.Workspace, error) {
		ws, err := e.builtin.Workspace(user)
		if err != nil {
			return nil, err
		}
		return ws, nil
	}, opts)
	var err error
	if e.builtin, err = builtin.New(&builtin.Options{Root: root, Diagnostics: e.lsp}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) call(t testing.TB, set orchestrator.Toolset, name string, args any) *orchestrator.ToolResult {
	t.Helper()
	tools, err := set.Tools(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	for _, tl := range tools {
		if sp := tl.Spec(); sp.Name == name || slices.Contains(sp.Aliases, name) {
			res, err := tl.Call(context.Background(), &orchestrator.ToolInvocation{UserID: "alice", Arguments: raw, Output: func(string, string) {}})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

const goMod = "module example.com/m\n\ngo 1.26\n"

// mainGo has a type error on line 11 and a call of greet after non-ASCII
// text on line 10.
const mainGo = `package main

import "fmt"

func greet(name string) string {
	return "héllo, " + name
}

func main() {
	s := "wörld😀"; fmt.Println(greet(s))
	fmt.Println(undefinedThing)
}
`

func TestGopls(t *testing.T) {
	gopls := goplsPath(t)
	e := newEnv(t, gopls)
	if res := e.call(t, e.builtin, "write_file", map[string]any{"path": "m/go.mod", "content": goMod}); res.IsError {
		t.Fatal(res.Content)
	}
	t0 := time.Now()
	res := e.call(t, e.builtin, "write_file", map[string]any{"path": "m/main.go", "content": mainGo})
	t.Logf("write_file with a cold gopls: %s\n%s", time.Since(t0), res.Content)
	if res.IsError || !strings.Contains(res.Content, "LSP (gopls) on m/main.go: 1 error") ||
		!strings.Contains(res.Content, "m/main.go:11:14 error: undefined: undefinedThing") {
		t.Fatalf("write_file result lacks the diagnostic:\n%s", res.Content)
	}

	// Jump from the call after "wörld😀" (line 10) to greet's declaration.
	line10 := strings.Split(mainGo, "\n")[9]
	col := len([]rune(line10[:strings.Index(line10, "greet")])) + 1
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "definition", "path": "m/main.go", "line": 10, "character": col + 2})
	t.Logf("definition:\n%s", res.Content)
	if res.IsError || !strings.HasPrefix(res.Content, "m/main.go:5:6\n") || !strings.Contains(res.Content, ">    5 | func greet(name string) string {") {
		t.Fatalf("definition = %q", res.Content)
	}
	// The standard library is outside the workspace: named, never read.
	pcol := len([]rune(line10[:strings.Index(line10, "Println")])) + 1
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "definition", "path": "m/main.go", "line": 10, "character": pcol})
	if res.IsError || !strings.HasPrefix(res.Content, "(outside the workspace) .../src/fmt/print.go:") || strings.Contains(res.Content, "|") {
		t.Errorf("definition of fmt.Println = %q", res.Content)
	}
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "references", "path": "m/main.go", "line": 5, "character": 7})
	t.Logf("references:\n%s", res.Content)
	if res.IsError || !strings.Contains(res.Content, "2 results") || !strings.Contains(res.Content, "m/main.go:5:6: func greet") ||
		!strings.Contains(res.Content, "m/main.go:10:"+strconv.Itoa(col)+": s := \"wörld😀\"; fmt.Println(greet(s))") {
		t.Fatalf("references = %q", res.Content)
	}
	res = e.call(t, e.lsp, "LSP查询", map[string]any{"operation": "hover", "path": "m/main.go", "line": 5, "character": 7})
	if res.IsError || !strings.Contains(res.Content, "func greet(name string) string") {
		t.Errorf("hover = %q", res.Content)
	}
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "document_symbol", "path": "m/main.go"})
	if res.IsError || !strings.Contains(res.Content, "function greet") {
		t.Errorf("document_symbol = %q", res.Content)
	}
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "workspace_symbol", "path": "m/main.go", "query": "greet"})
	if res.IsError || !strings.Contains(res.Content, "greet") || !strings.Contains(res.Content, "m/main.go:5:6") {
		t.Errorf("workspace_symbol = %q", res.Content)
	}
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "call_hierarchy", "path": "m/main.go", "line": 5, "character": 7})
	if res.IsError || !strings.Contains(res.Content, "incoming calls: 1") || !strings.Contains(res.Content, "main m/main.go:9:6") {
		t.Errorf("call_hierarchy = %q", res.Content)
	}

	// Fixing the file clears the diagnostic.
	res = e.call(t, e.builtin, "replace_text", map[string]any{"path": "m/main.go", "old_text": "undefinedThing", "new_text": "s"})
	t.Logf("replace_text: %s", res.Content)
	if !strings.Contains(res.Content, "LSP (gopls) on m/main.go: no problems") {
		t.Errorf("replace_text after the fix = %q", res.Content)
	}
	res = e.call(t, e.lsp, "lsp", map[string]any{"operation": "diagnostics", "path": "m/main.go"})
	if !strings.Contains(res.Content, "no problems") {
		t.Errorf("diagnostics = %q", res.Content)
	}
	workers := e.pool.Workers()
	if len(workers) != 1 || workers[0].State != lsp.StateReady || workers[0].RSSBytes == 0 {
		t.Errorf("workers = %+v", workers)
	}
	t.Logf("gopls worker RSS: %d MiB", workers[0].RSSBytes>>20)
}
