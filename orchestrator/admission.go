package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// liveRun is a run admitted by this process, queued or executing.
type liveRun struct {
	id, userID, sessionID string
	req                   RunRequest
	sel                   *Selection
	model                 Model
	settings              ModelSettings
	mode                  string
	language              string
	log                   *runLog
	locks                 []string
	// memoryOff is set when the run's prompt found its user's memory
	// switch off (queueMemory).
	memoryOff atomic.Bool

	// ctx is the run's context: cancelling it stops the loop, the running
	// tool and the lock heartbeat.
	ctx    context.Context
	cancel context.CancelFunc

	// mu guards run and lost.
	mu  sync.Mutex
	run Run
	// lost is set when a reaper took the run over (this instance was
	// taken for dead): nothing of it may be written any more.
	lost bool
	// resumed marks a run taken over after a crash and executed again
	// from its stored history (Options.ResumeInterrupted).
	resumed bool
	// aborted, when set, is why the run was stopped by the orchestrator
	// (not by a cancel): it ends failed with this error.
	aborted error
	// slotFolded marks a run whose user slot (locks[1]) is stored with
	// the run (persistNew), not taken before it (acquireLocks).
	slotFolded bool
	// freshSession marks a run that created its session: the session has
	// no history to load (it holds the session's lock, and nobody knew the
	// session before it was stored).
	freshSession bool
	// decided marks a run resumed after its approvals were decided: its
	// loop first finishes the suspended round (Run.Pending).
	decided bool
	// asked is set before a round's approvals are stored (loop.suspend).
	// A run started here that has not asked has none: Approvals answers
	// without reading the store (noApprovals).
	asked atomic.Bool
	// startStored marks a run Start stored as running, in a slot it
	// reserved: its start needs no write of its own.
	startStored bool
	// questionStored marks a run whose question Start stored with it
	// (persistNew): the loop finds it in the history rather than saving it.
	questionStored bool
	// hbDone is closed when the heartbeat has stopped.
	hbDone chan struct{}
	// suspended, set under mu when suspendRun begins, is closed once the
	// suspension is settled (stored waiting, or ended because a cancel
	// came meanwhile): a cancel that comes in between waits for it rather
	// than answering "cancelling".
	suspended chan struct{}
	// tools are the calls executing now, in start order (the monitor's
	// current tool); guarded by mu.
	tools []string
	// obs is the run's observation (observe.go), nil without an
	// Observer; set with obsInfo before the run can be launched.
	obs     *runObservation
	obsInfo RunInfo
}

// toolStarted and toolEnded track the calls executing now.
func (lr *liveRun) toolStarted(callID, name string) {
	lr.mu.Lock()
	lr.tools = append(lr.tools, callID+"\x00"+name)
	lr.mu.Unlock()
}

func (lr *liveRun) toolEnded(callID, name string) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if i := slices.Index(lr.tools, callID+"\x00"+name); i >= 0 {
		lr.tools = slices.Delete(lr.tools, i, i+1)
	}
}

// currentTool is the call started last of those executing, or "".
func (lr *liveRun) currentTool() string {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if n := len(lr.tools); n > 0 {
		_, name, _ := strings.Cut(lr.tools[n-1], "\x00")
		return name
	}
	return ""
}

// abort stops the run; it ends failed with err.
func (lr *liveRun) abort(err error) {
	lr.mu.Lock()
	if lr.aborted == nil {
		lr.aborted = err
	}
	lr.mu.Unlock()
	lr.cancel()
}

func (lr *liveRun) abortErr() error {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.aborted
}

func (lr *liveRun) snapshot() *Run {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	r := lr.run
	r.LastSeq = lr.log.visibleSeq()
	return &r
}

// markLost records that the run was taken over and stops it.
func (lr *liveRun) markLost() {
	lr.mu.Lock()
	lr.lost = true
	lr.mu.Unlock()
	lr.cancel()
}

func (lr *liveRun) isLost() bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.lost
}

func (lr *liveRun) update(f func(r *Run)) Run {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	f(&lr.run)
	return lr.run
}

