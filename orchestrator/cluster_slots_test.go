package orchestrator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// wantClusterFull checks a refusal for the cluster's limit: unavailable,
// keyed cluster_full, with a retry hint.
func wantClusterFull(t *testing.T, what string, err error) {
	t.Helper()
	var keyed *orchestrator.KeyedError
	if !errors.Is(err, orchestrator.ErrUnavailable) || !errors.As(err, &keyed) {
		t.Fatalf("%s: %v; want ErrUnavailable keyed cluster_full", what, err)
	}
	if key, _ := keyed.MessageKey(); key != "cluster_full" {
		t.Fatalf("%s: key %q; want cluster_full", what, key)
	}
	if d, ok := orchestrator.RetryAfter(err); !ok || d <= 0 {
		t.Fatalf("%s: no retry hint (%v, %v)", what, d, ok)
	}
}

// The cluster's limit bounds the runs in flight across processes that
// share a store: with 2 slots, a run on each of two processes fills it, a
// third is refused on both (and nothing of it is stored), and the end of
// one frees its slot for the next, on the other process.
func TestClusterSlotsBoundRunsAcrossProcesses(t *testing.T) {
	store := orchestratortest.NewMemStore()
	gateA, startedA := make(chan struct{}), make(chan struct{})
	gateB, startedB := make(chan struct{}), make(chan struct{})
	opts := orchestrator.Options{ClusterMaxRuns: 2, FollowInterval: 5 * time.Millisecond}
	p1 := newHarness(t, harnessOpts{store: store, opts: opts, turns: []orchestratortest.Turn{{Content: "a", Wait: gateA, Started: startedA}}})
	p2 := newHarness(t, harnessOpts{store: store, opts: opts, turns: []orchestratortest.Turn{{Content: "b", Wait: gateB, Started: startedB}, {Content: "c"}}})
	a := mustStart(t, p1.o, orchestrator.RunRequest{UserID: "alice", Question: "qa"})
	mustStart(t, p2.o, orchestrator.RunRequest{UserID: "bob", Question: "qb"})
	<-startedA
	<-startedB
	defer close(gateB)

	_, err := p1.o.Start(t.Context(), orchestrator.RunRequest{UserID: "carol", Question: "qc"})
	wantClusterFull(t, "a third run on the first process", err)
	_, err = p2.o.Start(t.Context(), orchestrator.RunRequest{UserID: "carol", Question: "qc"})
	wantClusterFull(t, "a third run on the second process", err)
	if runs, err := store.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "carol"}); err != nil || len(runs) != 0 {
		t.Fatalf("refused runs stored: %+v, %v", runs, err)
	}

	close(gateA)
	if f := final(t, collect(t, p1.o, a.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("first run: %+v", f)
	}
	c := mustStart(t, p2.o, orchestrator.RunRequest{UserID: "carol", Question: "qc"})
	if f := final(t, collect(t, p2.o, c.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != "c" {
		t.Fatalf("run after a slot came free: %+v", f)
	}
}

// A run whose start is stored with its first write (blocking, on a new
// session) and that ends within it frees its cluster slot all the same,
// and a run that waits for approval keeps its slot until it ends.
func TestClusterSlotFreedByEveryEnd(t *testing.T) {
	d := &deployTool{}
	store := orchestratortest.NewMemStore()
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		// A blocking run's events wait for its end (an hour at most): its
		// start is stored with its end, in one write.
		opts: orchestrator.Options{ClusterMaxRuns: 1, Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}},
			Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour)}},
		turns: append([]orchestratortest.Turn{{Content: "one"}, {Content: "two"}}, deployTurns...)})
	for i, want := range []string{"one", "two"} {
		r := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "q", Delivery: orchestrator.DeliverBlocking, Caller: orchestrator.CallerAgent})
		if f := final(t, collect(t, h.o, r.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != want {
			t.Fatalf("blocking run %d: %+v", i, f)
		}
	}

	w := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "ship it", ToolNames: []string{"deploy"}})
	paused, err := h.o.Settled(t.Context(), "alice", w.ID)
	if err != nil || paused.State != orchestrator.RunWaitingApproval {
		t.Fatalf("Settled = %+v, %v; want waiting_approval", paused, err)
	}
	_, err = h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "bob", Question: "q"})
	wantClusterFull(t, "a run while another waits for approval", err)
	aps, err := h.o.Approvals(t.Context(), "alice", w.ID)
	if err != nil || len(aps) != 1 {
		t.Fatalf("approvals = %+v, %v", aps, err)
	}
	if _, err := h.o.Decide(t.Context(), "alice", w.ID, aps[0].ID, orchestrator.ApprovalDecision{Decision: "reject"}); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, w.ID, 0)); !f.State.Terminal() {
		t.Fatalf("decided run: %+v", f)
	}
	// Every slot is free again: the store hands it to anyone.
	if err := store.AcquireLock(t.Context(), "cluster#0", "probe", time.Minute); err != nil {
		t.Fatalf("the cluster slot is still held after every run ended: %v", err)
	}
}
