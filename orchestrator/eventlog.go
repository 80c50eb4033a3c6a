package orchestrator

import (
	"context"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"
)

// runLog is the live event log of one run executing in this process.
//
// Events are appended under mu, get the next seq, and are kept in memory for
// the life of the run so that live subscribers read them by index: a slow
// subscriber never stalls the run and never misses an event. A flusher
// goroutine persists them to the store in batches (whatever accumulated
// while the previous batch was written). close waits for the flusher, so
// once a run is removed from the live table, the store holds every event and
// a subscriber that falls back to the store sees the complete log.
type runLog struct {
	runID, sessionID string
	store            Store
	log              *slog.Logger
	now              func() time.Time
	policy           EventPolicy

	// mu guards the fields below.
	mu      sync.Mutex
	events  []Event
	wake    chan struct{} // closed and replaced on every append and on close
	closed  bool
	flushed int // events[:flushed] are persisted (or given up on)

	flushSig chan struct{} // cap 1: "there is something to flush"
	done     chan struct{} // closed when the flusher has exited
}

// EventPolicy shapes what the event log keeps.
type EventPolicy struct {
	// Drop lists event types that are not emitted at all (neither streamed
	// nor persisted), e.g. llm_output_delta to keep logs small. Seqs stay
	// dense because dropped events never get one.
	Drop []string
	// MaxPayloadChars truncates an event's data beyond this many characters
	// (0 = no limit). The truncated payload is what is streamed and stored,
	// so a replay equals the live stream.
	MaxPayloadChars int
}

func newRunLog(runID, sessionID string, store Store, log *slog.Logger, now func() time.Time, p EventPolicy) *runLog {
	l := &runLog{
		runID: runID, sessionID: sessionID, store: store, log: log, now: now, policy: p,
		wake:     make(chan struct{}),
		flushSig: make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	l.events = make([]Event, 0, 64)
	go l.flusher()
	return l
}

// emit appends an event and wakes subscribers. It returns the event (with
// Seq 0 when the policy dropped it).
func (l *runLog) emit(typ string, data any) Event {
	for _, d := range l.policy.Drop {
		if d == typ && typ != EventFinal && typ != EventError {
			return Event{Type: typ}
		}
	}
	raw := rawJSON(data)
	if n := l.policy.MaxPayloadChars; n > 0 && utf8.RuneCount(raw) > n {
		raw = rawJSON(map[string]any{"truncated": true, "preview": truncateRunes(string(raw), n)})
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.log.Warn("event after close dropped", "run_id", l.runID, "type", typ)
		return Event{Type: typ}
	}
	ev := Event{
		RunID: l.runID, SessionID: l.sessionID,
		Seq:  int64(len(l.events)) + 1,
		Type: typ, Data: raw, Time: l.now(),
	}
	l.events = append(l.events, ev)
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	return ev
}

// lastSeq reports the seq of the newest event.
func (l *runLog) lastSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.events))
}

// read returns the events after seq, a channel closed when more arrive, and
// whether the log is closed (no more will ever arrive).
func (l *runLog) read(after int64) ([]Event, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after < 0 {
		after = 0
	}
	var out []Event
	if after < int64(len(l.events)) {
		out = l.events[after:len(l.events):len(l.events)]
	}
	return out, l.wake, l.closed
}

// close ends the log and waits until every event is persisted.
func (l *runLog) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.wake)
	}
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	<-l.done
}

func (l *runLog) flusher() {
	defer close(l.done)
	for range l.flushSig {
		l.mu.Lock()
		batch := l.events[l.flushed:len(l.events):len(l.events)]
		l.flushed = len(l.events)
		closed := l.closed
		l.mu.Unlock()
		if len(batch) > 0 {
			l.persist(batch)
		}
		if closed {
			l.mu.Lock()
			drained := l.flushed == len(l.events)
			l.mu.Unlock()
			if drained {
				return
			}
		}
	}
}

// persist writes a batch, retrying a few times; the store may be briefly
// unavailable. Events that cannot be written stay available to live
// subscribers and are reported in the log.
func (l *runLog) persist(batch []Event) {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := l.store.AppendEvents(ctx, batch)
		cancel()
		if err == nil {
			return
		}
		if attempt == 5 {
			l.log.Error("events not persisted", "run_id", l.runID, "from_seq", batch[0].Seq, "count", len(batch), "err", err)
			return
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
