package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
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

// finalPasses lets a batch through when it holds only the final event,
// alone or as the tail of a run's end.
type finalPasses struct{ *flakyStore }

func (f *finalPasses) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	if len(tail.Messages) == 0 && len(tail.Events) == 1 && tail.Events[0].Type == orchestrator.EventFinal {
		return f.Store.EndRun(ctx, r, at, keys, tail)
	}
	return f.flakyStore.EndRun(ctx, r, at, keys, tail)
}

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
	assertDense(t, evs, 1)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "store") {
		t.Fatalf("final = %+v", f)
	}
	if r, _ := store.GetRun(t.Context(), run.ID); r.State != orchestrator.RunFailed || r.LastSeq != evs[len(evs)-1].Seq {
		t.Fatalf("stored run %s at seq %d, client told %s at seq %d", r.State, r.LastSeq, f.State, evs[len(evs)-1].Seq)
	}
	if stored, err := store.ListEvents(t.Context(), run.ID, 0, 0); err != nil || len(stored) != len(evs) {
		t.Fatalf("store holds %d events, the client saw %d (%v)", len(stored), len(evs), err)
	}
}

// A run with a tool round whose round cannot be stored fails: the round
// is stored with the events that follow it or with the run's end
// (runLog.keep), and whichever of them it rode in, the run ends failed
// with the store's error, never finished, with what the client saw
// stored and the round and answer missing from the session alike.
func TestUnstorableRoundFailsTheRun(t *testing.T) {
	store := &flakyStore{Store: orchestratortest.NewMemStore(), down: func(op string) bool { return op == "messages" }}
	released := make(chan struct{})
	close(released)
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{StoreRetry: 100 * time.Millisecond},
		toolsets: []orchestrator.Toolset{blockingTool("step", make(chan struct{}), released)},
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("step", `{}`)}},
			{Content: "an answer nobody may see as finished"},
		}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"step"}})
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "store") || !strings.Contains(f.Error, errStoreDown.Error()) {
		t.Fatalf("final = %+v; want failed with the store's error", f)
	}
	if r, _ := store.GetRun(t.Context(), run.ID); r.State != orchestrator.RunFailed || r.LastSeq != evs[len(evs)-1].Seq {
		t.Fatalf("stored run %s at seq %d, client told %s at seq %d", r.State, r.LastSeq, f.State, evs[len(evs)-1].Seq)
	}
	if stored, err := store.ListEvents(t.Context(), run.ID, 0, 0); err != nil || len(stored) != len(evs) {
		t.Fatalf("store holds %d events, the client saw %d (%v)", len(stored), len(evs), err)
	}
	if msgs, err := store.Store.ListMessages(t.Context(), run.SessionID, 0); err != nil || len(msgs) != 1 || msgs[0].Content != "q" {
		t.Fatalf("history = %+v, %v; want the question alone", msgs, err)
	}
}

// countingStore counts the writes a run makes, by method.
type countingStore struct {
	orchestrator.Store
	mu     sync.Mutex
	writes map[string]int
}

func (c *countingStore) count(m string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes[m]++
}

func (c *countingStore) CreateRunWith(ctx context.Context, s *orchestrator.Session, r *orchestrator.Run, tail orchestrator.RunTail, locks ...orchestrator.NewLock) error {
	if r.State.Terminal() {
		c.count("CreateRunWith, ended") // a run stored whole, as it ended
		return c.Store.CreateRunWith(ctx, s, r, tail, locks...)
	}
	c.count("CreateRunWith")
	if len(tail.Events) > 0 {
		c.count("events with the start")
	}
	return c.Store.CreateRunWith(ctx, s, r, tail, locks...)
}

func (c *countingStore) UpdateRun(ctx context.Context, r *orchestrator.Run) error {
	c.count("UpdateRun")
	return c.Store.UpdateRun(ctx, r)
}

func (c *countingStore) AppendMessages(ctx context.Context, id string, msgs []orchestrator.Message) error {
	c.count("AppendMessages")
	return c.Store.AppendMessages(ctx, id, msgs)
}

