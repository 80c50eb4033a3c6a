package lsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

func newTestPool(t *testing.T, ps *pipeStarter, mod func(*Options)) *Pool {
	t.Helper()
	o := &Options{
		Servers: []ServerConfig{{ID: "fake", Command: []string{"fake"}, Extensions: []string{".txt"}}},
		Timeout: 5 * time.Second, ShutdownGrace: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		start:  ps.start,
	}
	if mod != nil {
		mod(o)
	}
	p := NewPool(o)
	t.Cleanup(func() {
		if err := p.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func key(root string) Key { return Key{User: "u1", Root: root, Server: "fake"} }

func TestHandshakeDefinitionAndDiagnostics(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, nil)
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws/a"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if name, _ := w.ServerInfo(); name != "fake" {
		t.Errorf("server name %q, want fake", name)
	}
	var locs []Location
	pos := TextDocumentPositionParams{TextDocument: TextDocumentIdentifier{URI: PathToURI("/ws/a/x.txt")}, Position: Position{Line: 3, Character: 7}}
	if err := w.Call(ctx, "textDocument/definition", pos, &locs); err != nil {
		t.Fatal(err)
	}
	if len(locs) != 1 || locs[0].Range.Start != pos.Position {
		t.Errorf("definition = %+v", locs)
	}

	// Diagnostics follow the document versions.
	m, err := w.Sync(ctx, "/ws/a/x.txt", "ok\n  héllo 😀 ERROR\n")
	if err != nil {
		t.Fatal(err)
	}
	diags, fresh := w.WaitDiagnostics(ctx, m, 10*time.Second)
	if !fresh || len(diags) != 1 || diags[0].Range.Start != (Position{Line: 1, Character: 11}) {
		t.Fatalf("diagnostics = %+v (fresh %v), want one at 1:11 (UTF-16)", diags, fresh)
	}
	m2, err := w.Sync(ctx, "/ws/a/x.txt", "fixed\n")
	if err != nil {
		t.Fatal(err)
	}
	if m2.Version != 2 {
		t.Errorf("second sync version %d, want 2", m2.Version)
	}
	if diags, fresh := w.WaitDiagnostics(ctx, m2, 10*time.Second); !fresh || len(diags) != 0 {
		t.Errorf("after the fix: %+v (fresh %v), want none", diags, fresh)
	}
	// A last request: the server has read everything sent before it.
	if err := w.Call(ctx, "textDocument/definition", pos, nil); err != nil {
		t.Fatal(err)
	}
	if w.OpenDocuments() != 1 {
		t.Errorf("open documents %d, want 1", w.OpenDocuments())
	}
	f := ps.last()
	f.mu.Lock()
	methods := slices.Clone(f.methods)
	f.mu.Unlock()
	want := []string{"initialize", "initialized", "textDocument/definition", "textDocument/didOpen", "textDocument/didChange", "textDocument/didSave", "textDocument/definition"}
	// The reply to workspace/configuration has no method; drop blanks.
	methods = slices.DeleteFunc(methods, func(s string) bool { return s == "" })
	if !slices.Equal(methods, want) {
		t.Errorf("server saw %q, want %q", methods, want)
	}
}

func TestSharedAcquireAndIdleShutdown(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, func(o *Options) { o.IdleTTL = 20 * time.Millisecond })
	ctx := context.Background()
	w1, r1, err := p.Acquire(ctx, key("/ws/a"))
	if err != nil {
		t.Fatal(err)
	}
	w2, r2, err := p.Acquire(ctx, key("/ws/a"))
	if err != nil {
		t.Fatal(err)
	}
	if w1 != w2 || ps.count() != 1 {
		t.Fatalf("two acquires of one key gave two workers (%d servers)", ps.count())
	}
	if got := p.Workers(); len(got) != 1 || got[0].Refs != 2 || got[0].State != StateReady {
		t.Errorf("Workers() = %+v", got)
	}
	r1()
	r1() // release is idempotent
	r2()
	f := ps.last()
	<-f.done // the idle timer stops it: shutdown, then exit
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.methods); n < 2 || f.methods[n-2] != "shutdown" || f.methods[n-1] != "exit" {
		t.Errorf("server saw %q, want shutdown and exit last", f.methods)
	}
}

func TestMaxWorkersEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, func(o *Options) { o.MaxWorkers = 2 })
	ctx := context.Background()
	for _, root := range []string{"/a", "/b"} {
		_, release, err := p.Acquire(ctx, key(root))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	first := ps.servers[0]
	_, rc, err := p.Acquire(ctx, key("/c"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc()
	<-first.done // /a was the least recently used
	var roots []string
	for _, w := range p.Workers() {
		roots = append(roots, w.Root)
	}
	slices.Sort(roots)
	if !slices.Equal(roots, []string{"/b", "/c"}) {
		t.Errorf("workers %q, want /b and /c", roots)
	}
	_, rb, err := p.Acquire(ctx, key("/b"))
	if err != nil {
		t.Fatal(err)
	}
	defer rb()
	if _, _, err := p.Acquire(ctx, key("/d")); !errors.Is(err, ErrBusy) {
		t.Errorf("acquire with every worker held: %v, want ErrBusy", err)
	}
}

func TestCancelSendsCancelRequest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{onHover: cancel} }}
	p := newTestPool(t, ps, nil)
	w, release, err := p.Acquire(context.Background(), key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	err = w.Call(ctx, "textDocument/hover", map[string]any{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("hover = %v, want context.Canceled", err)
	}
	// A later request is answered after the server read the cancel.
	if err := w.Call(context.Background(), "textDocument/definition", TextDocumentPositionParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := ps.last().cancels(); len(got) != 1 {
		t.Errorf("server got cancels %q, want one", got)
	}
}

func TestTimeoutSendsCancelRequest(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, func(o *Options) { o.Timeout = 100 * time.Millisecond })
	w, release, err := p.Acquire(context.Background(), key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := w.Call(context.Background(), "textDocument/hover", map[string]any{}, nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("slow hover = %v, want ErrTimeout", err)
	}
	if err := w.Call(context.Background(), "textDocument/definition", TextDocumentPositionParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := ps.last().cancels(); len(got) != 1 {
		t.Errorf("server got cancels %q, want one", got)
	}
}

func TestCrashRestartsOnNextUse(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{crashOn: "textDocument/references"} }}
	p := newTestPool(t, ps, nil)
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	err = w.Call(ctx, "textDocument/references", map[string]any{}, nil)
	if !errors.Is(err, ErrCrashed) {
		t.Fatalf("references on a crashing server = %v, want ErrCrashed", err)
	}
	release()
	<-w.watched
	if got := p.Workers(); len(got) != 1 || got[0].State != StateCrashed {
		t.Errorf("Workers() after the crash = %+v", got)
	}
	w2, release2, err := p.Acquire(ctx, key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer release2()
	if w2 == w || ps.count() != 2 {
		t.Fatalf("no restart: same worker %v, %d servers", w2 == w, ps.count())
	}
	if err := w2.Call(ctx, "textDocument/definition", TextDocumentPositionParams{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.Workers(); got[0].Restarts != 1 {
		t.Errorf("restarts = %d, want 1", got[0].Restarts)
	}
}

func TestUnknownServerAndClosedPool(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, nil)
	if _, _, err := p.Acquire(context.Background(), Key{Server: "nope"}); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("unknown server: %v", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Acquire(context.Background(), key("/x")); !errors.Is(err, ErrClosed) {
		t.Errorf("closed pool: %v", err)
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, nil)
	res, err := p.Probe(context.Background(), "fake")
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "fake" || !slices.Equal(res.Capabilities, []string{"definitionProvider", "hoverProvider"}) {
		t.Errorf("probe = %+v", res)
	}
	<-ps.last().done
}

func TestSyncOfUnchangedTextSendsNothing(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, nil)
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	m1, err := w.Sync(ctx, "/ws/a.txt", "ERROR\n")
	if err != nil {
		t.Fatal(err)
	}
	if d, fresh := w.WaitDiagnostics(ctx, m1, 10*time.Second); !fresh || len(d) != 1 {
		t.Fatalf("first sync: %+v %v", d, fresh)
	}
	m2, err := w.Sync(ctx, "/ws/a.txt", "ERROR\n")
	if err != nil || m2.Version != 1 {
		t.Fatalf("second sync of the same text: %+v %v, want version 1", m2, err)
	}
	// Answered from what the server said about version 1: no wait.
	if d, fresh := w.WaitDiagnostics(ctx, m2, time.Hour); !fresh || len(d) != 1 {
		t.Fatalf("second wait: %+v %v", d, fresh)
	}
	if err := w.Call(ctx, "textDocument/definition", TextDocumentPositionParams{}, nil); err != nil {
		t.Fatal(err)
	}
	f := ps.last()
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.Contains(f.methods, "textDocument/didChange") {
		t.Errorf("server saw %q: a didChange for unchanged text", f.methods)
	}
}

func TestFailedStartIsRemembered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		retryAfter time.Duration
		starts     int
	}{{time.Hour, 1}, {time.Nanosecond, 2}} {
		ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{hostile: "garbage\r\n\r\n"} }}
		p := newTestPool(t, ps, func(o *Options) { o.RetryAfter = tt.retryAfter })
		_, _, err1 := p.Acquire(context.Background(), key("/ws"))
		_, _, err2 := p.Acquire(context.Background(), key("/ws"))
		if err1 == nil || err2 == nil {
			t.Fatalf("acquires of a broken server: %v, %v", err1, err2)
		}
		if ps.count() != tt.starts {
			t.Errorf("RetryAfter %s: %d starts, want %d", tt.retryAfter, ps.count(), tt.starts)
		}
		if w := p.Workers(); len(w) != 1 || w[0].State != StateCrashed || w[0].LastError == "" {
			t.Errorf("Workers() = %+v, want the failure listed", w)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{} }}
	p := newTestPool(t, ps, func(o *Options) { o.MaxWorkers = 3 })
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			w, release, err := p.Acquire(ctx, key(fmt.Sprintf("/ws/%d", i%3)))
			if err != nil {
				errs <- err
				return
			}
			defer release()
			abs := fmt.Sprintf("/ws/%d/f%d.txt", i%3, i%5)
			m, err := w.Sync(ctx, abs, fmt.Sprintf("line %d\nERROR\n", i))
			if err != nil {
				errs <- err
				return
			}
			if d, fresh := w.WaitDiagnostics(ctx, m, time.Minute); !fresh || len(d) != 1 {
				errs <- fmt.Errorf("diagnostics %+v fresh %v", d, fresh)
			}
			if err := w.Call(ctx, "textDocument/definition", TextDocumentPositionParams{}, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ps.count() != 3 {
		t.Errorf("%d servers started for 3 keys", ps.count())
	}
}