// Start admits a run and returns it at once, queued or running. The run
// executes detached from ctx: follow it with [Orchestrator.Events].
//
// Errors: ErrInvalidArgument (bad request), ErrToolNotFound, ErrNotFound
// (unknown session), ErrUnavailable (no model; queue full, with a
// [RetryAfter] hint), ErrBusy (the user or session already has a run).
func (o *Orchestrator) Start(ctx context.Context, req RunRequest) (*Run, error) {
	if err := o.validate(&req); err != nil {
		return nil, err
	}
	// The offered tools are resolved once, at the start: the run (and its
	// stored spec, which a resumed run is prepared from) names the ones
	// the user may use.
	req.ToolNames, req.OfferedTools = o.withOffered(ctx, req), nil
	x, err := o.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	now := o.opts.Now()
	var sess *Session
	if req.SessionID != "" {
		if sess, err = o.store.GetSession(ctx, req.SessionID); err != nil {
			return nil, err
		}
		if sess.UserID != req.UserID {
			return nil, fmt.Errorf("%w: session %s", ErrNotFound, req.SessionID)
		}
	} else {
		sess = &Session{ID: newID("sess_"), UserID: req.UserID, Title: title(req.Question), CreatedAt: now, UpdatedAt: now}
	}
	if err := o.ensureLease(ctx); err != nil {
		return nil, err
	}
	runID := newID("run_")
	locks, folded, err := o.acquireLocks(ctx, req, sess.ID, runID, req.SessionID == "")
	if err != nil {
		return nil, err
	}
	lr := o.newLiveRun(req, x, locks, Run{ID: runID, SessionID: sess.ID, UserID: req.UserID, State: stateNew,
		Question: req.Question, ModelName: x.settings.Name, Owner: o.instance, Spec: specOf(req), CreatedAt: now}, 0)
	lr.freshSession = req.SessionID == ""
	lr.slotFolded = folded

	// The run is stored before it is admitted, so nothing (Cancel, Close,
	// the queue handing it a slot) can finish or start a run the store does
	// not have yet. A cheap check first spares storing a run that would be
	// refused anyway.
	if err := o.admissible(); err != nil {
		o.discard(lr)
		if folded {
			// A user who is at their limit hears that first, as when the
			// slot is taken before this check (acquireSlot).
			if busy := o.userAtLimit(req); busy != nil {
				return nil, busy
			}
		}
		return nil, err
	}
	o.setStoring(runID, true)
	defer o.setStoring(runID, false) // admitted (live) or ended by then
	// With a slot free and nobody queued for one, the slot is taken now and
	// the run stored as running: its start is then no write of its own.
	reserved := o.reserveSlot()
	first := change{lr: lr, to: RunQueued} // stored by its start's write, below
	if reserved {
		first = change{lr: lr, to: RunRunning, set: func(r *Run) { r.StartedAt = &now }}
		lr.startStored = true
	}
	if _, _, err := o.transition(ctx, first); err != nil {
		if reserved {
			o.releaseSlot()
		}
		o.discard(lr)
		return nil, err
	}
	if reserved && lr.freshSession && lr.log.policy.defersStart() && (!folded || o.claimSlot(ctx, lr)) {
		// A blocking run on a new session that runs at once, or a
		// streamed one whose ids go out with its events: nobody can know
		// its run or session before its caller is answered or sent an
		// event, so its start waits for its log's first write, and a run
		// that ends within the log's delay is stored in one write with
		// its end (storeEnd). Its locks come with its start, as
		// persistNew's do; a person's slot is claimed in this process
		// until then.
		st := o.firstWrite(lr, sess, true)
		if folded {
			st.stored = func() { o.unclaim(lr.locks[1], lr.id) }
		}
		lr.log.deferStart(&st)
		lr.questionStored = true
	} else if err := o.persistNew(ctx, lr, sess, req.SessionID == ""); err != nil {
		if reserved {
			o.releaseSlot()
		}
		o.discard(lr)
		return nil, err
	}
	o.observeRun(ctx, lr)
	startNow, pos, err := o.admit(lr, reserved)
	if err != nil {
		// Shutdown began, or the queue filled, while the run was stored:
		// end it so the store does not keep a run nobody will execute.
		o.complete(lr, outcome{stop: StopError, state: RunFailed, errMsg: "not admitted: " + err.Error()}, reserved)
		return nil, err
	}
	o.startHeartbeat(lr)
	if startNow {
		o.launch(lr)
	} else {
		lr.log.emit(EventProgress, ProgressData{Stage: "queued", Summary: "waiting for a free slot, position " + strconv.Itoa(pos)})
	}
	return lr.snapshot(), nil
}

