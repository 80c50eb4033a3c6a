package orchestrator

import (
	"context"
)

// FinalResponseToolForTest is the always-on final_response tool.
var FinalResponseToolForTest Tool = finalResponse{}

// MoveStoredForTest moves a stored run to state to the one way a run's
// state changes (transition), storing it with UpdateRun.
func (o *Orchestrator) MoveStoredForTest(ctx context.Context, runID string, to RunState) error {
	r, err := o.store.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	_, _, err = o.transition(ctx, change{run: r, to: to, store: func(ctx context.Context, r *Run) error { return o.store.UpdateRun(ctx, r) }})
	return err
}

// Settled waits until a run stops executing (stored paused, or ended) and
// returns it as GetRun then says: the wait [Orchestrator.Wait] does at a
// pause.
func (o *Orchestrator) Settled(ctx context.Context, userID, runID string) (*Run, error) {
	return o.settled(ctx, userID, runID, nil)
}

// SetReapPageForTest makes the reaper read active runs n at a time and
// returns the way back.
func SetReapPageForTest(n int) (restore func()) {
	old := reapPage
	reapPage = n
	return func() { reapPage = old }
}
