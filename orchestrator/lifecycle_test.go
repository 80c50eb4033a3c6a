package orchestrator_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

var allStates = []orchestrator.RunState{"", orchestrator.RunQueued, orchestrator.RunRunning, orchestrator.RunWaitingApproval,
	orchestrator.RunCancelling, orchestrator.RunFinished, orchestrator.RunCancelled, orchestrator.RunFailed}

// TestLifecycleShape checks the table's promises: nothing leaves a
// terminal state or goes back to queued, every state is reachable from a
// new run, every state that is not terminal can end, and every end is
// announced by the final event.
func TestLifecycleShape(t *testing.T) {
	table := orchestrator.Lifecycle()
	next := map[orchestrator.RunState][]orchestrator.RunState{}
	for _, tr := range table {
		if tr.From.Terminal() {
			t.Errorf("%s -> %s leaves a terminal state", tr.From, tr.To)
		}
		if tr.To == orchestrator.RunQueued && tr.From != "" {
			t.Errorf("%s -> queued goes back to the queue", tr.From)
		}
		if tr.To.Terminal() != (tr.Event == orchestrator.EventFinal) {
			t.Errorf("%s -> %s is announced by %q; an end, and only an end, is announced by final", tr.From, tr.To, tr.Event)
		}
		if tr.Why == "" {
			t.Errorf("%s -> %s says not when it happens", tr.From, tr.To)
		}
		if slices.Contains(next[tr.From], tr.To) {
			t.Errorf("%s -> %s is listed twice", tr.From, tr.To)
		}
		next[tr.From] = append(next[tr.From], tr.To)
	}
	reach := func(from orchestrator.RunState) map[orchestrator.RunState]bool {
		seen := map[orchestrator.RunState]bool{from: true}
		for todo := []orchestrator.RunState{from}; len(todo) > 0; {
			s := todo[0]
			todo = todo[1:]
			for _, n := range next[s] {
				if !seen[n] {
					seen[n] = true
					todo = append(todo, n)
				}
			}
		}
		return seen
	}
	fromNew := reach("")
	for _, s := range allStates[1:] {
		if !fromNew[s] {
			t.Errorf("%s cannot be reached from a new run", s)
		}
		if s.Terminal() {
			continue
		}
		ends := reach(s)
		if !ends[orchestrator.RunFailed] || !ends[orchestrator.RunCancelled] {
			t.Errorf("%s can neither fail nor be cancelled", s)
		}
	}
}

// TestCheckTransition checks every pair of states: a move is legal when
// the table lists it (or stays put), and the error of any other names
// both states and is a conflict.
func TestCheckTransition(t *testing.T) {
	table := orchestrator.Lifecycle()
	for _, from := range allStates {
		for _, to := range allStates {
			listed := from == to || slices.ContainsFunc(table, func(tr orchestrator.Transition) bool { return tr.From == from && tr.To == to })
			err := orchestrator.CheckTransition(from, to)
			if listed != (err == nil) {
				t.Errorf("CheckTransition(%q, %q) = %v; listed %v", from, to, err, listed)
			}
			if err == nil {
				continue
			}
			if !errors.Is(err, orchestrator.ErrIllegalTransition) || !errors.Is(err, orchestrator.ErrConflict) {
				t.Errorf("CheckTransition(%q, %q) = %v, not an illegal transition conflict", from, to, err)
			}
			if !strings.Contains(err.Error(), string(to)) || (from != "" && !strings.Contains(err.Error(), string(from))) {
				t.Errorf("CheckTransition(%q, %q) = %q does not name both states", from, to, err)
			}
		}
	}
	for _, bad := range [][2]orchestrator.RunState{
		{orchestrator.RunFinished, orchestrator.RunRunning},
		{orchestrator.RunCancelled, orchestrator.RunFinished},
		{orchestrator.RunFailed, orchestrator.RunWaitingApproval},
		{orchestrator.RunCancelling, orchestrator.RunWaitingApproval},
		{orchestrator.RunRunning, orchestrator.RunQueued},
		{"", orchestrator.RunFinished},
	} {
		if orchestrator.CheckTransition(bad[0], bad[1]) == nil {
			t.Errorf("%q -> %q is allowed", bad[0], bad[1])
		}
	}
}

// TestLifecycleDoc keeps docs/lifecycle.md's diagram equal to the table.
func TestLifecycleDoc(t *testing.T) {
	doc, err := os.ReadFile("../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "```mermaid\n")
	if !ok {
		t.Fatal("docs/lifecycle.md has no mermaid block")
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatal("docs/lifecycle.md's mermaid block is not closed")
	}
	if want := orchestrator.LifecycleMermaid(); block != want {
		t.Errorf("docs/lifecycle.md's diagram differs from the table (orchestrator/lifecycle.go); put this in it:\n%s", want)
	}
}

// TestIllegalTransitionRefused moves a finished run back to running
// through the one way a state changes: it is refused with
// ErrIllegalTransition, and the store still has the run finished.
func TestIllegalTransitionRefused(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "done"}}})
	r := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u1", Question: "hi"})
	if f := final(t, collect(t, h.o, r.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("run ended %s", f.State)
	}
	for _, to := range []orchestrator.RunState{orchestrator.RunRunning, orchestrator.RunQueued, orchestrator.RunFailed, orchestrator.RunWaitingApproval} {
		err := h.o.MoveStoredForTest(t.Context(), r.ID, to)
		if !errors.Is(err, orchestrator.ErrIllegalTransition) {
			t.Errorf("finished -> %s: %v, want ErrIllegalTransition", to, err)
		}
	}
	got, err := h.store.GetRun(t.Context(), r.ID)
	if err != nil || got.State != orchestrator.RunFinished {
		t.Fatalf("stored run after refused moves: %+v, %v", got, err)
	}
	// The same way takes a legal move: finished -> finished (written
	// again, as the reaper does when only the run row was missing).
	if err := h.o.MoveStoredForTest(t.Context(), r.ID, orchestrator.RunFinished); err != nil {
		t.Errorf("finished -> finished: %v", err)
	}
}
