package orchestrator_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// blindLocks answers that no lock is held, as a store shared with another
// process that took one since would.
type blindLocks struct{ orchestrator.Store }

func (blindLocks) LockHeld(context.Context, string) (bool, error) { return false, nil }

// A run whose deferred start the store refuses at the log's first write
// (here: its person's slot, stored meanwhile by another process on the
// same database) ends failed, and is stored so: its question, its final
// event as the first of its log, none of its locks. Its follower is told
// how it ended, not that it does not exist.
func TestUnstorableStartFailsTheRun(t *testing.T) {
	ctx := t.Context()
	store := blindLocks{orchestratortest.NewMemStore()}
	if err := store.AcquireLock(ctx, "user:u#0", "other-process-run", time.Hour); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Millisecond)}},
		turns: []orchestratortest.Turn{{Content: "late", Wait: gate}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
	defer close(gate)
	evs := collect(t, h.o, run.ID, 0)
	f := final(t, evs)
	if len(evs) != 1 || evs[0].Seq != 1 || f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "store") {
		t.Fatalf("events = %+v, final %+v; want the final event alone, failed with the store's error", evs, f)
	}
	r, err := store.GetRun(ctx, run.ID)
	if err != nil || r.State != orchestrator.RunFailed || r.LastSeq != 1 || r.Error != f.Error {
		t.Fatalf("stored run = %+v, %v; want it failed as its follower was told", r, err)
	}
	if msgs, err := store.ListMessages(ctx, run.SessionID, 0); err != nil || len(msgs) == 0 || msgs[0].Content != "q" {
		t.Fatalf("history = %+v, %v; want the question first", msgs, err)
	}
	if err := store.AcquireLock(ctx, "session:"+run.SessionID, "another", time.Minute); err != nil {
		t.Fatalf("the run's session lock is held after it ended: %v", err)
	}
	if err := store.AcquireLock(ctx, "user:u#0", "third", time.Minute); err == nil {
		t.Fatal("the other process's slot was freed by this run's end")
	}
}

// lostAnswers stores a run's first write with events, then answers as if
// the connection had dropped: the write's outcome is unknown to the run.
type lostAnswers struct{ orchestrator.Store }

func (s lostAnswers) CreateRunWith(ctx context.Context, sess *orchestrator.Session, r *orchestrator.Run, tail orchestrator.RunTail, locks ...orchestrator.NewLock) error {
	if len(tail.Events) == 0 || r.State.Terminal() {
		// A start without events, or a run stored whole as it ended.
		return s.Store.CreateRunWith(ctx, sess, r, tail, locks...)
	}
	_ = s.Store.CreateRunWith(ctx, sess, r, tail, locks...)
	return errors.New("connection lost")
}

// A deferred start whose write was stored although the run never heard
// so (every attempt's answer was lost) is ended as a stored run: failed,
// its final event after the events stored with its start, its locks
// freed; the follower and the store agree.
func TestStartStoredUnknowinglyIsEnded(t *testing.T) {
	ctx := t.Context()
	store := lostAnswers{orchestratortest.NewMemStore()}
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{store: store,
		opts:  orchestrator.Options{StoreRetry: 20 * time.Millisecond, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Millisecond)}},
		turns: []orchestratortest.Turn{{Content: "late", Wait: gate}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking, Caller: orchestrator.CallerAgent})
	defer close(gate)
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "connection lost") {
		t.Fatalf("final = %+v; want failed with the store's error", f)
	}
	r, err := store.GetRun(ctx, run.ID)
	if err != nil || r.State != orchestrator.RunFailed || r.LastSeq != evs[len(evs)-1].Seq {
		t.Fatalf("stored run = %+v, %v; want it failed at the follower's last seq %d", r, err, evs[len(evs)-1].Seq)
	}
	if err := store.AcquireLock(ctx, "session:"+run.SessionID, "another", time.Minute); err != nil {
		t.Fatalf("the run's session lock is held after it ended: %v", err)
	}
}
