package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
// while the previous batch was written).
//
// An event becomes visible to subscribers only once it is stored (durable
// before visible). So whatever happens to this process, every event a
// client was sent is in the store, and the final event a reaper appends
// after a crash never takes a seq a client has seen. The cost is one batch
// write of latency; the run itself never waits for the store.
//
// When a batch cannot be stored within the retry budget the log is broken:
// nothing more becomes visible, onBroken is called (the run is stopped and
// ends failed), and subscribers are told the log ended so they follow the
// run from the store, where its end is recorded once the store answers.
type runLog struct {
	runID, sessionID string
	// base is the seq before the first event of this log: 0, or the last
	// stored seq of a run resumed after a crash. events[i] has seq
	// base+i+1.
	base        int64
	store       Store
	log         *slog.Logger
	now         func() time.Time
	policy      EventPolicy
	retryBudget time.Duration
	onBroken    func(error)

	// mu guards the fields below.
	mu        sync.Mutex
	events    []Event
	wake      chan struct{} // closed and replaced when events become visible, and on close
	closed    bool
	flushed   int       // events[:flushed] were handed to the store
	persisted int       // events[:persisted] are stored: the visible ones
	msgs      []Message // history kept (keep) and not handed to the store yet
	broken    error     // set when a batch could not be stored
	ending    *endJob   // set by end: the flusher's last write
	// delta is the model's output merged into the log's last event, an
	// llm_output_delta not handed to the store yet (emitDelta); the
	// flusher writes its text into the event when it takes the batch.
	delta *pendingDelta

	flushSig chan struct{} // cap 1: "there is something to flush"
	done     chan struct{} // closed when the flusher has exited
	// stop is closed (under mu) when the log closes (end or close): a
	// flusher that delays a batch (policy.BlockingDelay, StreamDelay)
	// stops waiting.
	stop chan struct{}

	// startMu guards start: the run's start while it is not stored
	// (Start deferred it, deferStart). The log's first write stores it
	// first (storeStart); a run that ends before stores it with its end
	// (pendingStart).
	startMu sync.Mutex
	start   *runStart
	// startDone is closed once a deferred start is stored: a first
	// batch that waits for it (policy.StreamDelay) waits no longer.
	startDone chan struct{}
}

// runStart is the first write of a run whose start Start deferred: its
// new session, the run as it started, its question and its locks.
type runStart struct {
	session *Session
	run     Run
	msgs    []Message
	locks   []NewLock
	// stored, when set, is called once the start is stored.
	stored func()
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
	// BlockingDelay is how long the events of a blocking run
	// (DeliverBlocking: its caller reads only the end) may wait
	// before they are stored, so that they ride in fewer writes: a run
	// that ends within it stores them with its end, in one write instead
	// of two or more. Anyone who follows such a run sees each event at
	// most this much later. Options' default is 20ms.
	BlockingDelay Delay
	// StreamDelay is how long the first events of a streamed run whose
	// start is deferred (Delivery.IDsWithEvents) may wait before they
	// are stored with that start, so that a run that ends within it (an
	// answer the model gives at once, a refusal, an error) is stored in
	// one write instead of two or more. The wait ends early when the run
	// stores its start itself (before a tool round that changes
	// something). Later events are stored as they come: it delays the
	// first events a client sees by at most this much, and nothing after
	// them. Options' default is 5ms.
	StreamDelay Delay
	// KeepOutputChunks keeps each chunk of the model's streamed output as
	// its own llm_output_delta event. By default the chunks that come
	// while nobody can see the last one yet join it (runLog.emitDelta).
	KeepOutputChunks bool
}

// defersStart reports whether a run under p may store its start with its
// log's first write: its events wait for a write that can take it.
func (p EventPolicy) defersStart() bool { return p.BlockingDelay.Or(0) > 0 || p.StreamDelay.Or(0) > 0 }

