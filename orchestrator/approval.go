package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Approvals: a person in the loop.
//
// Before a round's tools run, the loop asks the policy which calls need a
// person's decision (ApprovalPolicy, the user's ToolAccess.Approval, the
// run's approval mode). If any does, the round is not executed: the loop
// stores one [Approval] per such call, emits approval_required for each,
// and the run suspends. A suspended run is in state waiting_approval and is
// executed nowhere: it holds no execution slot and no goroutine, only its
// session lock and per-user slot (extended for as long as it may wait).
// What it needs to go on is in the store: its request (Run.Spec), its
// history up to the suspended round, the round itself (Run.Pending: the
// model's text and calls) and the approvals.
//
// A decision ([Orchestrator.Decide]) is recorded with a compare-and-set
// (a second one is ErrConflict). When every approval of the round is
// decided, the instance that recorded the last one claims the run
// (Store.ClaimWaiting: exactly one claimant wins) and resumes it through
// the ordinary admission: the round's calls run with their decisions
// applied (approve, edit: the person's arguments, reject: the reason is the
// call's result), and the loop goes on. A cancel decision ends the run
// cancelled. The instance that suspended the run, the reaper of every
// instance (each pass) and a timer for approvals.timeout_s all look for a
// waiting run whose decisions are complete or expired, so a decision
// recorded while its run was still suspending, or by a replica that died
// right after, is not lost.
//
// Exactly once: an approved call is marked started in the store before it
// runs and done (with its result) after. A run resumed after a crash
// (concurrency.resume_interrupted) or by a second claimant finds the mark:
// done gives the stored result, started says the outcome is unknown and the
// call is not run again.

// ask is one call of a round that needs a decision.
type ask struct {
	index   int
	kind    string
	reason  string
	missing json.RawMessage
	// question is what an ask_user call asks (kind question).
	question *Question
}

// gate asks the policy (policy.go) about each call of a round. A call it
// denies does not run: the model reads the reason as its result, and the
// audit records it denied. It returns the calls that need a person's
// decision.
func (l *loop) gate(ctx context.Context, calls []pendingCall) []ask {
	var asks []ask
	for i := range calls {
		c := &calls[i]
		if c.tool == nil || c.preset != nil {
			continue
		}
		spec := c.tool.Spec()
		d := l.o.DecideTool(ctx, ToolCheck{UserID: l.lr.userID, Tool: spec.Name, Spec: &spec, Via: ViaRun,
			ApprovalMode: l.lr.req.ApprovalMode, who: l.subject(ctx)})
		switch {
		case d.Verdict == VerdictDeny:
			c.deny(d.Reason)
		case spec.Name == AskUserTool:
			// A question is its own pause: asking needs no approval.
			q, err := ParseQuestion(c.call.Arguments)
			if err != nil {
				c.tool, c.err = nil, err.Error()
				continue
			}
			asks = append(asks, ask{index: i, kind: KindQuestion, reason: "the model asks the user", question: q})
		case d.Verdict == VerdictNeedsApproval:
			a := ask{index: i, kind: KindAuthorization, reason: d.Reason}
			if missing := missingArgs(spec.InputSchema, c.call.Arguments); missing != nil {
				a.kind, a.missing = KindParamRequired, missing
				a.reason += "; the call lacks required arguments"
			}
			asks = append(asks, a)
		}
	}
	return asks
}

// deny makes c a call the policy refused: it does not run, its result is
// the reason, and the audit records it denied.
func (c *pendingCall) deny(reason string) {
	c.tool, c.err, c.denied = nil, "refused: "+reason, true
}

// subject is the run's user as the policy sees them: the one the round's
// selection was filtered with, else read once per run.
func (l *loop) subject(ctx context.Context) *subject {
	if l.sel != nil && l.sel.who != nil {
		return l.sel.who
	}
	if l.who == nil {
		l.who = l.o.tools.subjectOf(ctx, l.lr.userID)
	}
	return l.who
}

// missingArgs returns the JSON Schema of the required properties args
// lacks, or nil.
func missingArgs(schema, args json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return nil
	}
	var have map[string]json.RawMessage
	_ = json.Unmarshal(args, &have)
	props := map[string]json.RawMessage{}
	var req []string
	for _, k := range s.Required {
		if v, ok := have[k]; ok && string(v) != "null" {
			continue
		}
		req = append(req, k)
		if p, ok := s.Properties[k]; ok {
			props[k] = p
		} else {
			props[k] = json.RawMessage(`{}`)
		}
	}
	if len(req) == 0 {
		return nil
	}
	return rawJSON(map[string]any{"type": "object", "properties": props, "required": req})
}

func decisionsFor(kind string) []string {
	switch kind {
	case KindParamRequired:
		return []string{DecisionEdit, DecisionReject, DecisionCancel}
	case KindQuestion:
		return []string{DecisionAnswer, DecisionDecline, DecisionCancel}
	}
	return []string{DecisionApprove, DecisionEdit, DecisionReject, DecisionCancel}
}

