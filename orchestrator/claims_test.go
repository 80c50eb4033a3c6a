package orchestrator_test

import (
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// With OneProcess, a person's short blocking run on a new session is one
// write, as an agent's is: its slot is held in the process until the run
// ends, and freed before its final event, so the person's next run is one
// write again. Without it (replicas share the store), the slot is stored
// with the run's start: two writes.
func TestPersonsShortRunIsOneWrite(t *testing.T) {
	for _, one := range []bool{true, false} {
		want := map[string]int{"CreateRunWith": 1, "EndRun": 1}
		if one {
			want = map[string]int{"CreateRunWith, ended": 1}
		}
		store := &countingStore{Store: orchestratortest.NewMemStore(), writes: map[string]int{}}
		h := newHarness(t, harnessOpts{store: store,
			opts:  orchestrator.Options{OneProcess: one, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
			turns: []orchestratortest.Turn{{Content: "first"}, {Content: "second"}}})
		for _, answer := range []string{"first", "second"} {
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
			evs := collect(t, h.o, run.ID, 0)
			assertDense(t, evs, 1)
			if f := final(t, evs); f.State != orchestrator.RunFinished || f.Answer != answer {
				t.Fatalf("OneProcess %v: final = %+v; want %q", one, f, answer)
			}
			store.mu.Lock()
			got := maps.Clone(store.writes)
			clear(store.writes)
			store.mu.Unlock()
			if !maps.Equal(got, want) {
				t.Errorf("OneProcess %v, run %q: writes = %v; want %v", one, answer, got, want)
			}
			msgs, err := store.ListMessages(t.Context(), run.SessionID, 0)
			if err != nil || len(msgs) != 2 || msgs[0].Content != "q" || msgs[1].Content != answer {
				t.Fatalf("history = %+v, %v; want the question and the answer", msgs, err)
			}
			if held, err := store.LockHeld(t.Context(), "user:u#0"); err != nil || held {
				t.Fatalf("the person's slot is held in the store after the run (%v, %v)", held, err)
			}
		}
	}
}

// A slot claimed in the process is met by every other run of its person,
// whichever way that run takes its slot: on a new session (blocking, or
// streaming, whose start stores the slot at once) or on a known one
// (acquireSlot). None of them stores anything. Once the run's start is
// stored, the store's row holds the slot; once the run ends, the slot is
// free.
func TestClaimedSlotIsMet(t *testing.T) {
	ctx := t.Context()
	store := orchestratortest.NewMemStore()
	// The model's second turn is held until gate closes: until then the
	// run has not stored its start, and only the claim holds the slot.
	gate, started, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := newHarness(t, harnessOpts{store: store,
		opts:     orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
		toolsets: []orchestrator.Toolset{blockingTool("step", started, release)},
		turns: []orchestratortest.Turn{
			{Content: "setup"},
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("step", `{}`)}, Wait: gate},
			{Content: "held"},
			{Content: "after"},
		}})
	setup := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
	final(t, collect(t, h.o, setup.ID, 0))

	first := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking, ToolNames: []string{"step"}})
	if _, err := store.GetRun(ctx, first.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("the run's start is stored (%v): its slot was not held in the process alone", err)
	}
	others := map[string]orchestrator.RunRequest{
		"a new session":              {UserID: "u", Question: "again", Delivery: orchestrator.DeliverBlocking},
		"a new session, streaming":   {UserID: "u", Question: "again"},
		"a known session":            {UserID: "u", Question: "again", SessionID: setup.SessionID, Delivery: orchestrator.DeliverBlocking},
		"a known session, streaming": {UserID: "u", Question: "again", SessionID: setup.SessionID},
	}
	tryOthers := func(when string) {
		t.Helper()
		for name, req := range others {
			if _, err := h.o.Start(ctx, req); !errors.Is(err, orchestrator.ErrBusy) {
				t.Errorf("%s, %s: %v; want ErrBusy", when, name, err)
			}
		}
	}
	tryOthers("while the slot is claimed")
	runs, err := store.ListRuns(ctx, orchestrator.RunFilter{UserID: "u", States: []orchestrator.RunState{orchestrator.RunRunning}})
	if err != nil || len(runs) != 0 {
		t.Fatalf("running runs of u in the store = %v, %v; want none", runs, err)
	}

	// The tool changes things: the run's start, with its slot, is stored
	// before it runs. From then on the store holds the slot.
	close(gate)
	<-started
	if r, err := store.GetRun(ctx, first.ID); err != nil || r.State != orchestrator.RunRunning {
		t.Fatalf("stored run before its tool = %+v, %v", r, err)
	}
	if held, err := store.LockHeld(ctx, "user:u#0"); err != nil || !held {
		t.Fatalf("the slot is not in the store once the start is (%v, %v)", held, err)
	}
	tryOthers("once the start is stored")
	close(release)
	if f := final(t, collect(t, h.o, first.ID, 0)); f.Answer != "held" {
		t.Fatalf("final = %+v", f)
	}

	next := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", SessionID: setup.SessionID, Delivery: orchestrator.DeliverBlocking})
	if f := final(t, collect(t, h.o, next.ID, 0)); f.Answer != "after" {
		t.Fatalf("the person's run after the slot was freed: final = %+v", f)
	}
}