func (o *Orchestrator) setStoring(id string, on bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if on {
		o.storing[id] = true
	} else {
		delete(o.storing, id)
	}
}

// execution is what a run executes with, resolved from its request.
type execution struct {
	model    Model
	settings ModelSettings
	mode     string
	sel      *Selection
}

// prepare resolves a request's model and tools.
func (o *Orchestrator) prepare(ctx context.Context, req RunRequest) (execution, error) {
	model, settings, err := o.models.Lookup(req.ModelName)
	if err != nil {
		return execution{}, err
	}
	if req.Temperature != nil {
		settings.Temperature = req.Temperature
	}
	if req.MaxOutput > 0 {
		settings.MaxOutput = req.MaxOutput
	}
	var sel *Selection
	if req.SkipToolCalls {
		sel = newSelection(o.tools) // no tools at all, not even the always-on ones
	} else if sel, err = o.tools.Select(ctx, req.UserID, req.ToolNames, req.ExcludeTools); err != nil {
		return execution{}, err
	}
	return execution{model: model, settings: settings, sel: sel,
		mode: firstNonEmpty(req.ToolCallMode, settings.ToolCallMode, ModeToolCall)}, nil
}

// newLiveRun builds the live state of run r, whose event log goes on after
// seq base (0 for a new run).
func (o *Orchestrator) newLiveRun(req RunRequest, x execution, locks []string, r Run, base int64) *liveRun {
	runCtx, cancel := context.WithCancel(o.baseCtx)
	lr := &liveRun{
		id: r.ID, userID: r.UserID, sessionID: r.SessionID, req: req, sel: x.sel,
		model: x.model, settings: x.settings, mode: x.mode,
		language: firstNonEmpty(req.Language, o.defaultLanguage()),
		locks:    locks, ctx: runCtx, cancel: cancel, run: r, hbDone: make(chan struct{}),
	}
	// A log that cannot store its events stops the run; complete records
	// it as failed.
	policy := o.opts.Events
	switch {
	case req.Delivery.Blocking():
		policy.StreamDelay = NoDelay
	case req.Delivery.IDsWithEvents():
		policy.BlockingDelay = NoDelay
	default:
		policy.BlockingDelay, policy.StreamDelay = NoDelay, NoDelay
	}
	lr.log = newRunLog(r.ID, r.SessionID, base, o.store, o.log, o.opts.Now, policy, o.opts.StoreRetry, func(error) { lr.cancel() })
	return lr
}

// specOf is what a run keeps of its request to be resumed.
func specOf(req RunRequest) *RunSpec {
	return &RunSpec{ToolNames: req.ToolNames, ExcludeTools: req.ExcludeTools, PreloadSkills: req.PreloadSkills, ModelName: req.ModelName,
		ToolCallMode: req.ToolCallMode, Language: req.Language, Caller: req.Caller, MaxRounds: req.MaxRounds,
		Temperature: req.Temperature, MaxOutput: req.MaxOutput, SkipToolCalls: req.SkipToolCalls,
		Metadata: req.Metadata, ApprovalMode: req.ApprovalMode, Frontend: req.Frontend}
}

