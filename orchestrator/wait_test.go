package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// waited is what one Wait returned, with the events it passed to each.
type waited struct {
	w   orchestrator.Waited
	err error
	evs []orchestrator.Event
}

// wait calls Wait from after, collecting the events it passes on.
func wait(ctx context.Context, o *orchestrator.Orchestrator, userID, runID string, after int64) waited {
	var got waited
	got.w, got.err = o.Wait(ctx, userID, runID, after, func(ev orchestrator.Event) error {
		got.evs = append(got.evs, ev)
		return nil
	})
	return got
}

// waitAsync runs wait in a goroutine; the channel gets its result.
func waitAsync(ctx context.Context, o *orchestrator.Orchestrator, userID, runID string, after int64) <-chan waited {
	done := make(chan waited, 1)
	go func() { done <- wait(ctx, o, userID, runID, after) }()
	return done
}

func approvalIDs(as []*orchestrator.Approval) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

// A run without a pause: Wait passes every event on, in order and dense,
// and returns at the final one, which is last; from the final seq on
// (nothing after it) it returns the run as stored.
func TestWaitEnds(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "the answer"}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	got := wait(t.Context(), h.o, "u", run.ID, 0)
	if got.err != nil || got.w.Paused() || got.w.Run != nil || got.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait = %+v, %v; want the final event", got.w, got.err)
	}
	assertDense(t, got.evs, 1)
	if last := got.evs[len(got.evs)-1]; last.Seq != got.w.Event.Seq || final(t, got.evs).Answer != "the answer" {
		t.Fatalf("events %v end at %d, Wait's event is %d", types(got.evs), last.Seq, got.w.Event.Seq)
	}
	if want := collect(t, h.o, run.ID, 0); !slices.Equal(types(got.evs), types(want)) {
		t.Fatalf("Wait passed %v, Events yields %v", types(got.evs), types(want))
	}
	after := wait(t.Context(), h.o, "u", run.ID, got.w.Event.Seq)
	if after.err != nil || len(after.evs) != 0 || after.w.Run == nil || after.w.Run.State != orchestrator.RunFinished || after.w.Paused() {
		t.Fatalf("Wait after the final event = %+v, %v, %v; want the finished run", after.w, after.err, types(after.evs))
	}
	if _, err := h.o.Wait(t.Context(), "mallory", run.ID, 0, nil); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's Wait: %v, want ErrNotFound", err)
	}
}

// each's error stops Wait, which returns it; the run goes on.
func TestWaitStopsOnEachError(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "the answer"}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	gone := errors.New("client gone")
	n := 0
	w, err := h.o.Wait(t.Context(), "u", run.ID, 0, func(orchestrator.Event) error { n++; return gone })
	if !errors.Is(err, gone) || n != 1 || w.Event.Seq != 1 {
		t.Fatalf("Wait = %+v, %v after %d events; want each's error at the first", w, err, n)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("the run after its waiter left: %+v", f)
	}
}

