package orchestrator

import (
	"context"
	"iter"
	"time"
)

// Events replays a run's events with seq > afterSeq and then follows the
// run live until its final event, with no gap and no duplicate. It serves
// SSE resume (Last-Event-ID), A2A SubscribeToTask, MCP progress and Connect
// streams alike. userID scopes the run ("" = any user).
//
// A run executing in this process is read from its in-memory log; any
// other run is read from the store, and followed by polling the store every
// Options.FollowInterval while it is not finished (a run of another replica
// sharing the PostgreSQL store). The sequence ends after the final event, on
// ctx cancellation (yielding ctx's error) or on a store error.
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
			followLive(ctx, lr.log, afterSeq, yield)
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
		o.followStored(ctx, runID, afterSeq, yield)
	}
}

func followLive(ctx context.Context, l *runLog, after int64, yield func(Event, error) bool) {
	for {
		evs, wake, closed := l.read(after)
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
			after = ev.Seq
		}
		if len(evs) > 0 && evs[len(evs)-1].Type == EventFinal {
			return
		}
		if closed && len(evs) == 0 {
			return
		}
		if len(evs) > 0 {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			yield(Event{}, ctx.Err())
			return
		}
	}
}

const storePage = 500

func (o *Orchestrator) followStored(ctx context.Context, runID string, after int64, yield func(Event, error) bool) {
	var timer *time.Timer
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
		if lr := o.liveRun(runID); lr != nil {
			followLive(ctx, lr.log, after, yield)
			return
		}
		r, err := o.store.GetRun(ctx, runID)
		if err != nil {
			yield(Event{}, err)
			return
		}
		if r.State.Terminal() && r.LastSeq <= after {
			return
		}
		if timer == nil {
			timer = time.NewTimer(o.opts.FollowInterval)
			defer timer.Stop()
		} else {
			timer.Reset(o.opts.FollowInterval)
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			yield(Event{}, ctx.Err())
			return
		}
	}
}