func newRunLog(runID, sessionID string, base int64, store Store, log *slog.Logger, now func() time.Time, p EventPolicy,
	retryBudget time.Duration, onBroken func(error)) *runLog {
	l := &runLog{
		runID: runID, sessionID: sessionID, base: base, store: store, log: log, now: now, policy: p,
		retryBudget: retryBudget, onBroken: onBroken,
		wake:     make(chan struct{}),
		flushSig: make(chan struct{}, 1),
		done:     make(chan struct{}),
		stop:     make(chan struct{}),
	}
	l.events = make([]Event, 0, 16) // a short run emits fewer; a longer one grows it
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
	raw := l.payload(data)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.log.Warn("event after close dropped", "run_id", l.runID, "type", typ)
		return Event{Type: typ}
	}
	ev := l.appendLocked(typ, raw)
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	return ev
}

// takeLocked hands the events not handed to the store yet to the caller
// (the flusher).
func (l *runLog) takeLocked() []Event {
	l.settleDeltaLocked()
	batch := l.events[l.flushed:len(l.events):len(l.events)]
	l.flushed = len(l.events)
	return batch
}

// payload is data as the log keeps it: JSON, truncated by the policy.
func (l *runLog) payload(data any) []byte {
	raw := rawJSON(data)
	if n := l.policy.MaxPayloadChars; n > 0 && utf8.RuneCount(raw) > n {
		raw = rawJSON(map[string]any{"truncated": true, "preview": truncateRunes(string(raw), n)})
	}
	return raw
}

// appendLocked appends an event with the next seq.
func (l *runLog) appendLocked(typ string, raw []byte) Event {
	l.settleDeltaLocked()
	ev := Event{
		RunID: l.runID, SessionID: l.sessionID,
		Seq:  l.base + int64(len(l.events)) + 1,
		Type: typ, Data: raw, Time: l.now(),
	}
	l.events = append(l.events, ev)
	return ev
}

// keep hands msgs, history of the run's session, to the flusher, which
// stores them before the events of the batch it takes next (or with the
// end), in order: the run goes on without waiting for the write, and a
// run's rounds cost no write of their own. It fails when the log broke
// (the run is failing) or closed.
func (l *runLog) keep(msgs []Message) error {
	l.mu.Lock()
	switch {
	case l.broken != nil:
		err := l.broken
		l.mu.Unlock()
		return fmt.Errorf("%w: %w", errLogBroken, err)
	case l.closed:
		l.mu.Unlock()
		return errors.New("event log closed")
	}
	l.msgs = append(l.msgs, msgs...)
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	return nil
}

// errLogBroken is end's error when the log broke before its end.
var errLogBroken = errors.New("event log broken")

// endJob is a log's last write (end).
type endJob struct {
	write func(batch []Event, msgs []Message) error
	done  chan error
	// last is how many events at the batch's end are end's own: dropped
	// when write fails.
	last int
}

// lastEvent is an event end appends: its type and data.
type lastEvent struct {
	typ  string
	data any
}

// end closes the log with its last event (the final one) and has the
// flusher store it, with every event and kept message not stored yet,
// through write: the run's end in one write, instead of a batch of
// events, the end, then the final event. The flusher runs it after any batch it is storing, so seqs
// stay dense and in order. end returns write's error, or errLogBroken when
// the log had broken (then write is not called).
//
// Nothing of that last batch is visible when end returns: the caller
// finishes what must happen before the final event (the run's slot, its
// locks) and then calls publish. When write fails, the last event is
// dropped (never seen, so its seq is free for whoever records the run's
// end) and the rest of the batch is stored on its own, as the flusher
// would have stored it. Either way the log is closed.
func (l *runLog) end(typ string, data any, write func(batch []Event, msgs []Message) error) error {
	return l.endWith([]lastEvent{{typ, data}}, write)
}