// discard drops a run that was never stored or admitted.
func (o *Orchestrator) discard(lr *liveRun) {
	lr.observedEnd(RunEnd{})
	lr.cancel()
	lr.log.close()
	o.releaseLocks(lr)
	o.mu.Lock()
	o.dropClaimsLocked(lr)
	o.mu.Unlock()
}

// persistNew stores a new run with its question (and its session when
// the run starts one) in one write: a run queued when its process dies
// still has its question, attachments included, when it is resumed.
func (o *Orchestrator) persistNew(ctx context.Context, lr *liveRun, sess *Session, newSession bool) error {
	st := o.firstWrite(lr, sess, newSession)
	r, q, locks := &st.run, st.msgs[0], st.locks
	sess = st.session
	// The folded slot is claimed while it is stored, as acquireLock does.
	ok, fresh := true, false
	if lr.slotFolded {
		ok, fresh = o.claim(lr.locks[1], lr.id)
	}
	err := errClaimed
	if ok {
		err = o.store.CreateRunWith(ctx, sess, r, RunTail{Messages: []Message{q}}, locks...)
	}
	if fresh {
		o.unclaim(lr.locks[1], lr.id)
	}
	if (errors.Is(err, ErrConflict) || err == errClaimed) && lr.slotFolded {
		// The first slot is taken (or left behind by a dead process):
		// take a slot as acquireLocks does for a known session, which
		// also takes over an expired one, then store the run without it.
		key, serr := o.acquireSlot(ctx, lr.req, lr.id)
		if serr != nil {
			lr.locks = lr.locks[:1] // the session's alone; nothing stored
			return serr
		}
		lr.locks = []string{lr.locks[0], key}
		err = o.store.CreateRunWith(ctx, sess, r, RunTail{Messages: []Message{q}}, locks[0])
	}
	if err != nil {
		return err
	}
	lr.questionStored = true
	return nil
}

// errClaimed is persistNew's when the slot it would store with its run is
// claimed by another run of this process (claims.go).
var errClaimed = errors.New("slot claimed")

// firstWrite is a new run's first write: the run as Start made it, its
// question and, for a new session, the session and the locks that come
// with it.
func (o *Orchestrator) firstWrite(lr *liveRun, sess *Session, newSession bool) runStart {
	r := lr.snapshot()
	q := Message{Role: RoleUser, Content: lr.req.Question, Attachments: lr.req.Attachments, RunID: lr.id, CreatedAt: r.CreatedAt}
	st := runStart{run: *r, msgs: []Message{q}}
	if newSession {
		// Its session's lock comes with it (acquireLocks left it out):
		// nobody can know the session before this write. So does the
		// user's first slot when acquireLocks folded it.
		st.session = sess
		for _, k := range lr.locks {
			st.locks = append(st.locks, NewLock{Key: k, TTL: o.opts.LockTTL})
		}
	}
	return st
}

// admissible reports whether a run could be admitted now.
func (o *Orchestrator) admissible() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refusalLocked()
}

// refusalLocked is why no run can be admitted now, or nil.
func (o *Orchestrator) refusalLocked() error {
	switch {
	case o.closed:
		return messagef(ErrUnavailable, "shutting_down", "shutting down")
	case o.active < o.opts.MaxActiveRuns || len(o.queue) < o.opts.QueueSize:
		return nil
	default:
		return WithRetryAfter(messagef(ErrUnavailable, "queue_full", "%d runs active and the queue of %d is full", o.active, o.opts.QueueSize), o.opts.QueueRetryAfter)
	}
}

// reserveSlot takes an execution slot for a run Start is about to store,
// when one is free and no run waits in the queue for one (which would be
// passed over).
func (o *Orchestrator) reserveSlot() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.queue) > 0 || o.active >= o.opts.MaxActiveRuns {
		return false
	}
	o.active++
	return true
}

// releaseSlot gives back a slot reserveSlot took for a run that was not
// stored, to the head of the queue if any.
func (o *Orchestrator) releaseSlot() {
	o.mu.Lock()
	o.active--
	next := o.nextLocked()
	o.mu.Unlock()
	if next != nil {
		o.launch(next)
	}
}