// pause is a round that waits: its calls, and the approvals they wait
// for. suspendRun stores it with the run's wait, in one write.
type pause struct {
	round     *PendingRound
	approvals []*Approval
}

// announce is the events that announce the pause: one approval_required
// per approval, one user_input_required per question.
func (p *pause) announce() []lastEvent {
	evs := make([]lastEvent, len(p.approvals))
	for i, ap := range p.approvals {
		if ap.Kind == KindQuestion {
			evs[i] = lastEvent{EventUserInputRequired, QuestionView(ap)}
			continue
		}
		evs[i] = lastEvent{EventApprovalRequired, ApprovalRequiredData{ApprovalID: ap.ID, Kind: ap.Kind, Tool: ap.Tool, Arguments: ap.Arguments,
			Reason: ap.Reason, Decisions: ap.Decisions, Missing: ap.Missing, CallID: ap.CallID, Round: ap.Round, ExpiresAt: ap.ExpiresAt}}
	}
	return evs
}

// waitingState is the state of a run that waits for approvals: waiting
// for input when any of them is a question.
func waitingState(approvals []*Approval) RunState {
	if slices.ContainsFunc(approvals, func(a *Approval) bool { return a.Kind == KindQuestion }) {
		return RunWaitingInput
	}
	return RunWaitingApproval
}

// suspend makes the round's approvals and returns the outcome that makes
// launch suspend the run: suspendRun stores them, the round, the wait
// and their approval_required events in one write.
func (l *loop) suspend(resp *ModelResponse, calls []pendingCall, asks []ask) outcome {
	o, lr := l.o, l.lr
	now := o.opts.Now()
	expiry := func(t time.Duration) *time.Time {
		if t <= 0 {
			return nil
		}
		e := now.Add(t)
		return &e
	}
	pending := &PendingRound{Round: l.round, Content: resp.Content, ReasoningContent: resp.ReasoningContent, Locks: lr.locks}
	for _, c := range calls {
		pending.Calls = append(pending.Calls, PendingToolCall{Call: c.call, Err: c.err, Denied: c.denied})
	}
	approvals := make([]*Approval, len(asks))
	for i, a := range asks {
		c := calls[a.index]
		ap := &Approval{ID: newID("appr_"), RunID: lr.id, SessionID: lr.sessionID, UserID: lr.userID, Round: l.round,
			CallID: c.call.ID, Kind: a.kind, Tool: c.call.Name, Arguments: c.call.Arguments, Reason: a.reason,
			Missing: a.missing, Decisions: decisionsFor(a.kind), State: ApprovalPending, CreatedAt: now, ExpiresAt: expiry(o.opts.Approvals.Timeout)}
		if a.question != nil {
			ap.ID, ap.Arguments, ap.ExpiresAt = newID("ask_"), rawJSON(a.question), expiry(o.opts.Questions.Timeout)
		}
		approvals[i] = ap
		pending.Calls[a.index].ApprovalID = ap.ID
	}
	lr.asked.Store(true) // before the store has them: see noApprovals
	return outcome{state: waitingState(approvals), usage: l.usage, pause: &pause{round: pending, approvals: approvals}}
}

// storePause stores r's wait: the run waiting with its round, the
// round's approvals, the history kept and the log's last events, the
// approval_required ones last, in one write (runLog.endWith,
// Store.SuspendRun). A start still deferred is stored first. On success
// stored is called and then the events are published; on failure nothing of the pause is stored
// and the log is closed (the reaper takes the run over as any run whose
// execution stopped).
func (o *Orchestrator) storePause(lr *liveRun, r *Run, p *pause, stored func()) error {
	if err := lr.log.storeStart(context.Background()); err != nil {
		lr.log.close()
		return fmt.Errorf("store the run's start: %w", err)
	}
	r.LastSeq = lr.log.visibleSeq()
	err := lr.log.endWith(p.announce(), func(batch []Event, kept []Message) error {
		if len(batch) > 0 {
			r.LastSeq = batch[len(batch)-1].Seq
		}
		return o.retry(context.Background(), "store the run's wait", func(ctx context.Context) error {
			return o.store.SuspendRun(ctx, r, p.approvals, RunTail{Messages: kept, Events: batch})
		})
	})
	if err != nil {
		return err
	}
	stored()
	lr.log.publish()
	return nil
}

// waitTTL is how long a waiting run's locks are kept: until its approvals
// and questions expire (plus the lock TTL), or a long time when they never
// do.
func (o *Orchestrator) waitTTL() time.Duration {
	if a, q := o.opts.Approvals.Timeout, o.opts.Questions.Timeout; a > 0 && q > 0 {
		return max(a, q) + o.opts.LockTTL
	}
	return 30 * 24 * time.Hour
}