// endWith is end with several last events, in order: a pause's
// announcements (suspendRun). The drop policy applies to them as to
// emit's, so the batch may end with fewer (or, with nothing else to
// store, be empty).
func (l *runLog) endWith(last []lastEvent, write func(batch []Event, msgs []Message) error) error {
	raws := make([][]byte, 0, len(last))
	types := make([]string, 0, len(last))
	for _, e := range last {
		if e.typ != EventFinal && e.typ != EventError && slices.Contains(l.policy.Drop, e.typ) {
			continue
		}
		raws, types = append(raws, l.payload(e.data)), append(types, e.typ)
	}
	job := &endJob{write: write, done: make(chan error, 1), last: len(raws)}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return errors.New("event log closed")
	}
	l.closeLocked()
	for i, raw := range raws {
		l.appendLocked(types[i], raw)
	}
	l.ending = job
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	return <-job.done
}

// finishEnd is the flusher's part of end: batch holds every event not
// yet handed to the store, the last one end's, and msgs the messages kept
// since the last batch.
func (l *runLog) finishEnd(job *endJob, batch []Event, msgs []Message, broken bool) {
	err := errLogBroken
	if !broken {
		err = job.write(batch, msgs)
	}
	if err != nil {
		l.mu.Lock()
		l.events = l.events[:len(l.events)-job.last]
		l.flushed = len(l.events)
		l.mu.Unlock()
		if rest := batch[:len(batch)-job.last]; (len(rest) > 0 || len(msgs) > 0) && !broken {
			l.persist(rest, msgs)
		}
		l.mu.Lock()
		l.wakeLocked()
		l.mu.Unlock()
	}
	job.done <- err
}

// publish makes the events end stored visible, its last one last.
func (l *runLog) publish() {
	l.mu.Lock()
	l.persisted = len(l.events)
	l.wakeLocked()
	l.mu.Unlock()
}

// storeStart stores the run's start if it is not stored yet: before
// anything else of the run refers to it (its tool rounds).
func (l *runLog) storeStart(ctx context.Context) error {
	_, err := l.storeStartWith(ctx, RunTail{})
	return err
}

// storeStartWith stores the run's start, if it is not stored yet, with
// tail, the history kept and the events of the log's first write, in one
// write; stored reports that it did (tail is stored then).
func (l *runLog) storeStartWith(ctx context.Context, tail RunTail) (stored bool, err error) {
	l.startMu.Lock()
	defer l.startMu.Unlock()
	st := l.start
	if st == nil {
		return false, nil
	}
	r := st.run
	tail.Messages = append(slices.Clip(st.msgs), tail.Messages...)
	err = ownCreation(ctx, l.store, r.ID, l.store.CreateRunWith(ctx, st.session, &r, tail, st.locks...))
	if err != nil {
		return false, err
	}
	l.start = nil
	close(l.startDone)
	if st.stored != nil {
		st.stored()
	}
	return true, nil
}

// ownCreation is err, the outcome of creating run runID, except that a
// conflict is no error when the run is there: an earlier attempt whose
// outcome was unknown stored it (the run's and its session's ids are new).
// It is checked, not assumed.
func ownCreation(ctx context.Context, store Store, runID string, err error) error {
	if errors.Is(err, ErrConflict) {
		if _, gerr := store.GetRun(ctx, runID); gerr == nil {
			return nil
		}
	}
	return err
}

// whole is what a run stored whole from its deferred start stores beside
// the run: its session, touched at now, and its history, the start's
// question then history.
func (st *runStart) whole(now time.Time, history []Message) (*Session, []Message) {
	sess := *st.session
	sess.UpdatedAt = now
	return &sess, append(slices.Clip(st.msgs), history...)
}

// deferStart makes st the run's start, stored with the log's first write.
func (l *runLog) deferStart(st *runStart) {
	l.startMu.Lock()
	l.start, l.startDone = st, make(chan struct{})
	l.startMu.Unlock()
}

// pendingStart is the run's start when it is still to be stored, for the
// end to store with itself.
func (l *runLog) pendingStart() *runStart {
	l.startMu.Lock()
	defer l.startMu.Unlock()
	return l.start
}

// visibleSeq reports the seq of the newest stored event.
func (l *runLog) visibleSeq() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base + int64(l.persisted)
}

// err reports why the log broke, or nil.
func (l *runLog) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.broken
}

