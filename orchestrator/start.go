package orchestrator

// Start: a run's admission, its first state and its first write.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Start admits a run and returns it at once, queued or running. The run
// executes detached from ctx: follow it with [Orchestrator.Events].
//
// Errors: ErrInvalidArgument (bad request), ErrToolNotFound, ErrNotFound
// (unknown session), ErrUnavailable (no model; queue full, with a
// [RetryAfter] hint), ErrBusy (the user or session already has a run).
func (o *Orchestrator) Start(ctx context.Context, req RunRequest) (*Run, error) {
	if req.IdempotencyKey != "" {
		return o.startIdempotent(ctx, req)
	}
	return o.start(ctx, req, newID("run_"))
}

// start is Start of a run whose id is runID.
func (o *Orchestrator) start(ctx context.Context, req RunRequest, runID string) (*Run, error) {
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
	fresh := req.SessionID == ""
	if !fresh {
		sess, err = o.store.GetSession(ctx, req.SessionID)
		switch {
		case errors.Is(err, ErrNotFound) && req.CreateSession:
			sess, fresh = &Session{ID: req.SessionID, UserID: req.UserID, Title: title(req.Question), CreatedAt: now, UpdatedAt: now}, true
		case err != nil:
			return nil, err
		case sess.UserID != req.UserID:
			return nil, fmt.Errorf("%w: session %s", ErrNotFound, req.SessionID)
		}
	} else {
		sess = &Session{ID: newID("sess_"), UserID: req.UserID, Title: title(req.Question), CreatedAt: now, UpdatedAt: now}
	}
	if err := o.ensureLease(ctx); err != nil {
		return nil, err
	}
	locks, folded, err := o.acquireLocks(ctx, req, sess.ID, runID, fresh)
	if err != nil {
		return nil, err
	}
	lr := o.newLiveRun(req, x, locks, Run{ID: runID, SessionID: sess.ID, UserID: req.UserID, State: stateNew,
		Question: req.Question, ModelName: x.settings.Name, Owner: o.instance, Spec: specOf(req), CreatedAt: now}, 0)
	lr.freshSession = fresh
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
			if busy := o.userAtLimit(ctx, req); busy != nil {
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
	// A run with an idempotency key is stored at once: a retry must find it.
	// A session its client named (CreateSession) is known before it is
	// stored, so its start is stored at once: a second run naming it
	// meets the stored session, or the write's conflict.
	if reserved && lr.freshSession && req.SessionID == "" && lr.log.policy.defersStart() && req.IdempotencyKey == "" && (!folded || o.claimSlot(ctx, lr)) {
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
	} else if err := o.persistNew(ctx, lr, sess, fresh); err != nil {
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
			lr.locks = append(lr.locks[:1:1], lr.locks[2:]...) // the session's (and a cluster slot); nothing stored
			return serr
		}
		lr.locks = append([]string{lr.locks[0], key}, lr.locks[2:]...)
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
			if !isClusterSlot(k) { // held already (acquireLocks)
				st.locks = append(st.locks, NewLock{Key: k, TTL: o.opts.LockTTL})
			}
		}
	}
	return st
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
