package orchestrator

import (
	"context"
	"errors"
	"iter"
	"time"
)

// Events replays a run's events with seq > afterSeq and then follows the
// run live until its final event, with no gap and no duplicate. It serves
// SSE resume (Last-Event-ID), A2A SubscribeToTask, MCP progress and Connect
// streams alike. userID scopes the run ("" = any user).
//
// A run executing in this process is read from its in-memory log (events
// that are stored already, see runLog); any other run is read from the
// store, and followed by polling the store every Options.FollowInterval
// (or, when the store notifies changes, on each notification)
// while it is not finished (a run of another replica sharing the
// PostgreSQL store, or one a reaper is about to end). A live log that ends
// without a final event (its store writes failed) hands over to the store
// the same way. The sequence ends after the final event, on ctx
// cancellation (yielding ctx's error) or on a store error.
func (o *Orchestrator) Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := CheckRunID(runID); err != nil {
			yield(Event{}, err)
			return
		}
		if lr := o.liveRun(runID); lr != nil {
			if !visible(userID, lr.userID) {
				yield(Event{}, errNotFoundRun(runID))
				return
			}
			if afterSeq < lr.log.base {
				// A resumed run: what came before the resumption is in the
				// store.
				var ok bool
				if afterSeq, ok = o.replayStored(ctx, runID, afterSeq, lr.log.base, yield); !ok {
					return
				}
			}
			after, ok := followLive(ctx, lr.log, afterSeq, yield)
			if ok {
				o.followStored(ctx, runID, after, lr.log, yield)
			}
			return
		}
		r, err := o.store.GetRun(ctx, runID)
		if err == nil && !visible(userID, r.UserID) {
			err = errNotFoundRun(runID)
		}
		if err != nil {
			yield(Event{}, err)
			return
		}
		o.followStored(ctx, runID, afterSeq, nil, yield)
	}
}

// followLive yields the visible events of a live log after seq until its
// final event. It returns the last seq yielded and whether the caller
// should go on from the store: the log ended without a final event.
func followLive(ctx context.Context, l *runLog, after int64, yield func(Event, error) bool) (int64, bool) {
	for {
		evs, wake, ended := l.read(after)
		for _, ev := range evs {
			if !yield(ev, nil) {
				return after, false
			}
			after = ev.Seq
		}
		if len(evs) > 0 && evs[len(evs)-1].Type == EventFinal {
			return after, false
		}
		if ended && len(evs) == 0 {
			return after, true
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			yield(Event{}, ctx.Err())
			return after, false
		}
	}
}

const storePage = 500

// replayStored yields the stored events after seq up to seq to, and
// whether the caller should go on.
func (o *Orchestrator) replayStored(ctx context.Context, runID string, after, to int64, yield func(Event, error) bool) (int64, bool) {
	for after < to {
		evs, err := o.store.ListEvents(ctx, runID, after, int(min(to-after, storePage)))
		if err != nil {
			yield(Event{}, err)
			return after, false
		}
		if len(evs) == 0 {
			return after, true
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return after, false
			}
			after = ev.Seq
		}
	}
	return after, true
}

// followStored yields a run's events from the store, polling until its
// final event. ended is a live log of the run here that ended without one
// (its run suspended for approvals, or its store writes failed): it is not
// followed again, but a later execution here (a resumed run) is.
// Followers are woken by the store's notifications (another process
// appended events) and by this process when a run resumes or ends here
// without a live log.
func (o *Orchestrator) followStored(ctx context.Context, runID string, after int64, ended *runLog, yield func(Event, error) bool) {
	var timer *time.Timer
	wake, done := o.follow.wait(runID)
	defer done()
	for {
		evs, err := o.store.ListEvents(ctx, runID, after, storePage)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
			after = ev.Seq
			if ev.Type == EventFinal {
				return
			}
		}
		if len(evs) == storePage {
			continue
		}
		// Caught up. If the run is live here now (it was queued
		// elsewhere... or just started), switch to its log.
		if lr := o.liveRun(runID); lr != nil && lr.log != ended && after >= lr.log.base {
			var more bool
			if after, more = followLive(ctx, lr.log, after, yield); !more {
				return
			}
			ended = lr.log
			continue
		}
		r, err := o.store.GetRun(ctx, runID)
		switch {
		case errors.Is(err, ErrNotFound) && o.liveRun(runID) != nil:
			// Its deferred start was never stored and its log broke:
			// it is being stored whole as it ended (endUnstarted), and
			// this process wakes its followers once it is (below).
		case err != nil:
			yield(Event{}, err)
			return
		case r.State.Terminal():
			if r.LastSeq <= after {
				return
			}
			// A run's end is stored before its last events and its final
			// event are: while it is live here they are on their way, and
			// once it has left (its log stored) they may have been stored
			// since the read above. Only a store that still has nothing
			// after this point means the process stopped in between; then
			// the row says what the final event said.
			if o.liveRun(runID) == nil {
				more, err := o.store.ListEvents(ctx, runID, after, 1)
				if err != nil {
					yield(Event{}, err)
					return
				}
				if len(more) > 0 {
					continue
				}
				yield(finalFromRun(r), nil)
				return
			}
		}
		if timer == nil {
			timer = time.NewTimer(o.followInterval())
			defer timer.Stop()
		} else {
			timer.Reset(o.followInterval())
		}
		select {
		case <-timer.C:
		case <-wake:
		case <-ctx.Done():
			yield(Event{}, ctx.Err())
			return
		}
	}
}

// finalFromRun is the final event a terminal run's row implies.
func finalFromRun(r *Run) Event {
	t := r.CreatedAt
	if r.FinishedAt != nil {
		t = *r.FinishedAt
	}
	return Event{RunID: r.ID, SessionID: r.SessionID, Seq: r.LastSeq, Type: EventFinal, Time: t,
		Data: rawJSON(FinalData{Answer: r.Answer, Usage: r.Usage, StopReason: r.StopReason, State: r.State, Error: r.Error})}
}