func (c *countingStore) AcquireLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	if !strings.HasPrefix(key, "instance:") { // the process's own, not a run's
		c.count("AcquireLock " + key)
	}
	return c.Store.AcquireLock(ctx, key, owner, ttl)
}

func (c *countingStore) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	c.count("EndRun")
	return c.Store.EndRun(ctx, r, at, keys, tail)
}

// A no-tool run in a new session is stored in two writes besides its
// event batches: its start (session, run, question, the session's lock and
// the person's run slot) and its end (state, answer, last events with the
// final one, freed locks). The answer and the final event are found where
// they belong.
func TestRunStartAndEndAreOneWriteEach(t *testing.T) {
	store := &countingStore{Store: orchestratortest.NewMemStore(), writes: map[string]int{}}
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "the answer"}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunFinished || f.Answer != "the answer" {
		t.Fatalf("final = %+v", f)
	}
	store.mu.Lock()
	got := maps.Clone(store.writes)
	store.mu.Unlock()
	if want := map[string]int{"CreateRunWith": 1, "EndRun": 1}; !maps.Equal(got, want) {
		t.Errorf("writes besides event batches = %v; want %v", got, want)
	}
	msgs, err := store.ListMessages(t.Context(), run.SessionID, 0)
	if err != nil || len(msgs) != 2 || msgs[0].Content != "q" || msgs[1].Content != "the answer" || msgs[1].RunID != run.ID {
		t.Fatalf("history = %+v, %v; want the question and the answer", msgs, err)
	}
	stored, err := store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil || len(stored) != len(evs) || stored[len(stored)-1].Type != orchestrator.EventFinal {
		t.Fatalf("store holds %d events (%v), the client saw %d ending with final", len(stored), err, len(evs))
	}
	r, err := store.GetRun(t.Context(), run.ID)
	if err != nil || r.State != orchestrator.RunFinished || r.LastSeq != stored[len(stored)-1].Seq {
		t.Fatalf("stored run = %+v, %v", r, err)
	}
}

// The person's first slot is stored with a new session's first run; when
// that slot is held, the run takes the slot as for a known session: an
// expired one (its process died) is taken over, a live one refuses the
// run, which then stores nothing.
func TestFoldedSlotFallsBack(t *testing.T) {
	ctx := t.Context()
	store := &countingStore{Store: orchestratortest.NewMemStore(), writes: map[string]int{}}
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "ok"}}})
	// A slot left behind by a dead run, already expired.
	if err := store.Store.AcquireLock(ctx, "user:u#0", "run_dead", time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	store.mu.Lock()
	got := maps.Clone(store.writes)
	clear(store.writes)
	store.mu.Unlock()
	if want := map[string]int{"CreateRunWith": 2, "AcquireLock user:u#0": 1, "EndRun": 1}; !maps.Equal(got, want) {
		t.Errorf("writes = %v; want %v (the folded slot refused, then taken over)", got, want)
	}
	// Freed with the run: the next one folds it again.
	run = mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	final(t, collect(t, h.o, run.ID, 0))

	// Held by a live run: the person's second run is refused, nothing stored.
	gate := make(chan struct{})
	b := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "ok", Wait: gate}}})
	first := mustStart(t, b.o, orchestrator.RunRequest{UserID: "v", Question: "q"})
	_, err := b.o.Start(ctx, orchestrator.RunRequest{UserID: "v", Question: "again"})
	if !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("second run of a person with one slot: %v; want ErrBusy", err)
	}
	runs, err := store.ListRuns(ctx, orchestrator.RunFilter{UserID: "v"})
	if err != nil || len(runs) != 1 || runs[0].ID != first.ID {
		t.Fatalf("runs of v = %v, %v; want only the first", runs, err)
	}
	close(gate)
	final(t, collect(t, b.o, first.ID, 0))
}

// countingEvents counts AppendEvents beside countingStore's writes.
type countingEvents struct{ *countingStore }

// newCountingEvents is a memstore that counts its writes, events included.
func newCountingEvents() countingEvents {
	return countingEvents{&countingStore{Store: orchestratortest.NewMemStore(), writes: map[string]int{}}}
}

