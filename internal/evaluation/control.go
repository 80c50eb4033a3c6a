package evaluation

// An evaluation run's life after it started: recovery after a crash, cancel,
// reads, deletion and the live watch.

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Recover ends the evaluations the store says are running that no server
// runs any more: this one does not, and their instance is gone, is this
// one (its result was not stored), or is not recorded (stored before
// instances were). Each ends failed, its unfinished cases as errors. It
// returns how many it ended. Every server calls it at start and then
// periodically; two that end one run at once store the same end.
func (m *Manager) Recover(ctx context.Context) (int, error) {
	runs, err := m.store.ListRuns(ctx, Filter{Status: StatusRunning})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		m.mu.Lock()
		_, active := m.active[r.ID]
		m.mu.Unlock()
		if active {
			continue
		}
		gone, err := orchestrator.Orphaned(ctx, m.opts.Instances, r.Instance)
		if err != nil {
			return n, err
		}
		if !gone {
			continue
		}
		if err := m.interrupt(ctx, r); err != nil {
			return n, err
		}
		m.opts.Logger.Warn("evaluation ended: the server that ran it stopped", "run_id", r.ID, "instance", r.Instance)
		n++
	}
	return n, nil
}

// interrupt stores r ended by Recover.
func (m *Manager) interrupt(ctx context.Context, r *Run) error {
	items, err := m.store.Items(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, it := range items {
		switch {
		case it.Status == StatusActive:
			it.Status, it.Score, it.Error = StatusError, 0, interruptedError
			if err := m.store.SaveItem(ctx, it); err != nil {
				return err
			}
		case it.Status == StatusError && it.Error == interruptedError:
			// Ended by an earlier Recover whose run then was not
			// stored: the stored run has not counted it yet.
		default:
			continue
		}
		r.Errors++
	}
	r.Status, r.Error = StatusFailed, interruptedError
	r.settle(time.Now().UTC())
	return m.store.SaveRun(ctx, r)
}

// Cancel cancels a running evaluation; ErrNotFound if it is not running
// here (unknown, or already ended: ErrConflict).
func (m *Manager) Cancel(ctx context.Context, id string) (*Run, error) {
	m.mu.Lock()
	l := m.active[id]
	m.mu.Unlock()
	if l == nil {
		r, err := m.store.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: evaluation run %s is %s", orchestrator.ErrConflict, id, r.Status)
	}
	m.emit(l, Event{"eval_log", map[string]string{"message": "cancel requested"}})
	l.cancel()
	return m.store.GetRun(ctx, id)
}

// Get returns a run and its items.
func (m *Manager) Get(ctx context.Context, id string) (*Run, []*Item, error) {
	r, err := m.store.GetRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	items, err := m.store.Items(ctx, id)
	return r, items, err
}

// List lists runs, newest first.
func (m *Manager) List(ctx context.Context, f Filter) ([]*Run, error) {
	return m.store.ListRuns(ctx, f)
}

// Delete removes a finished run and its items; a running one is a
// conflict (cancel it first).
func (m *Manager) Delete(ctx context.Context, id string) (int, error) {
	m.mu.Lock()
	_, running := m.active[id]
	m.mu.Unlock()
	if running {
		return 0, fmt.Errorf("%w: evaluation run %s is running; cancel it first", orchestrator.ErrConflict, id)
	}
	return m.store.DeleteRun(ctx, id)
}

// Watch yields a run's events from its start: live while it runs, else
// rebuilt from the store (eval_started, an eval_item per case,
// eval_finished). It ends after eval_finished or when ctx ends.
func (m *Manager) Watch(ctx context.Context, id string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		m.mu.Lock()
		l := m.active[id]
		if l == nil {
			m.mu.Unlock()
			r, items, err := m.Get(ctx, id)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(Event{"eval_started", *r}, nil) {
				return
			}
			for _, it := range items {
				if !yield(Event{"eval_item", *it}, nil) {
					return
				}
			}
			yield(Event{"eval_finished", *r}, nil)
			return
		}
		next := 0
		for {
			evs, done, ch := l.events[next:], l.done, l.changed
			next += len(evs)
			m.mu.Unlock()
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			if done {
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
			m.mu.Lock()
		}
	}
}

// Close cancels running evaluations and waits for them.
func (m *Manager) Close() {
	m.mu.Lock()
	for _, l := range m.active {
		l.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}
