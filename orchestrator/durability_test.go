package orchestrator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// An event is visible only once it is stored: while the store holds the
// run's first batch, the run reports no event, although it has emitted
// several and is already calling the model.
func TestEventsAreVisibleOnlyOnceStored(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	store := &flakyStore{Store: orchestratortest.NewMemStore(), down: func(string) bool { return false }, appendWait: gate}
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "done", Started: started}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started // progress and llm_request are emitted
	r, err := h.o.GetRun(t.Context(), "", run.ID)
	if err != nil || r.LastSeq != 0 {
		t.Fatalf("while nothing is stored the run reports last_seq %d (%v); want 0", r.LastSeq, err)
	}
	close(gate)
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	stored, err := store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil || len(stored) != len(evs) {
		t.Fatalf("store holds %d events, the client saw %d (%v)", len(stored), len(evs), err)
	}
}

// Events that cannot be stored within the retry budget end the run failed
// with the store's error; what the client saw and what the store says
// agree, and the final event follows the last stored one.
func TestUnstorableEventsFailTheRun(t *testing.T) {
	store := &flakyStore{Store: orchestratortest.NewMemStore()}
	store.down = func(op string) bool { return op == "events" }
	finalOnly := &finalPasses{flakyStore: store}
	h := newHarness(t, harnessOpts{store: finalOnly, opts: orchestrator.Options{StoreRetry: 100 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "never seen", Wait: make(chan struct{})}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "store") {
		t.Fatalf("final = %+v; want failed with the store's error", f)
	}
	r, err := h.store.GetRun(t.Context(), run.ID)
	if err != nil || r.State != orchestrator.RunFailed || r.LastSeq != evs[len(evs)-1].Seq {
		t.Fatalf("stored run = %+v, %v; the client was told failed at seq %d", r, err, evs[len(evs)-1].Seq)
	}
	// The session is free again.
	if _, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", SessionID: run.SessionID, Question: "again"}); err != nil {
		t.Fatalf("next run: %v", err)
	}
}

// finalPasses lets a batch through when it holds only the final event.
type finalPasses struct{ *flakyStore }

func (f *finalPasses) AppendEvents(ctx context.Context, evs []orchestrator.Event) error {
	if len(evs) == 1 && evs[0].Type == orchestrator.EventFinal {
		return f.Store.AppendEvents(ctx, evs)
	}
	return f.flakyStore.AppendEvents(ctx, evs)
}

// A history that cannot be stored fails the run: a run whose question or
// rounds are missing from the session is never reported finished.
func TestUnstorableHistoryFailsTheRun(t *testing.T) {
	store := &flakyStore{Store: orchestratortest.NewMemStore(), down: func(op string) bool { return op == "messages" }}
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{StoreRetry: 100 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "an answer nobody may see as finished"}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "save history") {
		t.Fatalf("final = %+v", f)
	}
	if r, _ := store.GetRun(t.Context(), run.ID); r.State != orchestrator.RunFailed {
		t.Fatalf("stored state %s, client told %s", r.State, f.State)
	}
	if errs := ofType(evs, orchestrator.EventError); len(errs) != 1 || !strings.Contains(string(errs[0].Data), `"store"`) {
		t.Fatalf("error events = %v", errs)
	}
}