// counts is how many writes of each kind s took so far.
func (s countingEvents) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.writes)
}

func (c countingEvents) AppendEvents(ctx context.Context, evs []orchestrator.Event) error {
	c.count("AppendEvents")
	return c.Store.AppendEvents(ctx, evs)
}

// A blocking run's events wait up to Events.BlockingDelay to be stored,
// so a run that ends within it stores them with its end: two writes in
// all. A run that does not end within it still has its events stored
// while it runs, and a streaming run's are stored at once, whatever the
// delay. No test here waits for the delay to pass: the long delays are
// ended by the run's end, and the short one is only waited on as a
// condition (an event becoming visible).
func TestBlockingRunStoresItsEventsWithItsEnd(t *testing.T) {
	t.Run("ends within the delay", func(t *testing.T) {
		store := newCountingEvents()
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
			turns: []orchestratortest.Turn{{Content: "the answer"}}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking})
		evs := collect(t, h.o, run.ID, 0)
		assertDense(t, evs, 1)
		if len(evs) < 3 || final(t, evs).Answer != "the answer" {
			t.Fatalf("events = %+v; want several, ending with the answer", evs)
		}
		if got, want := store.counts(), map[string]int{"CreateRunWith": 1, "EndRun": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v (the events with the end)", got, want)
		}
		if stored, err := store.ListEvents(t.Context(), run.ID, 0, 0); err != nil || len(stored) != len(evs) {
			t.Fatalf("store holds %d events (%v); the client saw %d", len(stored), err, len(evs))
		}
	})

	t.Run("a tool round too", func(t *testing.T) {
		store := newCountingEvents()
		released := make(chan struct{})
		close(released)
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
			toolsets: []orchestrator.Toolset{blockingTool("step", make(chan struct{}), released)},
			turns: []orchestratortest.Turn{
				{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("step", `{}`)}},
				{Content: "after the step"},
			}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"step"}, Delivery: orchestrator.DeliverBlocking})
		evs := collect(t, h.o, run.ID, 0)
		if f := final(t, evs); f.State != orchestrator.RunFinished || f.Answer != "after the step" {
			t.Fatalf("final = %+v", f)
		}
		if got, want := store.counts(), map[string]int{"CreateRunWith": 1, "EndRun": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v (the round and the events with the end)", got, want)
		}
		msgs, err := store.ListMessages(t.Context(), run.SessionID, 0)
		if err != nil || len(msgs) != 4 || msgs[0].Content != "q" || msgs[1].Role != orchestrator.RoleAssistant ||
			!strings.Contains(msgs[2].Content, "released") || msgs[3].Content != "after the step" {
			t.Fatalf("history = %+v, %v; want the question, the round (call and result) and the answer, in order", msgs, err)
		}
	})

	// An agent's blocking run on a new session (no person's slot to
	// take): nothing is stored before its end, and then all of it in one
	// write: the session, the run as it ended, the history, the events.
	t.Run("an agent's, in one write", func(t *testing.T) {
		store := newCountingEvents()
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
			turns: []orchestratortest.Turn{{Content: "the answer"}}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverBlocking, Caller: orchestrator.CallerAgent})
		evs := collect(t, h.o, run.ID, 0)
		assertDense(t, evs, 1)
		if got, want := store.counts(), map[string]int{"CreateRunWith, ended": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v", got, want)
		}
		r, err := store.GetRun(t.Context(), run.ID)
		if err != nil || r.State != orchestrator.RunFinished || r.LastSeq != evs[len(evs)-1].Seq || r.Answer != "the answer" {
			t.Fatalf("stored run = %+v, %v", r, err)
		}
		if stored, err := store.ListEvents(t.Context(), run.ID, 0, 0); err != nil || len(stored) != len(evs) {
			t.Fatalf("store holds %d events (%v); the client saw %d", len(stored), err, len(evs))
		}
		msgs, err := store.ListMessages(t.Context(), run.SessionID, 0)
		if err != nil || len(msgs) != 2 || msgs[0].Content != "q" || msgs[1].Content != "the answer" {
			t.Fatalf("history = %+v, %v; want the question and the answer", msgs, err)
		}
		sess, err := store.GetSession(t.Context(), run.SessionID)
		if err != nil || sess.UserID != "u" || !sess.UpdatedAt.Equal(*r.FinishedAt) {
			t.Fatalf("session = %+v, %v; want u's, touched at the run's end %v", sess, err, r.FinishedAt)
		}
		if err := store.AcquireLock(t.Context(), "session:"+run.SessionID, "other", time.Minute); err != nil {
			t.Fatalf("the session's lock is held after the run: %v", err)
		}
	})

	// The same with a tool round. A tool that changes things runs only
	// once its run is on record: the start is stored before it, the rest
	// with the end. A round of read-only calls waits for nothing: the
	// whole run is still one write.
	probeRun := func(t *testing.T, readOnly bool) (store countingEvents, probed error) {
		store = newCountingEvents()
		seen := make(chan error, 1)
		probe := orchestrator.StaticToolset{SetName: "probe", List: []orchestrator.Tool{orchestratortest.NewTool("probe", readOnly,
			func(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
				_, err := store.GetRun(ctx, inv.RunID)
				seen <- err
				return &orchestrator.ToolResult{Content: "probed"}, nil
			})}}
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
			toolsets: []orchestrator.Toolset{probe},
			turns: []orchestratortest.Turn{
				{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("probe", `{}`)}},
				{Content: "after the probe"},
			}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"probe"}, Delivery: orchestrator.DeliverBlocking, Caller: orchestrator.CallerAgent})
		if f := final(t, collect(t, h.o, run.ID, 0)); f.Answer != "after the probe" {
			t.Fatalf("final = %+v", f)
		}
		msgs, err := store.ListMessages(t.Context(), run.SessionID, 0)
		if err != nil || len(msgs) != 4 || msgs[0].Content != "q" || !strings.Contains(msgs[2].Content, "probed") || msgs[3].Content != "after the probe" {
			t.Fatalf("history = %+v, %v; want the question, the round and the answer", msgs, err)
		}
		return store, <-seen
	}
	t.Run("an agent's, with a tool round", func(t *testing.T) {
		store, probed := probeRun(t, false)
		if probed != nil {
			t.Fatalf("the tool ran before its run was stored: %v", probed)
		}
		if got, want := store.counts(), map[string]int{"CreateRunWith": 1, "EndRun": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v", got, want)
		}
	})
	t.Run("an agent's, with a read-only round, in one write", func(t *testing.T) {
		store, probed := probeRun(t, true)
		if !errors.Is(probed, orchestrator.ErrNotFound) {
			t.Fatalf("the read-only tool found its run stored (%v): its start was written before the round", probed)
		}
		if got, want := store.counts(), map[string]int{"CreateRunWith, ended": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v", got, want)
		}
	})

	// A run held in its model call: what it emitted before becomes
	// visible, so stored, before the run goes on; an agent's deferred
	// start is stored with it.
	held := func(t *testing.T, blocking bool, delay time.Duration, caller ...orchestrator.Caller) {
		store := newCountingEvents()
		gate := make(chan struct{})
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(delay), StreamDelay: orchestrator.DelayOf(delay)}},
			turns: []orchestratortest.Turn{{Content: "late", Wait: gate}}})
		req := orchestrator.RunRequest{UserID: "u", Question: "q"}
		if blocking {
			req.Delivery = orchestrator.DeliverBlocking
		}
		if len(caller) > 0 {
			req.Caller = caller[0]
		}
		run := mustStart(t, h.o, req)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		for ev, err := range h.o.Events(ctx, "u", run.ID, 0) {
			if err != nil {
				t.Fatalf("waiting for the first event: %v", err)
			}
			if ev.Seq == 1 {
				break
			}
		}
		w := store.counts()
		if w["AppendEvents"]+w["events with the start"] == 0 {
			t.Errorf("an event was visible before any batch of events was stored")
		}
		if deferred := blocking && len(caller) > 0; deferred && (w["events with the start"] != 1 || w["AppendEvents"] != 0) {
			// An agent's blocking run on a new session: its start
			// waited for the log's first write, and went with it.
			t.Errorf("writes before the first event = %v; want the first batch with the run's start, in one write", w)
		}
		close(gate)
		if f := final(t, collect(t, h.o, run.ID, 0)); f.Answer != "late" {
			t.Fatalf("final = %+v", f)
		}
	}
	t.Run("blocking, longer than the delay", func(t *testing.T) { held(t, true, time.Millisecond) })
	t.Run("an agent's blocking, longer than the delay", func(t *testing.T) { held(t, true, time.Millisecond, orchestrator.CallerAgent) })
	t.Run("streaming, whatever the delay", func(t *testing.T) { held(t, false, time.Hour) })
	t.Run("an agent's streaming, whatever the delay", func(t *testing.T) { held(t, false, time.Hour, orchestrator.CallerAgent) })
}

