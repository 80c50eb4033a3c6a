package orchestrator

// Cancel: a run asked to stop, here or on another replica.

import (
	"context"
	"errors"
	"fmt"
)

// Cancel asks a run to stop. A running run ends as cancelled within moments
// (the model call and the running tool see the context); a queued one ends
// at once; a run of another process is flagged in the store and stopped by
// its owner's heartbeat. Cancelling a finished run is ErrConflict.
func (o *Orchestrator) Cancel(ctx context.Context, userID, runID string) (*Run, error) {
	if lr := o.liveRun(runID); lr != nil {
		if !visible(userID, lr.userID) {
			return nil, fmt.Errorf("%w: run %s", ErrNotFound, runID)
		}
		if r := lr.snapshot(); r.State.Terminal() {
			return r, fmt.Errorf("%w: run %s already %s", ErrConflict, runID, r.State)
		}
		o.mu.Lock()
		queued := o.removeQueuedLocked(lr)
		o.mu.Unlock()
		if queued {
			o.finishQueued(lr)
			return lr.snapshot(), nil
		}
		ok, settling := o.cancelLive(lr)
		if settling != nil {
			// Caught while it suspends: suspendRun ends it as cancelled;
			// answer with what it stored.
			select {
			case <-settling:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if r, err := o.store.GetRun(ctx, runID); err != nil || !r.State.Waiting() {
				return r, err
			}
			// Stored waiting: suspendRun could not store the cancel;
			// it is ended below, as any waiting run.
		} else if ok {
			return lr.snapshot(), nil
		}
		// It has just suspended (stored as waiting, not yet gone from the
		// live runs): end it as a waiting run, below.
	}
	r, err := o.GetRun(ctx, userID, runID)
	if err != nil {
		return nil, err
	}
	if r.State.Terminal() {
		return r, fmt.Errorf("%w: run %s already %s", ErrConflict, runID, r.State)
	}
	if r.State.Waiting() {
		// Executed nowhere: whoever claims it ends it.
		err := o.endWaiting(ctx, r, outcome{stop: StopCancelled, state: RunCancelled, usage: r.Usage})
		if err == nil {
			return o.store.GetRun(ctx, runID)
		}
		if !errors.Is(err, ErrConflict) {
			return nil, err
		}
		// Resumed meanwhile: cancel it as a running run.
		if lr := o.liveRun(runID); lr != nil {
			o.cancelLive(lr)
			return lr.snapshot(), nil
		}
	}
	// Another process executes it: flag it in the store, where its owner's
	// heartbeat (or, if the owner is dead, the reaper) sees it.
	r, err = o.requestCancel(ctx, r)
	if err != nil {
		return nil, err
	}
	if r.State.Terminal() {
		return r, fmt.Errorf("%w: run %s already %s", ErrConflict, runID, r.State)
	}
	return r, nil
}

// cancelLive asks a live run to stop. It reports false, and changes
// nothing, for a run that has suspended (suspendRun marked it waiting: it
// executes nowhere, and only ending it in the store stops it). The state
// is checked and set under the run's lock, so a cancel either comes before
// the suspension marks the run waiting (which then sees cancelling) or
// after (and is told so). A cancel that comes while the run suspends also
// gets the channel suspendRun closes once it has settled the run.
func (o *Orchestrator) cancelLive(lr *liveRun) (ok bool, settling <-chan struct{}) {
	r := lr.snapshot()
	if r.State.Waiting() {
		return false, nil
	}
	if !r.State.Terminal() && r.State != RunCancelling {
		// The live run's alone: its end stores how the cancel ended it.
		// Not moved: it suspended (or ended) meanwhile.
		if _, moved, err := o.transition(context.Background(), change{lr: lr, from: r.State, to: RunCancelling}); err != nil || !moved {
			return false, nil
		}
	}
	lr.mu.Lock()
	settling = lr.suspended
	lr.mu.Unlock()
	lr.cancel()
	return true, settling
}

// finishQueued ends a run that never left the queue.
func (o *Orchestrator) finishQueued(lr *liveRun) {
	lr.cancel()
	o.complete(lr, outcome{stop: StopCancelled, state: RunCancelled}, false)
}