// suspendRun ends the execution of a run whose loop returned waiting: its
// heartbeat stops, its locks are extended for the wait, and the wait is
// stored with everything that goes with it in one write (storePause);
// only then does the run show waiting_approval, so a claimant resuming it
// continues after every event of this execution. The slot goes to the
// queue once the wait is stored, before anyone here sees the run waiting.
func (o *Orchestrator) suspendRun(lr *liveRun, out outcome) {
	done := make(chan struct{})
	defer close(done)
	lr.update(func(*Run) { lr.suspended = done })
	lr.cancel()
	<-lr.hbDone
	ctx := context.Background()
	if r := lr.snapshot(); r.State == RunCancelling {
		o.complete(lr, outcome{stop: StopCancelled, state: RunCancelled, usage: out.usage}, true)
		return
	}
	if lr.abortErr() != nil || lr.isLost() || lr.log.err() != nil {
		o.complete(lr, out, true)
		return
	}
	for _, k := range lr.locks {
		if err := o.acquireLock(ctx, k, lr.id, o.waitTTL()); err != nil {
			o.log.Warn("lock of a waiting run not extended", "key", k, "run_id", lr.id, "err", err)
		}
	}
	// freeSlot hands the slot to the queue: the execution is over.
	slotFreed := false
	freeSlot := func() {
		slotFreed = true
		o.mu.Lock()
		o.active--
		next := o.nextLocked()
		o.mu.Unlock()
		if next != nil {
			o.launch(next)
		}
	}
	// A cancel that comes while the wait is stored sets cancelling on the
	// live run (not moved: the wait is stored, not shown); one that comes
	// after finds it waiting (cancelLive).
	r, moved, err := o.transition(ctx, change{lr: lr, from: RunRunning, to: out.state,
		set: func(r *Run) { r.Pending, r.Usage = out.pause.round, out.usage },
		store: func(ctx context.Context, r *Run) error {
			// The execution's end is observed before the wait is
			// announced: whoever decides it (and so starts the
			// resumption) learned of it from the announcement.
			observed := func() { lr.observedEnd(RunEnd{State: out.state, Usage: out.usage}) }
			if err := o.storePause(lr, r, out.pause, observed); err != nil {
				return err
			}
			freeSlot()
			return nil
		}})
	if !slotFreed {
		freeSlot()
	}
	lr.observedEnd(RunEnd{State: out.state, Usage: out.usage})
	if err != nil {
		// Nothing of the wait is stored: the run is stored running, owned
		// by this instance, with the events of its last stored round; the
		// reaper finds it executing nowhere and resumes it (or ends it)
		// like any interrupted run.
		o.log.Error("waiting state not stored", "run_id", lr.id, "err", err)
	}
	o.mu.Lock()
	if o.live[lr.id] == lr {
		delete(o.live, lr.id)
	}
	o.mu.Unlock()
	o.follow.wake(lr.id)
	if err != nil {
		return
	}
	cancelled := err == nil && !moved
	if cancelled {
		// Stored waiting, asked to stop: end it as Cancel ends a waiting run.
		if err := o.endWaiting(ctx, r, outcome{stop: StopCancelled, state: RunCancelled, usage: r.Usage}); err != nil && !errors.Is(err, ErrConflict) {
			o.log.Error("run cancelled while it suspended not ended; it stays waiting", "run_id", lr.id, "err", err)
		}
		return
	}
	o.watchExpiry(lr.id, out.pause.approvals)
	// A decision may have come while the run was suspending.
	if err := o.resumeIfReady(ctx, lr.id); err != nil {
		o.log.Warn("waiting run not resumed", "run_id", lr.id, "err", err)
	}
}

// watchExpiry resumes the run when the first of its approvals (and
// questions) times out; resumeIfReady then sets the next timer.
func (o *Orchestrator) watchExpiry(runID string, approvals []*Approval) {
	var first *time.Time
	for _, a := range approvals {
		if a.State == ApprovalPending && a.ExpiresAt != nil && (first == nil || a.ExpiresAt.Before(*first)) {
			first = a.ExpiresAt
		}
	}
	if first == nil {
		return
	}
	t := max(first.Sub(o.opts.Now()), 0)
	// Tracked with the reaper: Close stops it first (a run waits longer
	// than a server lives; the reaper of the next one takes over).
	o.reaperWG.Go(func() {
		timer := time.NewTimer(t)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-o.reaperStop:
			return
		}
		ctx, cancel := context.WithTimeout(o.baseCtx, o.opts.LockTTL)
		defer cancel()
		if err := o.resumeIfReady(ctx, runID); err != nil && !errors.Is(err, ErrConflict) {
			o.log.Warn("expired approvals not applied", "run_id", runID, "err", err)
		}
	})
}