// read returns the visible events after seq, a channel closed when more
// become visible, and whether no more ever will (the log is closed and
// every event stored, or the log broke). Events up to base are not in
// the log: a reader replays them from the store first (Events does).
func (l *runLog) read(after int64) ([]Event, <-chan struct{}, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := max(after-l.base, 0)
	var out []Event
	if i < int64(l.persisted) {
		out = l.events[i:l.persisted:l.persisted]
	}
	ended := l.broken != nil || l.closed && l.persisted == len(l.events)
	return out, l.wake, ended
}

// wakeLocked wakes every subscriber.
func (l *runLog) wakeLocked() {
	close(l.wake)
	l.wake = make(chan struct{})
}

// close ends the log and waits until every event is stored (or the log
// broke).
func (l *runLog) close() {
	l.mu.Lock()
	if !l.closed {
		l.closeLocked()
		l.wakeLocked()
	}
	l.mu.Unlock()
	select {
	case l.flushSig <- struct{}{}:
	default:
	}
	<-l.done
}

// closeLocked marks the log closed and stops a delayed batch's wait.
func (l *runLog) closeLocked() {
	l.closed = true
	close(l.stop)
}

func (l *runLog) flusher() {
	defer close(l.done)
	for range l.flushSig {
		l.delay()
		l.mu.Lock()
		batch := l.takeLocked()
		msgs := l.msgs
		l.msgs = nil
		closed, broken, job := l.closed, l.broken != nil, l.ending
		l.mu.Unlock()
		if job != nil {
			// end appended its event and set the job under one lock, so
			// the batch ends with that event.
			l.finishEnd(job, batch, msgs, broken)
			return
		}
		if (len(batch) > 0 || len(msgs) > 0) && !broken {
			l.persist(batch, msgs)
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

// delay waits before a batch is taken while there is one and the log is
// open, so that events that come meanwhile join it, and when the log ends
// meanwhile, they all go with its end: policy.BlockingDelay before each
// batch of a blocking run, policy.StreamDelay before the first batch of a
// streamed one whose start is deferred, until that start is stored.
func (l *runLog) delay() {
	d, started := l.policy.BlockingDelay.Or(0), (<-chan struct{})(nil)
	if d <= 0 {
		l.startMu.Lock()
		if l.start != nil {
			d, started = l.policy.StreamDelay.Or(0), l.startDone
		}
		l.startMu.Unlock()
		if d <= 0 {
			return
		}
	}
	l.mu.Lock()
	wait := !l.closed && (l.flushed < len(l.events) || len(l.msgs) > 0)
	l.mu.Unlock()
	if !wait {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-l.stop:
	case <-started:
	}
}

// persist stores kept messages, then a batch of events, retrying within
// the budget, and makes the events visible; what cannot be stored breaks
// the log.
func (l *runLog) persist(batch []Event, msgs []Message) {
	err := retryFor(context.Background(), l.retryBudget, func(ctx context.Context) error {
		// A start not stored yet takes them with it: one write.
		stored, err := l.storeStartWith(ctx, RunTail{Messages: msgs, Events: batch})
		if err != nil {
			return fmt.Errorf("store the run's start: %w", err)
		}
		if stored {
			return nil
		}
		if len(msgs) > 0 {
			if err := l.store.AppendMessages(ctx, l.sessionID, msgs); err != nil {
				return fmt.Errorf("save history: %w", err)
			}
			msgs = nil // stored: a retry is for the events
		}
		if len(batch) == 0 {
			return nil
		}
		return l.store.AppendEvents(ctx, batch)
	}, func(attempt int, err error) {
		l.log.Warn("events not stored yet; retrying", "run_id", l.runID, "attempt", attempt, "err", err)
	})
	l.mu.Lock()
	if err == nil {
		if len(batch) > 0 {
			l.persisted = int(batch[len(batch)-1].Seq - l.base)
		}
	} else {
		l.broken = err
	}
	l.wakeLocked()
	l.mu.Unlock()
	if err != nil {
		l.log.Error("events not stored; the run ends failed", "run_id", l.runID, "events", len(batch), "err", err)
		if l.onBroken != nil {
			l.onBroken(err)
		}
	}
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