// admit takes an execution slot or a queue place for lr; reserved: it
// holds a slot already (reserveSlot), and only shutdown refuses it.
func (o *Orchestrator) admit(lr *liveRun, reserved bool) (startNow bool, pos int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if reserved {
		if o.closed {
			return false, 0, fmt.Errorf("%w: shutting down", ErrUnavailable)
		}
		o.live[lr.id] = lr
		return true, 0, nil
	}
	if err := o.refusalLocked(); err != nil {
		return false, 0, err
	}
	o.live[lr.id] = lr
	if o.active < o.opts.MaxActiveRuns {
		o.active++
		return true, 0, nil
	}
	o.queue = append(o.queue, lr)
	return false, len(o.queue), nil
}

func (o *Orchestrator) removeQueuedLocked(lr *liveRun) bool {
	for i, q := range o.queue {
		if q == lr {
			o.queue = append(o.queue[:i], o.queue[i+1:]...)
			return true
		}
	}
	return false
}

// nextLocked hands a free slot to the head of the queue.
func (o *Orchestrator) nextLocked() *liveRun {
	if o.closed || len(o.queue) == 0 || o.active >= o.opts.MaxActiveRuns {
		return nil
	}
	next := o.queue[0]
	o.queue = o.queue[1:]
	o.active++
	return next
}

// sessionLockKey is the key of a session's lock.
func sessionLockKey(sessionID string) string { return "session:" + sessionID }

// acquireLocks takes the session lock and a per-user slot, in that order,
// and returns their keys, the session's first. A new session's lock
// (freshSession) is not taken here but stored with its first run
// (persistNew): one write less, and nobody else can know the session
// before that write. So is, for a new session, the user's first slot:
// keys then ends with it and folded is set; persistNew falls back to
// acquireSlot when that slot is taken.
func (o *Orchestrator) acquireLocks(ctx context.Context, req RunRequest, sessionID, runID string, freshSession bool) (keys []string, folded bool, err error) {
	sessKey := sessionLockKey(sessionID)
	if freshSession {
		if o.slotLimit(req) == 0 {
			return []string{sessKey}, false, nil
		}
		return []string{sessKey, userSlotKey(req.UserID, 0)}, true, nil
	}
	if err := o.acquireLock(ctx, sessKey, runID, o.opts.LockTTL); err != nil {
		if errors.Is(err, ErrBusy) {
			return nil, false, messagef(ErrBusy, "busy_session", "session %s already has a running run", sessionID)
		}
		return nil, false, err
	}
	if o.slotLimit(req) == 0 {
		return []string{sessKey}, false, nil
	}
	key, err := o.acquireSlot(ctx, req, runID)
	if err != nil {
		o.releaseKeys([]string{sessKey}, runID)
		return nil, false, err
	}
	return []string{sessKey, key}, false, nil
}

// userSlotKey is the key of a user's i-th run slot; every one starts
// with userSlotPrefix.
func userSlotKey(userID string, i int) string { return userSlotPrefix(userID) + strconv.Itoa(i) }

func userSlotPrefix(userID string) string { return "user:" + userID + "#" }

// slotLimit is how many runs the request's user may have at once, 0 when
// the global limit already bounds the user (no slot to take).
func (o *Orchestrator) slotLimit(req RunRequest) int {
	if req.Caller == CallerAgent {
		if o.opts.PerUserAgents >= o.opts.MaxActiveRuns {
			return 0
		}
		return o.opts.PerUserAgents
	}
	return o.opts.PerUser
}

// userAtLimit is acquireSlot's refusal when this process runs as many
// runs holding one of the user's slots as the request's limit, else nil:
// what a run whose slot was folded (not taken yet) is told before any
// other refusal.
func (o *Orchestrator) userAtLimit(req RunRequest) error {
	limit := o.slotLimit(req)
	prefix := userSlotPrefix(req.UserID)
	o.mu.Lock()
	n := 0
	for _, lr := range o.live {
		if lr.userID == req.UserID && slices.ContainsFunc(lr.locks, func(k string) bool { return strings.HasPrefix(k, prefix) }) &&
			!lr.snapshot().State.Terminal() {
			n++
		}
	}
	o.mu.Unlock()
	if n < limit {
		return nil
	}
	return userBusy(req.UserID, limit)
}