// A slot stored by a run of a process that died (expired) or held by a
// waiting run is not claimed: the run takes its slot from the store, as
// without OneProcess, taking the expired one over and meeting the held
// one.
func TestClaimYieldsToStoredSlot(t *testing.T) {
	ctx := t.Context()
	store := &countingStore{Store: orchestratortest.NewMemStore(), writes: map[string]int{}}
	h := newHarness(t, harnessOpts{store: store,
		opts:  orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
		turns: []orchestratortest.Turn{{Content: "ok"}}})
	if err := store.Store.AcquireLock(ctx, "user:u#0", "run_dead", time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	store.mu.Lock()
	got := maps.Clone(store.writes)
	store.mu.Unlock()
	if want := map[string]int{"CreateRunWith": 2, "AcquireLock user:u#0": 1, "EndRun": 1}; !maps.Equal(got, want) {
		t.Errorf("writes = %v; want %v (the folded slot refused, then taken over)", got, want)
	}

	if err := store.Store.AcquireLock(ctx, "user:v#0", "run_waiting", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := h.o.Start(ctx, orchestrator.RunRequest{UserID: "v", Question: "q", Delivery: orchestrator.DeliverBlocking}); !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("a run of a person whose slot is held in the store: %v; want ErrBusy", err)
	}
}

// Many runs of one person started at once, each way a slot is taken,
// admit one: the claims and the store's rows never let two hold the slot.
func TestClaimedSlotUnderContention(t *testing.T) {
	ctx := t.Context()
	store := orchestratortest.NewMemStore()
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{store: store,
		opts:  orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
		turns: []orchestratortest.Turn{{Content: "setup"}, {Content: "setup"}, {Content: "setup"}, {Content: "setup"}, {Content: "the one", Wait: gate}}})
	var sessions []string
	for range 4 {
		r := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
		final(t, collect(t, h.o, r.ID, 0))
		sessions = append(sessions, r.SessionID)
	}
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		started []*orchestrator.Run
	)
	for i := range n {
		req := orchestrator.RunRequest{UserID: "u", Question: "q"}
		if i%2 == 0 {
			req.Delivery = orchestrator.DeliverBlocking
		}
		if i%4 >= 2 {
			req.SessionID = sessions[i/4]
		}
		wg.Go(func() {
			r, err := h.o.Start(ctx, req)
			switch {
			case err == nil:
				mu.Lock()
				started = append(started, r)
				mu.Unlock()
			case !errors.Is(err, orchestrator.ErrBusy):
				t.Errorf("start %d: %v; want ErrBusy or a run", i, err)
			}
		})
	}
	wg.Wait()
	if len(started) != 1 {
		t.Fatalf("%d runs of one person started at once with one slot; want 1", len(started))
	}
	close(gate)
	if f := final(t, collect(t, h.o, started[0].ID, 0)); f.Answer != "the one" {
		t.Fatalf("final = %+v", f)
	}
}