// A streamed run whose ids go out with its events (IDsWithEvents) on a
// new session stores its start with its first events, which wait up to
// Events.StreamDelay: orchestrator.DelayOf(a run that ends by then is one write. Only the
// first write waits: once the start is stored (before a tool that
// changes something)), the run's events are stored as they come.
func TestStreamedRunStoresItsStartWithItsFirstEvents(t *testing.T) {
	oneWrite := func(t *testing.T, opts orchestrator.Options, caller orchestrator.Caller) {
		store := newCountingEvents()
		opts.Events = orchestrator.EventPolicy{StreamDelay: orchestrator.DelayOf(time.Hour)}
		h := newHarness(t, harnessOpts{store: store, opts: opts, turns: []orchestratortest.Turn{{Content: "the answer"}}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: orchestrator.DeliverStreamed, Caller: caller})
		evs := collect(t, h.o, run.ID, 0)
		assertDense(t, evs, 1)
		if f := final(t, evs); f.Answer != "the answer" {
			t.Fatalf("final = %+v", f)
		}
		if !slices.ContainsFunc(evs, func(ev orchestrator.Event) bool { return ev.Type == orchestrator.EventLLMOutputDelta }) {
			t.Errorf("events = %+v; want the model streamed (llm_output_delta)", evs)
		}
		if got, want := store.counts(), map[string]int{"CreateRunWith, ended": 1}; !maps.Equal(got, want) {
			t.Errorf("writes = %v; want %v", got, want)
		}
		if stored, err := store.ListEvents(t.Context(), run.ID, 0, 0); err != nil || len(stored) != len(evs) {
			t.Fatalf("store holds %d events (%v); the client saw %d", len(stored), err, len(evs))
		}
	}
	t.Run("an agent's, in one write", func(t *testing.T) { oneWrite(t, orchestrator.Options{}, orchestrator.CallerAgent) })
	t.Run("a person's, in one process, in one write", func(t *testing.T) {
		oneWrite(t, orchestrator.Options{OneProcess: true}, orchestrator.CallerUser)
	})

	t.Run("later events as they come", func(t *testing.T) {
		store := newCountingEvents()
		started, release := make(chan struct{}), make(chan struct{})
		// The model is held until called, so that the run's first
		// events wait for the delay before its start is stored.
		called, answer := make(chan struct{}), make(chan struct{})
		h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{Events: orchestrator.EventPolicy{StreamDelay: orchestrator.DelayOf(time.Hour)}},
			toolsets: []orchestrator.Toolset{blockingTool("step", started, release)},
			turns: []orchestratortest.Turn{
				{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("step", `{}`)}, Started: called, Wait: answer},
				{Content: "after the step"},
			}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"step"},
			Delivery: orchestrator.DeliverStreamed, Caller: orchestrator.CallerAgent})
		<-called
		close(answer)
		<-started
		if _, err := store.GetRun(t.Context(), run.ID); err != nil {
			t.Fatalf("the tool runs before its run is stored: %v", err)
		}
		// The tool is held: its call becomes visible only if the batch
		// that has it does not wait for the stream's delay.
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		for ev, err := range h.o.Events(ctx, "u", run.ID, 0) {
			if err != nil {
				t.Fatalf("waiting for the tool call to be visible: %v", err)
			}
			if ev.Type == orchestrator.EventToolCall {
				break
			}
		}
		close(release)
		if f := final(t, collect(t, h.o, run.ID, 0)); f.Answer != "after the step" {
			t.Fatalf("final = %+v", f)
		}
	})
}

