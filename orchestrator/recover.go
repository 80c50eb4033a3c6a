package orchestrator

import (
	"context"
	"errors"
	"fmt"
)

// RecoverOrphans ends runs that a stopped process left unfinished. A run is
// orphaned when it is not in a terminal state and nobody holds its session
// lock any more (the owner's heartbeat stopped, so the lease expired). Each
// such run gets a final event and the failed state. Call it on start; it is
// safe with several replicas sharing a store, since taking the lock is the
// test. It returns the number of runs recovered.
func (o *Orchestrator) RecoverOrphans(ctx context.Context) (int, error) {
	states := []RunState{RunQueued, RunRunning, RunCancelling, RunWaitingInput}
	runs, err := o.store.ListRuns(ctx, RunFilter{States: states, Page: Page{Limit: 1000}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		if o.liveRun(r.ID) != nil {
			continue
		}
		key, owner := "session:"+r.SessionID, "recover:"+r.ID
		if err := o.store.AcquireLock(ctx, key, owner, o.opts.LockTTL); err != nil {
			if errors.Is(err, ErrBusy) {
				continue // alive somewhere
			}
			return n, err
		}
		err := o.endOrphan(ctx, r)
		_ = o.store.ReleaseLock(context.WithoutCancel(ctx), key, owner)
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (o *Orchestrator) endOrphan(ctx context.Context, r *Run) error {
	evs, err := o.store.ListEvents(ctx, r.ID, r.LastSeq, 0)
	if err != nil {
		return err
	}
	last := r.LastSeq
	if len(evs) > 0 {
		last = evs[len(evs)-1].Seq
		if evs[len(evs)-1].Type == EventFinal {
			// The final event made it; only the run row did not.
			r.LastSeq = last
			if !r.State.Terminal() {
				r.State = RunFailed
			}
			return o.store.UpdateRun(ctx, r)
		}
	}
	now := o.opts.Now()
	msg := "interrupted: the process running it stopped"
	state, stop := RunFailed, StopError
	if r.State == RunCancelling {
		state, stop, msg = RunCancelled, StopCancelled, ""
	}
	final := Event{RunID: r.ID, SessionID: r.SessionID, Seq: last + 1, Type: EventFinal, Time: now,
		Data: rawJSON(FinalData{Usage: r.Usage, StopReason: stop, State: state, Error: msg})}
	if err := o.store.AppendEvents(ctx, []Event{final}); err != nil {
		return fmt.Errorf("final event of orphan %s: %w", r.ID, err)
	}
	r.State, r.StopReason, r.Error, r.LastSeq, r.FinishedAt = state, stop, msg, final.Seq, &now
	o.log.Warn("orphaned run ended", "run_id", r.ID, "state", state)
	return o.store.UpdateRun(ctx, r)
}
