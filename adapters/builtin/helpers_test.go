package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

const testUser = "alice"

// newTestSet returns a Set rooted in a temporary directory.
func newTestSet(t testing.TB, opts Options) *Set {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	s, err := New(&opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// workspaceDir returns (and creates) the test user's workspace directory.
func workspaceDir(t testing.TB, s *Set) string {
	t.Helper()
	ws, err := s.Workspace(testUser)
	if err != nil {
		t.Fatalf("Workspace: %v", err)
	}
	dir, err := ws.ensure()
	if err != nil {
		t.Fatalf("ensure: %v", err)
	}
	return dir
}

// writeTree creates files (path -> content) under dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// recorder collects Output deltas.
type recorder struct {
	mu     sync.Mutex
	deltas []string
	ch     chan string // deltas, if non-nil, as long as it has room
}

func (r *recorder) output(stream, delta string) {
	r.mu.Lock()
	r.deltas = append(r.deltas, stream+":"+delta)
	r.mu.Unlock()
	if r.ch != nil {
		select {
		case r.ch <- delta:
		default: // never block the command; all() has everything
		}
	}
}

func (r *recorder) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.deltas, "")
}

// findTool returns the tool called name (or alias) for the test user.
func findTool(t *testing.T, s *Set, name string) orchestrator.Tool {
	t.Helper()
	tools, err := s.Tools(context.Background(), testUser)
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	for _, tool := range tools {
		spec := tool.Spec()
		if spec.Name == name {
			return tool
		}
		for _, a := range spec.Aliases {
			if a == name {
				return tool
			}
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

// callTool calls tool name with args (marshalled unless a string or
// json.RawMessage) and returns its result; a Go error fails the test.
func callTool(t *testing.T, s *Set, name string, args any) *orchestrator.ToolResult {
	t.Helper()
	res, err := callToolCtx(context.Background(), t, s, name, args, nil)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", name, err)
	}
	return res
}

func callToolCtx(ctx context.Context, t *testing.T, s *Set, name string, args any, rec *recorder) (*orchestrator.ToolResult, error) {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	if rec == nil {
		rec = &recorder{}
	}
	inv := &orchestrator.ToolInvocation{UserID: testUser, CallID: "c1", Arguments: raw, Output: rec.output}
	return findTool(t, s, name).Call(ctx, inv)
}

// wantOK fails unless res is a success whose content has every want.
func wantOK(t *testing.T, res *orchestrator.ToolResult, want ...string) {
	t.Helper()
	if res == nil || res.IsError {
		t.Fatalf("want success, got error result: %+v", res)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("result lacks %q:\n%s", w, res.Content)
		}
	}
}

// wantErr fails unless res is an error result whose content has every want.
func wantErr(t *testing.T, res *orchestrator.ToolResult, want ...string) {
	t.Helper()
	if res == nil || !res.IsError {
		t.Fatalf("want error result, got %+v", res)
	}
	for _, w := range want {
		if !strings.Contains(res.Content, w) {
			t.Errorf("error lacks %q: %s", w, res.Content)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
