package lsp

import (
	"context"
	"testing"
	"time"
)

// The pool's lookups: which configured server handles a file (the first
// in configuration order whose extension ends its name, case aside), a
// server by id, and the list of servers, which a caller cannot change
// through the copy it gets.
func TestPoolServerLookups(t *testing.T) {
	t.Parallel()
	p := NewPool(&Options{Servers: []ServerConfig{
		{ID: "gopls", Command: []string{"gopls"}, Extensions: []string{".go"}},
		{ID: "ts", Command: []string{"ts"}, Extensions: []string{".ts", ".TSX"}},
		{ID: "bash-a", Command: []string{"a"}, Extensions: []string{".sh"}},
		{ID: "bash-b", Command: []string{"b"}, Extensions: []string{".sh", ".bash"}},
	}})
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	for _, tc := range []struct {
		path, want string // "" = no server
	}{
		{"/ws/cmd/main.go", "gopls"},
		{"/ws/MAIN.GO", "gopls"},
		{"/ws/web/app.tsx", "ts"},
		{"/ws/web/types.d.ts", "ts"},
		{"/ws/run.sh", "bash-a"}, // both handle .sh: the first configured
		{"/ws/run.bash", "bash-b"},
		{"/ws/notes.txt", ""},
		{"/ws/go", ""}, // no extension: a name that is all of it
		{"/ws/main.go.orig", ""},
		{"", ""},
	} {
		s, ok := p.ServerFor(tc.path)
		if ok != (tc.want != "") || s.ID != tc.want {
			t.Errorf("ServerFor(%q) = %q %v, want %q", tc.path, s.ID, ok, tc.want)
		}
	}

	if s, ok := p.Server("ts"); !ok || s.Command[0] != "ts" {
		t.Errorf("Server(ts) = %+v %v", s, ok)
	}
	if _, ok := p.Server("pyright"); ok {
		t.Error("Server found an id that is not configured")
	}

	list := p.Servers()
	if len(list) != 4 || list[0].ID != "gopls" || list[3].ID != "bash-b" {
		t.Fatalf("Servers = %+v", list)
	}
	list[0].ID = "changed"
	if _, ok := p.Server("gopls"); !ok || p.Servers()[0].ID != "gopls" {
		t.Error("changing the list Servers returned changed the pool")
	}

	empty := NewPool(nil)
	t.Cleanup(func() { _ = empty.Close(context.Background()) })
	if s, ok := empty.ServerFor("/ws/main.go"); ok || len(empty.Servers()) != 0 {
		t.Errorf("a pool without servers: ServerFor = %+v, Servers = %v", s, empty.Servers())
	}
}

// Diagnostics answers what the server last published for a document,
// without waiting: nothing (and false) before it published, the last set
// after, and each document's own.
func TestWorkerDiagnosticsWithoutWaiting(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, nil)
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws/d"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if d, ok := w.Diagnostics("/ws/d/a.txt"); ok || len(d) != 0 {
		t.Fatalf("before any document: %+v %v", d, ok)
	}
	m, err := w.Sync(ctx, "/ws/d/a.txt", "one ERROR\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, fresh := w.WaitDiagnostics(ctx, m, 10*time.Second); !fresh {
		t.Fatal("no diagnostics for a.txt")
	}
	d, ok := w.Diagnostics("/ws/d/a.txt")
	if !ok || len(d) != 1 || d[0].Range.Start != (Position{Line: 0, Character: 4}) {
		t.Errorf("a.txt: %+v %v, want one at 0:4", d, ok)
	}
	// The copy returned is the caller's.
	d[0].Message = "changed"
	if again, _ := w.Diagnostics("/ws/d/a.txt"); again[0].Message == "changed" {
		t.Error("changing the diagnostics returned changed the worker's")
	}
	if d, ok := w.Diagnostics("/ws/d/b.txt"); ok || len(d) != 0 {
		t.Errorf("b.txt, never opened: %+v %v", d, ok)
	}
}
