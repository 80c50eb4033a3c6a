package orchestrator

// A run's end: stored in one write with its answer and its final event,
// then shown.

import (
	"context"
	"errors"
	"time"
)

// finish ends an executed run and hands its slot to the queue.
func (o *Orchestrator) finish(lr *liveRun, out outcome) {
	o.complete(lr, out, true)
}

// complete writes a run's end. The order matters: the terminal state is
// stored first, in one write with the answer, the log's last events and
// the final event (Store.EndRun, which also frees the locks and touches
// the session), then the slot is freed, and only then is the final event
// made visible, so a client that reacts to "final" by starting the next
// run never meets its own lock. The run leaves the live table once its
// log is stored.
//
// What clients are told never differs from what the store says: when the
// end cannot be stored (the store is away past the retry budget, or a
// reaper took the run over), no final event is emitted here; followers
// then read the run from the store, where the reaper records its end.
func (o *Orchestrator) complete(lr *liveRun, out outcome, hadSlot bool) {
	now := o.opts.Now()
	lr.cancel() // the loop has returned; this also stops the heartbeat
	history := out.history
	logErr := lr.log.err()
	switch aborted := lr.abortErr(); {
	case logErr != nil:
		out = outcome{stop: StopError, state: RunFailed, usage: out.usage, errMsg: "store: events not stored: " + logErr.Error()}
	case aborted != nil:
		out = outcome{stop: StopError, state: RunFailed, usage: out.usage, errMsg: aborted.Error()}
	}
	out.artifacts, out.a2ui = lr.artifacts.snapshot(), lr.a2ui.snapshot()
	ctx := context.Background()
	// ended: EndRun stored the end with the log's last events (published
	// below); freed: the end's write touched the session and freed the
	// locks (ended, or endStored).
	ended, freed := false, false
	store := func(ctx context.Context, r *Run) error {
		switch {
		case lr.isLost():
			return errors.New("taken over by another instance")
		case logErr != nil:
			// Nothing more of the log becomes visible: end the run after
			// its last stored event.
			lr.log.close()
			err := o.endBroken(ctx, lr, *r, out, history)
			freed = err == nil
			return err
		}
		err := o.storeEnd(lr, r, out, history, now)
		if err == nil {
			ended, freed = true, true
			return nil
		}
		why := failedEnd(lr, err)
		if why == "" {
			return err
		}
		// End the run failed after its last stored event, as above (the
		// log stored what it could and is closed).
		out = outcome{stop: StopError, state: RunFailed, usage: out.usage, errMsg: why}
		r.State, r.StopReason, r.Error = out.state, out.stop, out.errMsg
		err = o.endBroken(ctx, lr, *r, out, history)
		freed = err == nil
		return err
	}
	// The end as it is stored: the live run shows it only once stored (a
	// reader of the run, GetRun or an A2A subscription's first task, must
	// not see it ended before the store does, nor before its final event
	// can follow).
	_, _, endErr := o.transition(ctx, change{lr: lr, to: out.state, store: store, set: func(r *Run) {
		r.StopReason, r.Answer, r.Usage, r.Error, r.FinishedAt = out.stop, out.answer, out.usage, out.errMsg, &now
	}})
	if endErr != nil {
		o.log.Error("run's end not stored; the reaper records it when the store answers", "run_id", lr.id, "err", endErr)
	}
	if !freed {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := o.store.TouchSession(tctx, lr.sessionID, "", now); err != nil && !errors.Is(err, ErrNotFound) {
			o.log.Warn("session not touched", "session_id", lr.sessionID, "err", err)
		}
		cancel()
		o.releaseLocks(lr)
	}
	o.mu.Lock()
	if hadSlot {
		o.active--
	}
	o.dropClaimsLocked(lr) // before the final event, as the locks
	next := o.nextLocked()
	o.mu.Unlock()
	if next != nil {
		o.launch(next)
	}

	if ended && out.state == RunFinished {
		// Before the final event: a client that saw the run end finds its
		// memory task queued.
		o.queueMemory(lr)
	}
	lr.observedEnd(RunEnd{State: out.state, StopReason: out.stop, Usage: out.usage, Error: out.errMsg})
	if ended {
		lr.log.publish() // the final event, stored with the end
	}
	lr.log.close()
	o.mu.Lock()
	delete(o.live, lr.id)
	o.mu.Unlock()
	o.follow.wake(lr.id) // Wait, at a pause it announced
}

