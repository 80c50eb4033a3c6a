package builtin

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeDiagnostics records the hook's calls.
type fakeDiagnostics struct {
	mu    sync.Mutex
	calls []string // user:base name
}

func (f *fakeDiagnostics) After(_ context.Context, userID, abs string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, userID+":"+filepath.Base(abs))
	if strings.HasSuffix(abs, ".go") {
		return "LSP (fake): 1 error"
	}
	return ""
}

func TestDiagnosticsHook(t *testing.T) {
	t.Parallel()
	d := &fakeDiagnostics{}
	s := newTestSet(t, Options{Diagnostics: d})
	res := callTool(t, s, "write_file", map[string]any{"path": "a.go", "content": "package a\nx\n"})
	if res.IsError || !strings.HasSuffix(res.Content, "\nLSP (fake): 1 error") {
		t.Errorf("write_file = %+v, want the summary appended", res)
	}
	res = callTool(t, s, "replace_text", map[string]any{"path": "a.go", "old_text": "x", "new_text": "y"})
	if !strings.HasSuffix(res.Content, "\nLSP (fake): 1 error") {
		t.Errorf("replace_text = %+v", res)
	}
	res = callTool(t, s, "edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"action": "insert_after", "line": 1, "content": "// c"}}})
	if res.IsError || !strings.HasSuffix(res.Content, "\nLSP (fake): 1 error") {
		t.Errorf("edit_file = %+v", res)
	}
	res = callTool(t, s, "write_file", map[string]any{"path": "notes.txt", "content": "hi"})
	if strings.Contains(res.Content, "LSP") || strings.Contains(res.Content, "\n") {
		t.Errorf("write_file of a file no server handles = %q, want no summary", res.Content)
	}
	// A failed write asks nothing.
	callTool(t, s, "replace_text", map[string]any{"path": "a.go", "old_text": "absent", "new_text": "y"})
	d.mu.Lock()
	defer d.mu.Unlock()
	want := []string{testUser + ":a.go", testUser + ":a.go", testUser + ":a.go", testUser + ":notes.txt"}
	if strings.Join(d.calls, ",") != strings.Join(want, ",") {
		t.Errorf("hook calls %q, want %q", d.calls, want)
	}
}
