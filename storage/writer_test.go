package storage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// hold makes the writer busy with one op until release is closed, and
// returns once the writer has taken it: what is queued meanwhile forms
// the next batch.
func hold(t *testing.T, s *Store) (release chan struct{}, done chan error) {
	t.Helper()
	release, done, taken := make(chan struct{}), make(chan error, 1), make(chan struct{})
	go func() {
		done <- s.update(t.Context(), func(context.Context, bun.IDB) error {
			close(taken)
			<-release
			return nil
		})
	}()
	<-taken
	return release, done
}

// queued waits until n ops wait for the writer.
func queued(t *testing.T, s *Store, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.writer.ops) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d ops queued, want %d", len(s.writer.ops), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func insertKey(key string, fail bool) func(ctx context.Context, db bun.IDB) error {
	return func(ctx context.Context, db bun.IDB) error {
		if _, err := db.ExecContext(ctx, `INSERT INTO session_locks ("key", owner, expires_at) VALUES (?, 'o', ?)`, key, time.Now().Add(time.Hour)); err != nil {
			return err
		}
		if fail {
			return errors.New("op failed after its insert")
		}
		return nil
	}
}

func keyExists(t *testing.T, s *Store, key string) bool {
	t.Helper()
	n, err := s.db.NewSelect().Table("session_locks").Where(`"key" = ?`, key).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A batch of three ops, the middle one failing after a write of its own:
// the other two are committed, the failed one left nothing, and each
// caller hears its own outcome.
func TestWriterBatchWithAFailure(t *testing.T) {
	s := open(t, freshSQLite(t))
	release, held := hold(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, key := range []string{"a", "b", "c"} {
		queued(t, s, i)
		wg.Go(func() { errs[i] = s.update(t.Context(), insertKey(key, key == "b")) })
	}
	queued(t, s, 3)
	c0, _ := s.WriteStats()
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if errs[0] != nil || errs[2] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "op failed") {
		t.Fatalf("errors %v; want only b's", errs)
	}
	if !keyExists(t, s, "a") || keyExists(t, s, "b") || !keyExists(t, s, "c") {
		t.Fatalf("stored a=%v b=%v c=%v; want a and c", keyExists(t, s, "a"), keyExists(t, s, "b"), keyExists(t, s, "c"))
	}
	if c1, _ := s.WriteStats(); c1-c0 != 3 {
		t.Fatalf("%d commits, want 3: the held op's, then a and c alone", c1-c0)
	}
}

// Ops queued together commit together: one transaction for all.
func TestWriterGroupsWaitingOps(t *testing.T) {
	s := open(t, freshSQLite(t))
	release, held := hold(t, s)
	const n = 20
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Go(func() {
			if s.update(t.Context(), insertKey(string(rune('A'+i)), false)) != nil {
				failed.Add(1)
			}
		})
	}
	queued(t, s, n)
	c0, w0 := s.WriteStats()
	close(release)
	wg.Wait()
	<-held
	c1, w1 := s.WriteStats()
	// The held op commits alone, then the n waiting ones together.
	if failed.Load() != 0 || w1-w0 != n+1 || c1-c0 != 2 {
		t.Fatalf("%d failed, %d writes in %d commits; want %d in 2", failed.Load(), w1-w0, c1-c0, n+1)
	}
}

// An op whose caller gave up before the writer took it never runs; a
// panicking op is an error and the writer goes on.
func TestWriterAbandonedAndPanicking(t *testing.T) {
	s := open(t, freshSQLite(t))
	release, held := hold(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Bool
	errc := make(chan error, 1)
	go func() {
		errc <- s.update(ctx, func(context.Context, bun.IDB) error { ran.Store(true); return nil })
	}()
	queued(t, s, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned op: %v, want context.Canceled", err)
	}
	close(release)
	<-held
	err := s.update(t.Context(), func(context.Context, bun.IDB) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("panicking op: %v", err)
	}
	if err := s.update(t.Context(), insertKey("after", false)); err != nil || !keyExists(t, s, "after") {
		t.Fatalf("the writer after a panic: %v", err)
	}
	if ran.Load() {
		t.Fatal("an op abandoned before the writer took it ran")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.update(t.Context(), insertKey("closed", false)); !errors.Is(err, errClosed) {
		t.Fatalf("write after Close: %v", err)
	}
}

// Once the writer took an op, the op runs to its end whatever its caller
// does, and the caller hears its outcome: a caller that gives up meanwhile
// still waits for it and is told it was stored, never a cancellation that
// hides a committed write. The op's own context is not cancelled. A
// caller already gone is never queued.
func TestWriterTakenOpOutlivesItsCaller(t *testing.T) {
	s := open(t, freshSQLite(t))
	ctx, cancel := context.WithCancel(t.Context())
	taken, release := make(chan struct{}), make(chan struct{})
	var opCtxErr error
	errc := make(chan error, 1)
	go func() {
		errc <- s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			close(taken)
			<-release
			opCtxErr = ctx.Err()
			return insertKey("kept", false)(ctx, db)
		})
	}()
	<-taken
	cancel()
	select {
	case err := <-errc:
		t.Fatalf("the caller was answered (%v) while its op was running", err)
	default:
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatalf("a taken op whose caller gave up: %v; want its outcome, stored", err)
	}
	if opCtxErr != nil || !keyExists(t, s, "kept") {
		t.Fatalf("the op's context ended (%v) or its write is missing", opCtxErr)
	}
	ran := false
	if err := s.update(ctx, func(context.Context, bun.IDB) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("an op of a caller already gone: ran %v, %v", ran, err)
	}
}

// Close finishes the ops already queued: each is committed and its caller
// told so, before the database closes.
func TestWriterCloseFinishesQueuedOps(t *testing.T) {
	opts := freshSQLite(t)
	s, err := Open(t.Context(), opts)
	must(t, err)
	release, held := hold(t, s)
	errs := make([]error, 5)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = s.update(t.Context(), insertKey(string(rune('a'+i)), false)) })
	}
	queued(t, s, len(errs))
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	close(release)
	wg.Wait()
	must(t, <-held)
	must(t, <-closed)
	after := open(t, opts)
	for i, err := range errs {
		if key := string(rune('a' + i)); err != nil || !keyExists(t, after, key) {
			t.Errorf("op %s queued before Close: %v, stored %v", key, err, keyExists(t, after, key))
		}
	}
}

// A transaction holds at most maxBatch ops: a longer queue is committed
// in several, each op once.
func TestWriterBatchIsBounded(t *testing.T) {
	s := open(t, freshSQLite(t))
	release, held := hold(t, s)
	const n = maxBatch + 10
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Go(func() {
			if s.update(t.Context(), insertKey(strings.Repeat("k", 1+i%7)+string(rune(0x4e00+i)), false)) != nil {
				failed.Add(1)
			}
		})
	}
	queued(t, s, n)
	c0, w0 := s.WriteStats()
	close(release)
	wg.Wait()
	must(t, <-held)
	c1, w1 := s.WriteStats()
	// The held op alone, then maxBatch, then the rest.
	if failed.Load() != 0 || w1-w0 != n+1 || c1-c0 != 3 {
		t.Fatalf("%d failed, %d writes in %d commits; want %d in 3", failed.Load(), w1-w0, c1-c0, n+1)
	}
	if count, err := s.db.NewSelect().Table("session_locks").Count(t.Context()); err != nil || count != n {
		t.Fatalf("%d rows (%v); want %d", count, err, n)
	}
}
