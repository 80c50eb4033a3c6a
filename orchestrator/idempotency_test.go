package orchestrator_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// A retried submit with the same key gets the first submit's run, on
// any process sharing the store, and no second run starts; the key is
// its user's alone; a key reused for another question is a conflict; a
// bad key is refused.
func TestIdempotentStart(t *testing.T) {
	store := orchestratortest.NewMemStore()
	p1 := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "first"}, {Content: "bob's"}}})
	p2 := newHarness(t, harnessOpts{store: store})
	req := orchestrator.RunRequest{UserID: "alice", Question: "q", IdempotencyKey: "submit-1", Caller: orchestrator.CallerAgent}
	first := mustStart(t, p1.o, req)
	if f := final(t, collect(t, p1.o, first.ID, 0)); f.Answer != "first" {
		t.Fatalf("first run: %+v", f)
	}
	for name, o := range map[string]*orchestrator.Orchestrator{"same process": p1.o, "another process": p2.o} {
		again, err := o.Start(t.Context(), req)
		if err != nil || again.ID != first.ID || again.SessionID != first.SessionID {
			t.Fatalf("retry on the %s = %+v, %v; want run %s", name, again, err, first.ID)
		}
	}
	if runs, _ := store.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "alice"}); len(runs) != 1 {
		t.Fatalf("alice has %d runs after the retries; want 1", len(runs))
	}

	// bob's same key is bob's own.
	bobs := mustStart(t, p1.o, orchestrator.RunRequest{UserID: "bob", Question: "q", IdempotencyKey: "submit-1", Caller: orchestrator.CallerAgent})
	if bobs.ID == first.ID {
		t.Fatal("bob's key named alice's run")
	}

	_, err := p1.o.Start(t.Context(), orchestrator.RunRequest{UserID: "alice", Question: "another", IdempotencyKey: "submit-1"})
	var keyed *orchestrator.KeyedError
	if !errors.Is(err, orchestrator.ErrConflict) || !errors.As(err, &keyed) {
		t.Fatalf("the key reused for another question: %v; want a keyed conflict", err)
	}
	if key, _ := keyed.MessageKey(); key != "idempotency_key_reused" || !strings.Contains(err.Error(), first.ID) {
		t.Fatalf("reuse refused as %q: %v", key, err)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "has space", "tab\t", "é"} {
		if _, err := p1.o.Start(t.Context(), orchestrator.RunRequest{UserID: "alice", Question: "q", IdempotencyKey: bad}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("key %q: %v; want ErrInvalidArgument", bad, err)
		}
	}
}

// Submits racing with one key start one run: every one gets it.
func TestIdempotentStartRace(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "once", Wait: gate}}})
	req := orchestrator.RunRequest{UserID: "alice", Question: "q", IdempotencyKey: "race", Caller: orchestrator.CallerAgent}
	const n = 8
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := h.o.Start(t.Context(), req)
			if err == nil {
				ids[i] = r.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	close(gate)
	var id string
	for i := range n {
		switch {
		case errs[i] == nil && (id == "" || ids[i] == id):
			id = ids[i]
		case errors.Is(errs[i], orchestrator.ErrConflict):
			// still starting when asked: told to retry
			if _, ok := orchestrator.RetryAfter(errs[i]); !ok {
				t.Errorf("submit %d: a conflict with no retry hint: %v", i, errs[i])
			}
		default:
			t.Fatalf("submit %d = %s, %v; others got %s", i, ids[i], errs[i], id)
		}
	}
	if runs, _ := h.store.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "alice"}); len(runs) != 1 {
		t.Fatalf("%d runs from %d racing submits with one key; want 1", len(runs), n)
	}
	if r, err := h.o.Start(t.Context(), req); err != nil || r.ID != id {
		t.Fatalf("a retry after the race = %+v, %v; want %s", r, err, id)
	}
}

// A key taken by a submit whose server died before it stored its run (the
// key names a run that never was, and a dead instance) does not answer
// "still starting" until it expires: the retry frees it and starts the
// run. A key of a living instance whose run is not stored yet still asks
// the retry to wait.
func TestIdempotentStartAfterTheStarterDied(t *testing.T) {
	store := orchestratortest.NewMemStore()
	ctx := t.Context()
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "started at last"}}})
	dead := deadProcessOwner(t)
	if err := store.AcquireLock(ctx, "idem:alice:k1", "idem:run_never@"+dead, time.Hour); err != nil {
		t.Fatal(err)
	}
	req := orchestrator.RunRequest{UserID: "alice", Question: "q", IdempotencyKey: "k1", Caller: orchestrator.CallerAgent}
	r, err := h.o.Start(ctx, req)
	if err != nil {
		t.Fatalf("retry after the starter died: %v; want the run started", err)
	}
	if f := final(t, collect(t, h.o, r.ID, 0)); f.Answer != "started at last" {
		t.Fatalf("run = %+v", f)
	}
	if again, err := h.o.Start(ctx, req); err != nil || again.ID != r.ID {
		t.Fatalf("the next retry = %+v, %v; want run %s", again, err, r.ID)
	}

	alive := newHarness(t, harnessOpts{store: store})
	if err := alive.o.HoldLease(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.AcquireLock(ctx, "idem:alice:k2", "idem:run_starting@"+alive.o.InstanceID(), time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err = h.o.Start(ctx, orchestrator.RunRequest{UserID: "alice", Question: "q", IdempotencyKey: "k2", Caller: orchestrator.CallerAgent})
	if _, ok := orchestrator.RetryAfter(err); !errors.Is(err, orchestrator.ErrConflict) || !ok {
		t.Fatalf("a key a living server is starting: %v; want a conflict to retry", err)
	}
}
