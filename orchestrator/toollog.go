package orchestrator

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// ToolLogsAppender is a Store that stores several tool logs in one write.
// The orchestrator writes its tool logs through it when the store has it,
// and one by one (Store.AppendToolLog) when not.
type ToolLogsAppender interface {
	AppendToolLogs(ctx context.Context, logs []*ToolLog) error
}

// ToolCallStat is one call as the usage aggregation reads it
// ([Orchestrator.ToolCallStats]).
type ToolCallStat struct {
	Tool       string
	UserID     string
	IsError    bool
	DurationMS int64
	CreatedAt  time.Time
}

// ToolLogFilter selects tool calls from the store.
type ToolLogFilter struct {
	Since  time.Time
	Tool   string
	UserID string
	// Limit bounds the calls read (the newest first); 0 means the store's
	// default.
	Limit int
}

// maxToolLogBatch bounds one write of tool logs; a batch this long is
// written without waiting for the delay.
const maxToolLogBatch = 256

// maxPendingToolLogs bounds the logs waiting for a store that does not keep
// up (down, or slower than the calls): past it, a new log is dropped and
// counted, and the count is logged with the next batch written, so a
// stalled store costs the server a bounded memory, not all of it.
const maxPendingToolLogs = 20_000

// toolLogs writes tool logs in the background, in batches. A tool log is
// monitoring data: a run never waits for it. One goroutine writes them:
// when a log comes it waits up to delay for more, then writes whatever
// is waiting (maxToolLogBatch at a time), so under load the logs of tens
// of runs share one write (one op of the store's writer, one multi-row
// statement, and the pages of tool_logs' B-trees written once a batch
// instead of once a run), and a log alone is stored at most delay after
// it came. A reader that needs the logs of runs that ended (flush: the
// usage monitor, deleting a session or a user) has what is waiting
// written at once and waits for it; stop writes what is left.
//
// Written one at a time, as they came, the logs were a write for every
// tool round: a third of the writer's ops in a one-tool run, and about
// 5 % of wunder's CPU per run (docs/benchmarks.md, thirteenth pass).
type toolLogs struct {
	store Store
	log   *slog.Logger
	delay time.Duration // <= 0: written as soon as the writer is free

	mu      sync.Mutex
	pending []*ToolLog
	closed  bool
	// maxPending is maxPendingToolLogs (tests lower it); dropped counts
	// the logs dropped past it since the last report.
	maxPending int
	dropped    int
	// queued counts the logs added, written those written or given up;
	// progress is closed and replaced when written moves (flush waits
	// on it).
	queued, written uint64
	progress        chan struct{}

	wake chan struct{} // cap 1: "there are logs"
	// hurry (cap 1) ends the wait for more: a full batch, a flush, stop.
	hurry chan struct{}
	done  chan struct{} // closed when the writer has written the last batch
}

func newToolLogs(store Store, log *slog.Logger, delay time.Duration) *toolLogs {
	t := &toolLogs{store: store, log: log, delay: delay, maxPending: maxPendingToolLogs, progress: make(chan struct{}),
		wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1), done: make(chan struct{})}
	go t.loop()
	return t
}

// add queues l; after stop it is written at once, by the caller.
func (t *toolLogs) add(l *ToolLog) {
	t.mu.Lock()
	t.queued++
	if t.closed {
		t.mu.Unlock()
		t.write([]*ToolLog{l})
		t.wrote(1)
		return
	}
	if len(t.pending) >= t.maxPending {
		t.queued-- // never to be written: flush does not wait for it
		t.dropped++
		t.mu.Unlock()
		return
	}
	t.pending = append(t.pending, l)
	full := len(t.pending) >= maxToolLogBatch
	select { // under mu: stop closes wake under it
	case t.wake <- struct{}{}:
	default:
	}
	t.mu.Unlock()
	if full {
		t.rush()
	}
}

// rush ends the writer's wait for more logs, if it waits.
func (t *toolLogs) rush() {
	select {
	case t.hurry <- struct{}{}:
	default:
	}
}

func (t *toolLogs) loop() {
	defer close(t.done)
	for range t.wake {
		t.gather()
		for {
			t.mu.Lock()
			batch := t.pending[:min(len(t.pending), maxToolLogBatch)]
			t.pending = t.pending[len(batch):]
			if len(t.pending) == 0 {
				t.pending = nil // the next batch starts a new array, this one is written
			}
			dropped := t.dropped
			t.dropped = 0
			t.mu.Unlock()
			if dropped > 0 {
				t.log.Error("tool logs (the audit) dropped: the store did not keep up", "dropped", dropped, "bound", t.maxPending)
			}
			if len(batch) == 0 {
				break
			}
			t.write(batch)
			t.wrote(len(batch))
		}
	}
}

// gather waits up to delay for more logs to join those waiting, unless
// none waits (wake came for logs an earlier batch took) or somebody is
// in a hurry: a hurry that came while the writer was not waiting (a full
// batch, a flush) is kept in the channel and ends the next wait at once.
func (t *toolLogs) gather() {
	if t.delay <= 0 {
		return
	}
	t.mu.Lock()
	waiting := len(t.pending)
	t.mu.Unlock()
	if waiting == 0 {
		return
	}
	timer := time.NewTimer(t.delay)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-t.hurry:
	}
}

// wrote counts n logs written (or given up) and wakes flush.
func (t *toolLogs) wrote(n int) {
	t.mu.Lock()
	t.written += uint64(n)
	close(t.progress)
	t.progress = make(chan struct{})
	t.mu.Unlock()
}

// flush waits until every log added before it is written (or given up):
// what reads or deletes tool logs by a run that has ended sees them all.
func (t *toolLogs) flush(ctx context.Context) error {
	t.mu.Lock()
	target := t.queued
	if t.written < target {
		t.rush()
	}
	for t.written < target {
		ch := t.progress
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		t.mu.Lock()
	}
	t.mu.Unlock()
	return nil
}

// write stores a batch; a failure is logged (the logs are monitoring
// data, and the run they describe has its events).
func (t *toolLogs) write(batch []*ToolLog) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a, ok := t.store.(ToolLogsAppender); ok {
		if err := a.AppendToolLogs(ctx, batch); err != nil {
			t.log.Warn("tool logs not saved", "logs", len(batch), "first_run_id", batch[0].RunID, "err", err)
		}
		return
	}
	for _, l := range batch {
		if err := t.store.AppendToolLog(ctx, l); err != nil {
			t.log.Warn("tool log not saved", "run_id", l.RunID, "tool", l.Tool, "err", err)
		}
	}
}

// stop writes the logs queued and waits for them; later ones are written
// by add itself.
func (t *toolLogs) stop() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		<-t.done
		return
	}
	t.closed = true
	close(t.wake)
	t.mu.Unlock()
	t.rush()
	<-t.done
}