// endHold holds EndRun: it closes entered when the run's end is being
// written and waits for release before storing it.
type endHold struct {
	orchestrator.Store
	entered, release chan struct{}
}

func (s *endHold) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	select {
	case <-s.entered:
	default:
		close(s.entered)
	}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Store.EndRun(ctx, r, at, keys, tail)
}

// A live run shows its end only once the end is stored: while the end's
// write is held, GetRun still says running; once stored, it and the final
// event say finished. (A run whose end is refused ends failed, so an end
// shown early could be one the store never has.)
func TestLiveRunShowsItsEndOnlyOnceStored(t *testing.T) {
	store := &endHold{Store: orchestratortest.NewMemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "the answer"}}})
	var once sync.Once
	free := func() { once.Do(func() { close(store.release) }) }
	t.Cleanup(free) // before the harness's: a failed check must not leave the end held
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-store.entered
	r, err := h.o.GetRun(t.Context(), "u", run.ID)
	if err != nil || r.State != orchestrator.RunRunning {
		t.Fatalf("while its end is being written, the run = %+v, %v; want running", r, err)
	}
	free()
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if r, err := h.o.GetRun(t.Context(), "u", run.ID); err != nil || r.State != orchestrator.RunFinished {
		t.Fatalf("after the end was stored, the run = %+v, %v; want finished", r, err)
	}
}