// userBusy is the refusal of a run whose user has limit runs already.
func userBusy(userID string, limit int) error {
	if limit == 1 {
		return messagef(ErrBusy, "busy_user", "user %s already has a running run", userID)
	}
	return messagef(ErrBusy, "busy_user_n", "user %s already has %d running runs", userID, limit)
}

// acquireSlot takes the first free slot of the request's user.
func (o *Orchestrator) acquireSlot(ctx context.Context, req RunRequest, runID string) (string, error) {
	limit := o.slotLimit(req)
	for i := range limit {
		key := userSlotKey(req.UserID, i)
		err := o.acquireLock(ctx, key, runID, o.opts.LockTTL)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, ErrBusy) {
			return "", err
		}
	}
	return "", userBusy(req.UserID, limit)
}

func (o *Orchestrator) releaseLocks(lr *liveRun) { o.releaseKeys(lr.locks, lr.id) }

func (o *Orchestrator) releaseKeys(keys []string, owner string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range keys {
		if err := o.store.ReleaseLock(ctx, k, owner); err != nil {
			o.log.Warn("lock not released; it expires with its ttl", "key", k, "owner", owner, "err", err)
		}
	}
}

// startHeartbeat renews lr's locks every LockTTL/3 and watches the store
// for a cancellation requested by another process. It lives as long as the
// run's context, which complete cancels (so does Close, through baseCtx), so
// it also ends when the run was cancelled before the heartbeat started.
func (o *Orchestrator) startHeartbeat(lr *liveRun) {
	ctx := lr.ctx
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(lr.hbDone)
		t := time.NewTicker(o.opts.LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, k := range lr.locks {
				if lr.log.pendingStart() != nil {
					break // not stored yet: its start stores them
				}
				err := o.store.RenewLock(ctx, k, lr.id, o.opts.LockTTL)
				if err == nil || ctx.Err() != nil {
					continue
				}
				o.log.Warn("lock renewal failed", "key", k, "run_id", lr.id, "err", err)
				if !errors.Is(err, ErrNotFound) {
					continue // the store is away: the lease still runs
				}
				// The lease expired. Take it again unless another run has:
				// then this run no longer has its session (or slot) to
				// itself, and must stop rather than run beside that one.
				if err := o.acquireLock(ctx, k, lr.id, o.opts.LockTTL); errors.Is(err, ErrBusy) {
					o.log.Error("run lost its lock to another run; stopping it", "key", k, "run_id", lr.id)
					lr.abort(fmt.Errorf("lock %s was lost to another run while this run was stalled", k))
				}
			}
			r, err := o.store.GetRun(ctx, lr.id)
			switch {
			case err != nil:
			case r.Owner != o.instance:
				o.log.Error("run taken over by another instance; stopping it here", "run_id", lr.id, "owner", r.Owner)
				lr.markLost()
			case r.State == RunCancelling:
				o.cancelLive(lr)
			}
		}
	}()
}

// launch starts executing an admitted run.
func (o *Orchestrator) launch(lr *liveRun) {
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		out := o.execute(lr)
		if out.state.Waiting() {
			o.suspendRun(lr, out)
			return
		}
		o.finish(lr, out)
	}()
}

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
		if err := o.endUnstarted(ctx, st, r, out, history); !errors.Is(err, errStartStored) {
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
			return o.retry(context.Background(), "store the run", func(ctx context.Context) error {
				return ownCreation(ctx, o.store, r.ID, o.store.CreateRunWith(ctx, sess, r, tail))
			})
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

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// title derives a session title from the first question.
func title(q string) string {
	r := []rune(q)
	for i, c := range r {
		if c == '\n' || c == '\r' {
			r = r[:i]
			break
		}
	}
	if len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return string(r)
}