// A pause: Wait returns at approval_required only once the wait is
// stored (GetRun and the store say waiting_approval), with the pending
// approval, and has passed on no event after it. From the pause's seq,
// after the decision, it follows the run to its end; replayed from the
// start, the decided approval is history.
func TestWaitPausesOnceStored(t *testing.T) {
	d := &deployTool{}
	store := &holdWait{Store: orchestratortest.NewMemStore(), holding: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	done := make(chan waited, 1)
	var storedThen orchestrator.RunState // the store's state as Wait returned
	go func() {
		got := wait(t.Context(), h.o, "u", run.ID, 0)
		if r, err := store.GetRun(context.Background(), run.ID); err == nil {
			storedThen = r.State
		}
		done <- got
	}()
	<-store.holding // the wait is being stored, and is not yet
	if r, err := h.o.GetRun(t.Context(), "u", run.ID); err != nil || r.State != orchestrator.RunRunning {
		t.Fatalf("GetRun while the wait is stored = %+v, %v; want running", r, err)
	}
	select {
	case got := <-done:
		t.Fatalf("Wait returned before the wait was stored: %+v, %v", got.w, got.err)
	default:
	}
	close(store.release)
	got := <-done
	if got.err != nil || !got.w.Paused() || got.w.Run.State != orchestrator.RunWaitingApproval || got.w.Event.Type != orchestrator.EventApprovalRequired {
		t.Fatalf("Wait = %+v, %v; want the pause at approval_required", got.w, got.err)
	}
	if storedThen != orchestrator.RunWaitingApproval {
		t.Fatalf("Wait returned the pause while the store said %q", storedThen)
	}
	asked := approvalData(t, got.w.Event).ApprovalID
	if ids := approvalIDs(got.w.Approvals); !slices.Equal(ids, []string{asked}) {
		t.Fatalf("pending approvals = %v, want [%s]", ids, asked)
	}
	if last := got.evs[len(got.evs)-1]; last.Seq != got.w.Event.Seq {
		t.Fatalf("Wait passed on %v past its pause at %d", types(got.evs), got.w.Event.Seq)
	}
	if r, err := store.GetRun(t.Context(), run.ID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("stored run at the pause = %+v, %v", r, err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, asked, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	on := wait(t.Context(), h.o, "u", run.ID, got.w.Event.Seq)
	if on.err != nil || on.w.Paused() || on.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait after the decision = %+v, %v; want the final event", on.w, on.err)
	}
	assertDense(t, on.evs, got.w.Event.Seq+1)
	if f := final(t, on.evs); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("final = %+v", f)
	}
	replay := wait(t.Context(), h.o, "u", run.ID, 0)
	if replay.err != nil || replay.w.Paused() || replay.w.Event.Type != orchestrator.EventFinal || len(ofType(replay.evs, orchestrator.EventApprovalRequired)) != 1 {
		t.Fatalf("Wait replayed = %+v, %v, %v; want past the decided approval to the end", replay.w, replay.err, types(replay.evs))
	}
}

// Two approvals in one round: Wait pauses at the first with both pending;
// from there, the second pauses at once while it is pending; decided,
// the run is followed to its end.
func TestWaitPausesPerPendingApproval(t *testing.T) {
	d := &deployTool{}
	two := orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{
		{ID: "c1", Name: "deploy", Arguments: []byte(`{"env":"a"}`)}, {ID: "c2", Name: "deploy", Arguments: []byte(`{"env":"b"}`)}}}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, two, orchestratortest.Turn{Content: "Done."})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship both", ToolNames: []string{"deploy"}})
	first := wait(t.Context(), h.o, "u", run.ID, 0)
	if first.err != nil || !first.w.Paused() || len(first.w.Approvals) != 2 {
		t.Fatalf("first Wait = %+v, %v; want a pause with two approvals", first.w, first.err)
	}
	ids := approvalIDs(first.w.Approvals)
	if a := approvalData(t, first.w.Event).ApprovalID; a != ids[0] {
		t.Fatalf("paused at %s, want the first approval %s", a, ids[0])
	}
	second := wait(t.Context(), h.o, "u", run.ID, first.w.Event.Seq)
	if second.err != nil || !second.w.Paused() || len(second.evs) != 1 || approvalData(t, second.w.Event).ApprovalID != ids[1] {
		t.Fatalf("second Wait = %+v, %v, %v; want the pause at the second approval", second.w, second.err, types(second.evs))
	}
	for _, id := range ids {
		if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
			t.Fatal(err)
		}
	}
	end := wait(t.Context(), h.o, "u", run.ID, second.w.Event.Seq)
	if end.err != nil || end.w.Paused() || end.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait after the decisions = %+v, %v", end.w, end.err)
	}
	if c := d.called(); len(c) != 2 {
		t.Fatalf("deploy ran %v, want twice", c)
	}
}

// Decided and resumed before Wait looks: the run is followed on at once.
// Wait replays its decided approval_required and passes on the resumed
// run's events while it still runs (it holds none back until the run's
// end), then returns at the end.
func TestWaitFollowsARunResumedMeanwhile(t *testing.T) {
	d := &deployTool{}
	gate, started := make(chan struct{}), make(chan struct{})
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}},
		deployTurns[0], orchestratortest.Turn{Content: "Done.", Wait: gate, Started: started})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	p := wait(t.Context(), h.o, "u", run.ID, 0)
	if p.err != nil || !p.w.Paused() {
		t.Fatalf("Wait = %+v, %v; want the pause", p.w, p.err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, p.w.Approvals[0].ID, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	<-started // resumed: the model is called again, and waits for gate
	decided := make(chan struct{})
	done := make(chan waited, 1)
	go func() {
		var got waited
		got.w, got.err = h.o.Wait(t.Context(), "u", run.ID, 0, func(ev orchestrator.Event) error {
			got.evs = append(got.evs, ev)
			if ev.Type == orchestrator.EventApprovalDecided {
				close(decided)
			}
			return nil
		})
		done <- got
	}()
	select {
	case <-decided:
	case got := <-done:
		t.Fatalf("Wait returned %+v, %v before the resumed run ended", got.w, got.err)
	case <-time.After(20 * time.Second):
		t.Fatal("Wait held back the resumed run's approval_decided while the run runs")
	}
	close(gate)
	got := <-done
	if got.err != nil || got.w.Paused() || got.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait = %+v, %v; want the end of the resumed run", got.w, got.err)
	}
	assertDense(t, got.evs, 1)
	if f := final(t, got.evs); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("events %v, final %+v", types(got.evs), f)
	}
}