// firstWriteHeld holds the first AppendEvents: entered is closed when it
// begins, and it waits for release.
type firstWriteHeld struct {
	orchestrator.Store
	once             sync.Once
	entered, release chan struct{}
}

func (s *firstWriteHeld) AppendEvents(ctx context.Context, evs []orchestrator.Event) error {
	first := false
	s.once.Do(func() { first = true; close(s.entered) })
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.AppendEvents(ctx, evs)
}

// The model's output streamed while the store writes an earlier batch
// reaches the store, and every client, in one llm_output_delta event
// instead of one per chunk: nobody had seen those chunks yet. The text
// is the model's, the seqs dense, the replay the live stream.
func TestDeltasStreamedDuringAWriteAreOneEvent(t *testing.T) {
	store := &firstWriteHeld{Store: orchestratortest.NewMemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	think := "let me look at the files before I answer" // five chunks of the scripted model
	modelGo, started, toolGo := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall,
		toolsets: []orchestrator.Toolset{blockingTool("step", started, toolGo)},
		turns: []orchestratortest.Turn{
			{Content: think, ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("step", `{}`)}, Wait: modelGo},
			{Content: "done"},
		}})
	free := sync.OnceFunc(func() { close(store.release) })
	t.Cleanup(free) // before the harness's: a failed check must not leave the write held
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"step"}})
	<-store.entered // the first batch is being written
	close(modelGo)
	<-started // round 1 is streamed
	free()
	close(toolGo)
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.Answer != "done" {
		t.Fatalf("final = %+v", f)
	}
	var round1 []orchestrator.LLMDeltaData
	for _, ev := range ofType(evs, orchestrator.EventLLMOutputDelta) {
		var d orchestrator.LLMDeltaData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Round == 1 {
			round1 = append(round1, d)
		}
	}
	if len(round1) != 1 || round1[0].Delta != think {
		t.Fatalf("round 1's deltas = %+v; want one event with %q", round1, think)
	}
	stored, err := h.store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil || len(stored) != len(evs) {
		t.Fatalf("store holds %d events (%v); the client saw %d", len(stored), err, len(evs))
	}
	for i := range stored {
		if stored[i].Seq != evs[i].Seq || stored[i].Type != evs[i].Type || string(stored[i].Data) != string(evs[i].Data) {
			t.Fatalf("stored event %d = %s %s; the client saw %s %s", i, stored[i].Type, stored[i].Data, evs[i].Type, evs[i].Data)
		}
	}
}
