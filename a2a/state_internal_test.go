package a2a

import (
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// TestEveryRunStateIsATaskState: every state of the lifecycle maps to a
// task state, and a filter by that task state finds it again; both pauses
// are input-required.
func TestEveryRunStateIsATaskState(t *testing.T) {
	for _, s := range orchestrator.States() {
		ts := stateOf(s)
		if ts == w.StateUnknown {
			t.Errorf("run state %s has no task state", s)
			continue
		}
		found := false
		for _, back := range runStates(ts) {
			found = found || back == s
		}
		if !found {
			t.Errorf("a filter by %s does not find run state %s", ts, s)
		}
	}
	for _, s := range []orchestrator.RunState{orchestrator.RunWaitingApproval, orchestrator.RunWaitingInput} {
		if stateOf(s) != w.StateInputRequired {
			t.Errorf("%s is %s, want input-required", s, stateOf(s))
		}
	}
}