// endBroken ends, in the store alone, a run whose log broke or whose end
// could not be stored: its answer first, alone, so that the session's
// history keeps what the model said (a failure is only logged: the end
// must be recorded even when the history cannot be), then the final event
// after its last stored one, its state and its freed locks (endStored).
func (o *Orchestrator) endBroken(ctx context.Context, lr *liveRun, r Run, out outcome, history []Message) error {
	if st := lr.log.pendingStart(); st != nil {
		err := o.endUnstarted(ctx, st, r, out, history)
		if err == nil {
			o.releaseClusterSlot(lr)
		}
		if !errors.Is(err, errStartStored) {
			return err
		}
		// Its start is in the store after all: end it as a stored run.
	}
	if len(history) > 0 {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := o.store.AppendMessages(tctx, lr.sessionID, history); err != nil {
			o.log.Warn("run's answer not stored", "run_id", lr.id, "err", err)
		}
		cancel()
	}
	r.LastSeq = lr.log.visibleSeq()
	return o.endStored(ctx, &r, out, lr.locks)
}

// errStartStored is endUnstarted's when the run's start is in the store
// after all (a write whose outcome was unknown stored it).
var errStartStored = errors.New("the run's start is stored")

// endUnstarted ends, in the store alone, a run whose deferred start could
// not be stored (the store refused the log's first write: a lock another
// process stored, say): nothing of it is in the store and none of its
// events was visible, so it is stored whole as it ended, its session, its
// question and answer, and its final event as the first of its log, with
// none of its locks. Its client is told how it ended, as the store says.
func (o *Orchestrator) endUnstarted(ctx context.Context, st *runStart, r Run, out outcome, history []Message) error {
	now := o.opts.Now()
	r.LastSeq = 1
	final := Event{RunID: r.ID, SessionID: r.SessionID, Seq: 1, Type: EventFinal, Time: now, Data: rawJSON(out.final())}
	sess, msgs := st.whole(now, history)
	tail := RunTail{Messages: msgs, Events: []Event{final}}
	err := o.retry(ctx, "store the run", func(ctx context.Context) error { return o.store.CreateRunWith(ctx, sess, &r, tail) })
	if errors.Is(err, ErrConflict) {
		if _, gerr := o.store.GetRun(ctx, r.ID); gerr == nil {
			return errStartStored
		}
	}
	return err
}

// storeEnd stores the end of r, the session's time, the freed locks, the
// answer (history) and the log's last events with the final one in one
// write (runLog.end, Store.EndRun); nothing of it is visible yet.
func (o *Orchestrator) storeEnd(lr *liveRun, r *Run, out outcome, history []Message, now time.Time) error {
	return lr.log.end(EventFinal, out.final(), func(batch []Event, kept []Message) error {
		r.LastSeq = batch[len(batch)-1].Seq // the final event
		tail := RunTail{Messages: append(kept, history...), Events: batch}
		if st := lr.log.pendingStart(); st != nil {
			// Nothing of the run is stored yet (Start deferred it): the
			// run, its session and its whole history in one write. Its
			// locks were never stored, so there are none to free.
			sess, msgs := st.whole(now, tail.Messages)
			tail.Messages = msgs
			err := o.retry(context.Background(), "store the run", func(ctx context.Context) error {
				return ownCreation(ctx, o.store, r.ID, o.store.CreateRunWith(ctx, sess, r, tail))
			})
			if err == nil {
				o.releaseClusterSlot(lr)
			}
			return err
		}
		return o.retry(context.Background(), "store the run's end", func(ctx context.Context) error {
			return o.store.EndRun(ctx, r, now, lr.locks, tail)
		})
	})
}

// failedEnd is why a run whose end storeEnd could not store ends failed,
// or "" when it is not to be ended here: a run taken over by another
// instance (marked lost) is the reaper's.
func failedEnd(lr *liveRun, err error) string {
	switch {
	case errors.Is(err, ErrConflict):
		lr.markLost()
		return ""
	case errors.Is(err, errLogBroken):
		return "store: events not stored: " + lr.log.err().Error()
	default:
		// The store refused part of it, or is away past the retry budget:
		// the run fails, as any run whose history cannot be stored, if the
		// store takes that.
		return "store: the run's end not stored: " + err.Error()
	}
}