// A decision cannot come while the run suspends: its approvals are
// stored with its wait, so until then Decide finds none (even given the
// id), and Wait, once the wait is stored, sees the pause; decided then,
// the run goes on to its end.
func TestNoDecisionWhileSuspending(t *testing.T) {
	d := &deployTool{}
	store := &holdWait{Store: orchestratortest.NewMemStore(), holding: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	<-store.holding // suspending: the wait is not stored yet
	if len(store.asked) != 1 {
		t.Fatalf("the wait asks %d approvals, want 1", len(store.asked))
	}
	id := store.asked[0].ID
	if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "approve"}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("Decide while suspending: %v, want ErrNotFound", err)
	}
	done := waitAsync(t.Context(), h.o, "u", run.ID, 0)
	close(store.release)
	got := <-done
	if got.err != nil || !got.w.Paused() || got.w.Run.State != orchestrator.RunWaitingApproval || len(got.w.Approvals) != 1 || got.w.Approvals[0].ID != id {
		t.Fatalf("Wait = %+v, %v; want the pause with its one approval", got.w, got.err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatalf("Decide after the wait: %v", err)
	}
	got = <-waitAsync(t.Context(), h.o, "u", run.ID, got.w.Event.Seq)
	if got.err != nil || got.w.Paused() || got.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait = %+v, %v; want the end of the resumed run", got.w, got.err)
	}
	if f := final(t, got.evs); f.State != orchestrator.RunFinished || len(ofType(got.evs, orchestrator.EventApprovalDecided)) != 1 {
		t.Fatalf("events %v, final %+v", types(got.evs), f)
	}
}

// ctx's end stops Wait with ctx's error, while it follows the log and
// while it waits for a pause to be stored; the run is not touched.
func TestWaitCtxEnds(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "late", Wait: gate}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	ctx, cancel := context.WithCancel(t.Context())
	done := waitAsync(ctx, h.o, "u", run.ID, 0)
	cancel()
	if got := <-done; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Wait after cancel = %+v, %v; want context.Canceled", got.w, got.err)
	}
	close(gate)
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != "late" {
		t.Fatalf("the run after its waiter left: %+v", f)
	}

	d := &deployTool{}
	store := &holdWait{Store: orchestratortest.NewMemStore(), holding: make(chan struct{}, 1), release: make(chan struct{})}
	a := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	run = mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	<-store.holding // approval_required is out; the wait is being stored
	ctx, cancel = context.WithCancel(t.Context())
	done = waitAsync(ctx, a.o, "u", run.ID, 0)
	cancel()
	if got := <-done; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("Wait cancelled at the pause = %+v, %v; want context.Canceled", got.w, got.err)
	}
	close(store.release)
	waitState(t, store, run.ID, orchestrator.RunWaitingApproval)
}

// Another replica's run, through the shared store: a run executed by one
// orchestrator pauses, and a second one's Wait returns the pause once it
// is stored; a decision sent to the second resumes the run there, and
// its Wait follows it to the end.
func TestWaitOnAnotherReplicasRun(t *testing.T) {
	d := &deployTool{}
	store := orchestratortest.NewMemStore()
	policy := orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}
	a := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: policy}, turns: deployTurns[:1]})
	b := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: policy, FollowInterval: 5 * time.Millisecond}, turns: deployTurns[1:]})
	run := mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	got := wait(t.Context(), b.o, "u", run.ID, 0)
	if got.err != nil || !got.w.Paused() || got.w.Run.State != orchestrator.RunWaitingApproval || len(got.w.Approvals) != 1 {
		t.Fatalf("Wait on the other replica = %+v, %v; want the stored pause", got.w, got.err)
	}
	if r, err := store.GetRun(t.Context(), run.ID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("stored run at the pause = %+v, %v", r, err)
	}
	if _, err := b.o.Decide(t.Context(), "u", run.ID, got.w.Approvals[0].ID, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	on := wait(t.Context(), b.o, "u", run.ID, got.w.Event.Seq)
	if on.err != nil || on.w.Paused() || on.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait after the decision = %+v, %v", on.w, on.err)
	}
	assertDense(t, on.evs, got.w.Event.Seq+1)
	if f := final(t, on.evs); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("final = %+v", f)
	}
}
