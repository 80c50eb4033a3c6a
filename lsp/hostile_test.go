package lsp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Servers that misbehave cost an error, within bounds, never the gateway.

func TestSlowStartIsBounded(t *testing.T) {
	t.Parallel()
	// The initialize result never completes.
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{hostile: "Content-Length: 50\r\n\r\n{"} }}
	p := newTestPool(t, ps, func(o *Options) { o.Timeout = 100 * time.Millisecond })
	t0 := time.Now()
	_, _, err := p.Acquire(context.Background(), key("/ws"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("acquire of a server that never answers = %v, want ErrTimeout", err)
	}
	t.Logf("gave up after %s", time.Since(t0))
	<-ps.last().done
}

func TestHostileOutput(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, out, want string }{
		{"huge header", "X-Junk: " + strings.Repeat("a", 5000) + "\r\n\r\n", "header line over"},
		{"endless headers", strings.Repeat("X: y\r\n", 100), "header lines"},
		{"bad content length", "Content-Length: ten\r\n\r\n{}", "Content-Length"},
		{"negative content length", "Content-Length: -5\r\n\r\n{}", "Content-Length"},
		{"content length over the limit", "Content-Length: 99999999999\r\n\r\n{}", "over the"},
		{"garbage json", "Content-Length: 9\r\n\r\n{garbage}", "body"},
		{"no content length", "Content-Type: x\r\n\r\n{}", "no Content-Length"},
		{"bare newlines", "Content-Length: 2\n\n{}", "not ended by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{hostile: tt.out} }}
			p := newTestPool(t, ps, func(o *Options) { o.MaxMessageBytes = 1 << 20 })
			_, _, err := p.Acquire(context.Background(), key("/ws"))
			if err == nil {
				t.Fatal("acquire succeeded against a hostile server")
			}
			if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrCrashed saying %q", err, tt.want)
			}
			t.Logf("error: %v", err)
			<-ps.last().done
		})
	}
}

// A server that stops reading its input blocks jsonrpc2's writes, which
// ignore ctx: a call is still bounded by the pool's timeout, and the worker
// counts as crashed.
func TestServerThatStopsReadingIsBounded(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{stallAfter: "textDocument/didOpen"} }}
	p := newTestPool(t, ps, func(o *Options) { o.Timeout = 100 * time.Millisecond })
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := w.Sync(ctx, "/ws/a.txt", "x"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Call(ctx, "textDocument/definition", TextDocumentPositionParams{}, nil) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "did not read") {
			t.Errorf("call to a server that stopped reading = %v, want ErrCrashed saying why", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call to a server that stopped reading still blocked after 10s (timeout 100ms)")
	}
	<-ps.last().done
}

// Shutdown is bounded by the grace steps even when the server stopped
// reading, so the shutdown request cannot be written.
func TestShutdownOfServerThatStopsReadingIsBounded(t *testing.T) {
	t.Parallel()
	ps := &pipeStarter{mk: func() *fakeServer { return &fakeServer{stallAfter: "textDocument/didOpen"} }}
	p := newTestPool(t, ps, func(o *Options) { o.Timeout, o.ShutdownGrace = time.Hour, 100*time.Millisecond })
	ctx := context.Background()
	w, release, err := p.Acquire(ctx, key("/ws"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sync(ctx, "/ws/a.txt", "x"); err != nil {
		t.Fatal(err)
	}
	release()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatalf("Close with a server that stopped reading: %v", err)
	}
	<-ps.last().done
}
