package orchestrator

import (
	"context"
	"sync"
	"time"
)

// RunChange is a change of a run that a process sharing the store made.
type RunChange struct {
	RunID string
	// Cancel says a cancellation was requested (Store.RequestCancel);
	// otherwise events were appended.
	Cancel bool
}

// RunWatcher tells every process sharing a store at once when a run
// changes (storage: PostgreSQL's LISTEN/NOTIFY); Options.Watcher.
// Without it, a follower of a run executing elsewhere polls every
// Options.FollowInterval and a cancel sent to another process waits for
// the owner's heartbeat (LockTTL/3).
type RunWatcher interface {
	// WatchRuns calls fn for every change of every run, this process's
	// own included, until ctx ends; it reconnects by itself and returns
	// only when ctx is done. Changes may be lost (while reconnecting):
	// callers keep polling as the safety net. fn must not block.
	WatchRuns(ctx context.Context, fn func(RunChange)) error
}

// watchers wakes the followers of runs executing elsewhere.
type watchers struct {
	mu sync.Mutex
	// waiting are the wake channels of the followers of each run.
	waiting map[string]map[chan struct{}]struct{}
}

// wait registers a follower of runID; wake is signalled (never blocking,
// buffer 1) when the run changes; done unregisters it.
func (w *watchers) wait(runID string) (wake chan struct{}, done func()) {
	wake = make(chan struct{}, 1)
	w.mu.Lock()
	if w.waiting == nil {
		w.waiting = map[string]map[chan struct{}]struct{}{}
	}
	if w.waiting[runID] == nil {
		w.waiting[runID] = map[chan struct{}]struct{}{}
	}
	w.waiting[runID][wake] = struct{}{}
	w.mu.Unlock()
	return wake, func() {
		w.mu.Lock()
		delete(w.waiting[runID], wake)
		if len(w.waiting[runID]) == 0 {
			delete(w.waiting, runID)
		}
		w.mu.Unlock()
	}
}

func (w *watchers) wake(runID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.waiting[runID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// startWatcher listens for run changes when the store can tell them: it
// wakes followers, and a cancel requested through another process stops a
// run executing here at once instead of at its next heartbeat. The
// goroutines (the listener, its stopper and a short one per remote cancel)
// are tracked by reaperWG and end when Close stops the reaper.
func (o *Orchestrator) startWatcher() {
	rw := o.opts.Watcher
	if rw == nil {
		return
	}
	o.watching = true
	ctx, cancel := context.WithCancel(o.baseCtx)
	o.reaperWG.Add(2)
	go func() {
		defer o.reaperWG.Done()
		defer cancel()
		<-o.reaperStop
	}()
	go func() {
		defer o.reaperWG.Done()
		err := rw.WatchRuns(ctx, func(c RunChange) {
			if !c.Cancel {
				o.follow.wake(c.RunID)
				return
			}
			if lr := o.liveRun(c.RunID); lr != nil {
				o.reaperWG.Add(1) // safe: this goroutine holds a count
				go func() {
					defer o.reaperWG.Done()
					o.remoteCancel(lr)
				}()
			}
		})
		if err != nil && ctx.Err() == nil {
			o.log.Warn("run change notifications stopped; following and remote cancels fall back to polling", "err", err)
		}
	}()
}

// remoteCancel stops a run executing here whose cancellation another
// process stored, once the store confirms it (the heartbeat does the same
// check later).
func (o *Orchestrator) remoteCancel(lr *liveRun) {
	ctx, cancel := context.WithTimeout(lr.ctx, 10*time.Second)
	defer cancel()
	r, err := o.store.GetRun(ctx, lr.id)
	if err == nil && r.State == RunCancelling && r.Owner == o.instance {
		o.cancelLive(lr)
	}
}

// followInterval is how often a follower of a run executing elsewhere
// polls the store: FollowInterval, or, when the store notifies changes,
// only as the safety net for a lost notification (LockTTL/3).
func (o *Orchestrator) followInterval() time.Duration {
	if o.watching {
		return max(o.opts.FollowInterval, o.opts.LockTTL/3)
	}
	return o.opts.FollowInterval
}
