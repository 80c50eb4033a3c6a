package orchestrator

// Deciding approvals: a person's decision, the run's resumption on the replica
// that gets it, and the end of a run that cannot go on.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Approvals lists a run's approvals, oldest first. userID scopes the run
// ("" = any user).
func (o *Orchestrator) Approvals(ctx context.Context, userID, runID string) ([]*Approval, error) {
	if lr := o.liveRun(runID); lr != nil && visible(userID, lr.userID) && lr.noApprovals() {
		// An A2A task's every snapshot asks this of a running task; for one
		// that has not asked, reading the store was 12 % of a streamed
		// task's CPU (docs/benchmarks.md).
		return []*Approval{}, nil
	}
	if _, err := o.GetRun(ctx, userID, runID); err != nil {
		return nil, err
	}
	return o.store.ListApprovals(ctx, runID)
}

// noApprovals reports that the store holds no approval of lr: it was
// started here, not resumed (a resumed run may have decided ones), it has
// not asked (asked is set before approvals are stored, so a false read
// precedes their write), and no other instance took it over (which could
// have resumed it and asked there).
func (lr *liveRun) noApprovals() bool {
	if lr.resumed || lr.asked.Load() {
		return false
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return !lr.lost
}

// Decide records a decision on an approval and, when it was the round's
// last, resumes (or, for cancel, ends) the run. It returns the decided
// approval. userID scopes the run ("" = any user); d.By defaults to it.
//
// Errors: ErrNotFound (run or approval), ErrInvalidArgument (a decision
// the approval does not offer, edit arguments that do not fit the tool's
// schema), ErrConflict (already decided).
func (o *Orchestrator) Decide(ctx context.Context, userID, runID, approvalID string, d ApprovalDecision) (*Approval, error) {
	r, err := o.GetRun(ctx, userID, runID)
	if err != nil {
		return nil, err
	}
	if err := checkID("approval", approvalID); err != nil {
		return nil, err
	}
	a, err := o.store.GetApproval(ctx, runID, approvalID)
	if err != nil {
		return nil, err
	}
	if a.State != ApprovalPending {
		return a, fmt.Errorf("%w: approval %s is already %s", ErrConflict, approvalID, a.State)
	}
	if r.State.Terminal() {
		return a, fmt.Errorf("%w: run %s is already %s", ErrConflict, runID, r.State)
	}
	if !slices.Contains(a.Decisions, d.Decision) {
		return nil, invalidf("decision must be one of %s, got %q", strings.Join(a.Decisions, ", "), d.Decision)
	}
	if d.By == "" {
		d.By = decider(ctx, userID)
	}
	d.Reason = StoredText(strings.TrimSpace(d.Reason))
	if len(d.Reason) > 4000 {
		return nil, invalidf("reason is longer than 4000 bytes")
	}
	state := ApprovalState("")
	if d.Decision != DecisionAnswer {
		d.Answer = nil
	}
	switch d.Decision {
	case DecisionAnswer:
		q := QuestionOf(a)
		if q == nil {
			return nil, invalidf("approval %s is not a question", approvalID)
		}
		state, d.Arguments = ApprovalAnswered, nil
		if d.Answer, err = q.CheckAnswer(d.Answer); err != nil {
			return nil, err
		}
	case DecisionApprove:
		state, d.Arguments = ApprovalApproved, nil
	case DecisionReject, DecisionDecline:
		state, d.Arguments = ApprovalRejected, nil
	case DecisionCancel:
		state, d.Arguments = ApprovalCancelled, nil
	case DecisionEdit:
		state = ApprovalEdited
		if d.Arguments, err = o.editedArgs(ctx, a, d.Arguments); err != nil {
			return nil, err
		}
	}
	now := o.opts.Now()
	a.State, a.Decision, a.DecidedAt = state, &d, &now
	if err := o.store.UpdateApproval(ctx, a, ApprovalPending, ""); err != nil {
		if errors.Is(err, ErrConflict) {
			cur, gerr := o.store.GetApproval(ctx, runID, approvalID)
			if gerr == nil {
				return cur, fmt.Errorf("%w: approval %s is already %s", ErrConflict, approvalID, cur.State)
			}
		}
		return nil, err
	}
	if err := o.resumeIfReady(ctx, runID); err != nil {
		// The decision is stored: the reaper applies it when it can.
		o.log.Warn("decided run not resumed yet", "run_id", runID, "err", err)
	}
	return a, nil
}

// decider names who decides: the principal's user, "admin" for a
// credential of no user (the API key), else the user acted for.
func decider(ctx context.Context, userID string) string {
	if p, ok := PrincipalFrom(ctx); ok {
		return firstNonEmpty(p.UserID, "admin")
	}
	return firstNonEmpty(userID, "admin")
}

// editedArgs checks the arguments of an edit: a JSON object that, merged
// over the model's for param_required, fits the tool's input schema.
func (o *Orchestrator) editedArgs(ctx context.Context, a *Approval, given json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(given, &obj); err != nil || obj == nil {
		return nil, invalidf("arguments of an edit must be a JSON object")
	}
	if a.Kind == KindParamRequired {
		var base map[string]json.RawMessage
		_ = json.Unmarshal(a.Arguments, &base)
		if base == nil {
			base = map[string]json.RawMessage{}
		}
		for k, v := range obj {
			base[k] = v
		}
		obj = base
	}
	args := rawJSON(obj)
	sel, err := o.tools.Select(ctx, a.UserID, []string{a.Tool}, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: tool %s is no longer available", ErrConflict, a.Tool)
	}
	t, ok := sel.Lookup(a.Tool)
	if !ok {
		return nil, fmt.Errorf("%w: tool %s is no longer available", ErrConflict, a.Tool)
	}
	schema := t.Spec().InputSchema
	if missing := missingArgs(schema, args); missing != nil {
		return nil, invalidf("arguments lack required properties: %s", missing)
	}
	if v := o.opts.Schemas; v != nil && len(schema) > 0 {
		if err := v.Validate(schema, args); err != nil {
			return nil, invalidf("arguments do not fit the schema of %s: %v", a.Tool, err)
		}
	}
	return args, nil
}

// roundApprovals returns the approvals of a run's pending round.
func (o *Orchestrator) roundApprovals(ctx context.Context, r *Run) ([]*Approval, error) {
	all, err := o.store.ListApprovals(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	var out []*Approval
	for _, a := range all {
		if r.Pending != nil && a.Round == r.Pending.Round {
			out = append(out, a)
		}
	}
	return out, nil
}

// resumeIfReady looks at a waiting run: approvals past their time are
// decided as approvals.on_timeout says; when none is pending any more, the
// run is resumed here, or ended if one was cancelled. It does nothing for
// a run that is not waiting.
func (o *Orchestrator) resumeIfReady(ctx context.Context, runID string) error {
	r, err := o.store.GetRun(ctx, runID)
	if err != nil || !r.State.Waiting() {
		return err
	}
	if r.Pending == nil {
		return o.endWaiting(ctx, r, outcome{stop: StopError, state: RunFailed, usage: r.Usage, errMsg: "the waiting round was not stored"})
	}
	approvals, err := o.roundApprovals(ctx, r)
	if err != nil {
		return err
	}
	now := o.opts.Now()
	pending, expired, cancelled, unanswered, why := 0, 0, false, "", ""
	for i, a := range approvals {
		if a.State == ApprovalPending && a.ExpiresAt != nil && !now.Before(*a.ExpiresAt) {
			expired++
			a.Decision, a.DecidedAt = o.timeoutDecision(a), &now
			a.State = ApprovalRejected
			switch a.Decision.Decision {
			case DecisionCancel:
				a.State = ApprovalCancelled
			case DecisionAnswer:
				a.State = ApprovalAnswered
			}
			if err := o.store.UpdateApproval(ctx, a, ApprovalPending, ""); err != nil && !errors.Is(err, ErrConflict) {
				return err
			} else if err != nil {
				if a, err = o.store.GetApproval(ctx, runID, a.ID); err != nil {
					return err
				}
				approvals[i] = a
			}
		}
		switch a.State {
		case ApprovalPending:
			pending++
		case ApprovalCancelled:
			cancelled = true
			if d := a.Decision; d != nil && d.Reason != "" {
				why = d.Reason
				if a.Kind == KindQuestion && d.By == DecidedByTimeout {
					unanswered = d.Reason
				}
			}
		}
	}
	switch {
	case pending > 0:
		if expired > 0 {
			o.watchExpiry(runID, approvals) // the next one to expire
		}
		return nil
	case unanswered != "":
		return o.endWaiting(ctx, r, outcome{stop: StopError, state: RunFailed, usage: r.Usage, errMsg: unanswered})
	case cancelled:
		return o.endWaiting(ctx, r, outcome{stop: StopCancelled, state: RunCancelled, usage: r.Usage, errMsg: why})
	}
	if err := o.admissible(); err != nil {
		return err // it stays waiting; the reaper tries again
	}
	claimed, err := o.claimWaiting(ctx, r)
	if errors.Is(err, ErrConflict) {
		return nil // another instance resumed or ended it
	}
	if err != nil {
		return err
	}
	asked := slices.ContainsFunc(approvals, func(a *Approval) bool { return a.Kind == KindQuestion })
	if err := o.resumeDecided(ctx, claimed, asked); err != nil {
		o.log.Warn("decided run cannot go on; ending it", "run_id", runID, "err", err)
		o.releaseKeys(claimed.Pending.Locks, runID)
		return o.endStored(ctx, claimed, outcome{stop: StopError, state: RunFailed, usage: claimed.Usage, errMsg: "not resumed: " + err.Error()}, nil)
	}
	return nil
}

// timeoutDecision is the decision of an approval nobody decided in time:
// approvals.on_timeout's for an approval; for a question, its default
// answer, or a cancel that ends the run failed (questions.on_timeout).
func (o *Orchestrator) timeoutDecision(a *Approval) *ApprovalDecision {
	if a.Kind != KindQuestion {
		return &ApprovalDecision{Decision: o.opts.Approvals.OnTimeout, By: DecidedByTimeout, Reason: "nobody decided in time"}
	}
	q := QuestionOf(a)
	if q == nil {
		return &ApprovalDecision{Decision: DecisionCancel, By: DecidedByTimeout, Reason: "the question of call " + a.CallID + " cannot be read"}
	}
	if answer := o.opts.Questions.timeoutAnswer(q); answer != nil {
		return &ApprovalDecision{Decision: DecisionAnswer, Answer: answer, By: DecidedByTimeout}
	}
	return &ApprovalDecision{Decision: DecisionCancel, By: DecidedByTimeout,
		Reason: fmt.Sprintf("nobody answered the question %q in time (questions.timeout_s)", truncateRunes(q.Question, 200))}
}

// resumeDecided executes a claimed run whose approvals are decided, here,
// through the ordinary admission; its locks are the ones it kept. asked:
// a question of the run was answered.
func (o *Orchestrator) resumeDecided(ctx context.Context, r *Run, asked bool) error {
	o.setStoring(r.ID, true)
	defer o.setStoring(r.ID, false)
	req, x, base, err := o.resumable(ctx, r)
	if err != nil {
		return err
	}
	locks := r.Pending.Locks
	for i, k := range locks {
		if err := o.acquireLock(ctx, k, r.ID, o.opts.LockTTL); err != nil {
			o.releaseKeys(locks[:i], r.ID)
			return fmt.Errorf("lock %s: %w", k, err)
		}
	}
	lr := o.newLiveRun(req, x, locks, *r, base)
	lr.resumed, lr.decided, lr.answered = true, true, asked
	o.loadArtifacts(ctx, lr, base)
	o.observeRun(ctx, lr)
	return o.admitResumed(lr)
}

// endWaiting ends a waiting run without executing it (cancelled, or failed
// when it cannot go on): the claimant stores a final event after the last
// stored one and frees the run's locks.
func (o *Orchestrator) endWaiting(ctx context.Context, r *Run, out outcome) error {
	claimed, err := o.claimWaiting(ctx, r)
	if err != nil {
		return err
	}
	reason := "the run ended"
	if out.state == RunCancelled {
		reason = "the run was cancelled"
	}
	o.closeApprovals(ctx, r.ID, reason)
	// The locks go before the final event is stored, as in complete: a
	// client that starts the session's next run on "final" must not meet
	// this run's lock. (The run executes nowhere; if this process stops
	// before its end is stored, the reaper ends it.)
	if err := o.store.ReleaseLocksOf(ctx, r.ID); err != nil {
		o.log.Warn("locks of an ended waiting run not released; they expire", "run_id", r.ID, "err", err)
	}
	if err := o.endStored(ctx, claimed, out, nil); err != nil {
		return err
	}
	o.follow.wake(r.ID)
	return nil
}

// closeApprovals marks the pending approvals of an ended run cancelled.
func (o *Orchestrator) closeApprovals(ctx context.Context, runID, reason string) {
	all, err := o.store.ListApprovals(ctx, runID)
	if err != nil {
		o.log.Warn("approvals of an ended run not closed", "run_id", runID, "err", err)
		return
	}
	now := o.opts.Now()
	for _, a := range all {
		if a.State != ApprovalPending {
			continue
		}
		a.State, a.DecidedAt = ApprovalCancelled, &now
		a.Decision = &ApprovalDecision{Decision: DecisionCancel, Reason: reason, By: "run"}
		if err := o.store.UpdateApproval(ctx, a, ApprovalPending, ""); err != nil && !errors.Is(err, ErrConflict) {
			o.log.Warn("approval of an ended run not closed", "run_id", runID, "approval_id", a.ID, "err", err)
		}
	}
}

// resuspend makes an orphan wait again when it is stored running with a
// pending round whose approvals are pending: a process of a version
// before Store.SuspendRun stored the round and approvals first and died
// before the wait (this one stores them together, so it never leaves
// that), and the person who was asked can still decide. It reports
// whether it did.
func (o *Orchestrator) resuspend(ctx context.Context, r *Run) (bool, error) {
	if r.Pending == nil || r.State != RunRunning {
		return false, nil
	}
	approvals, err := o.roundApprovals(ctx, r)
	if err != nil {
		return false, err
	}
	if !slices.ContainsFunc(approvals, func(a *Approval) bool { return a.State == ApprovalPending }) {
		return false, nil // decided already: an interrupted run like any other
	}
	for _, k := range r.Pending.Locks {
		if err := o.acquireLock(ctx, k, r.ID, o.waitTTL()); err != nil {
			return false, fmt.Errorf("lock %s: %w", k, err)
		}
	}
	seq, err := o.lastStoredSeq(ctx, r)
	if err != nil {
		return false, err
	}
	_, _, err = o.transition(ctx, change{run: r, to: waitingState(approvals), set: func(r *Run) { r.LastSeq = seq },
		store: func(ctx context.Context, r *Run) error {
			return o.retry(ctx, "store the run's wait", func(ctx context.Context) error { return o.store.UpdateRun(ctx, r) })
		}})
	if err != nil {
		return false, err
	}
	o.watchExpiry(r.ID, approvals)
	if err := o.resumeIfReady(ctx, r.ID); err != nil {
		o.log.Warn("waiting run not resumed", "run_id", r.ID, "err", err)
	}
	return true, nil
}
