package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
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

// ApprovalState is the state of an approval: pending until decided.
type ApprovalState string

// Approval states.
const (
	ApprovalPending   ApprovalState = "pending"
	ApprovalApproved  ApprovalState = "approved"
	ApprovalEdited    ApprovalState = "edited"
	ApprovalRejected  ApprovalState = "rejected"
	ApprovalCancelled ApprovalState = "cancelled"
)

// Decisions a person can take.
const (
	DecisionApprove = "approve"
	DecisionEdit    = "edit"
	DecisionReject  = "reject"
	DecisionCancel  = "cancel"
)

// Interrupt kinds (as WINS Agent has them).
const (
	// KindAuthorization asks whether a call may run.
	KindAuthorization = "authorization"
	// KindParamRequired asks for arguments the model left out; Missing is
	// their JSON Schema.
	KindParamRequired = "param_required"
)

// Approval modes of a run (RunRequest.ApprovalMode).
const (
	// ApprovalSuggest: every tool that changes things asks.
	ApprovalSuggest = "suggest"
	// ApprovalAutoEdit: file edits go, other tools that change things ask.
	ApprovalAutoEdit = "auto_edit"
	// ApprovalFullAuto: nothing asks but what the policy names.
	ApprovalFullAuto = "full_auto"
)

// Execution marks of an approved call (Approval.Execution).
const (
	ExecutionStarted = "started"
	ExecutionDone    = "done"
)

// DecidedByTimeout is Approval.Decision.By when approvals.timeout_s decided.
const DecidedByTimeout = "timeout"

// Approval is one call waiting for (or given) a person's decision.
type Approval struct {
	ID        string          `json:"approval_id"`
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	UserID    string          `json:"user_id"`
	Round     int             `json:"round"`
	CallID    string          `json:"call_id"`
	Kind      string          `json:"kind"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	// Missing is the JSON Schema of the arguments a param_required
	// approval asks for.
	Missing   json.RawMessage `json:"missing,omitempty"`
	Decisions []string        `json:"decisions"`
	State     ApprovalState   `json:"state"`
	// Decision is set once decided.
	Decision *ApprovalDecision `json:"decision,omitempty"`
	// Execution is "", started or done (see the package's approval notes);
	// Result is the call's result once done.
	Execution string          `json:"execution,omitempty"`
	Result    *ApprovalResult `json:"result,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt *time.Time      `json:"expires_at,omitempty"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
}

// ApprovalDecision is a person's answer to an approval.
type ApprovalDecision struct {
	Decision string `json:"decision"`
	// Arguments of an edit: they replace the model's (authorization) or
	// complete them (param_required).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Reason of a reject (the model reads it) or a cancel.
	Reason string `json:"reason,omitempty"`
	// By is who decided: a user id, or "timeout".
	By string `json:"decided_by,omitempty"`
}

// ApprovalResult is the result of an approved call, kept so it is never
// run twice.
type ApprovalResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// ApprovalRequiredData is the payload of approval_required.
type ApprovalRequiredData struct {
	ApprovalID string          `json:"approval_id"`
	Kind       string          `json:"kind"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason"`
	Decisions  []string        `json:"decisions"`
	Missing    json.RawMessage `json:"missing,omitempty"`
	CallID     string          `json:"call_id"`
	Round      int             `json:"round"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
}

// ApprovalDecidedData is the payload of approval_decided, emitted when the
// run goes on after its approvals were decided.
type ApprovalDecidedData struct {
	ApprovalID string          `json:"approval_id"`
	Tool       string          `json:"tool"`
	State      ApprovalState   `json:"state"`
	Decision   string          `json:"decision"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	By         string          `json:"decided_by,omitempty"`
}

// Event types of approvals.
const (
	EventApprovalRequired = "approval_required"
	EventApprovalDecided  = "approval_decided"
)

// PendingRound is a suspended round as the run keeps it (Run.Pending):
// the model's answer and its calls, resolved, each with its approval when
// it has one.
type PendingRound struct {
	Round            int               `json:"round"`
	Content          string            `json:"content,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	Calls            []PendingToolCall `json:"calls"`
	// Locks are the run's lock keys, kept through the wait so the
	// instance that resumes it renews exactly these.
	Locks []string `json:"locks,omitempty"`
}

// PendingToolCall is one call of a suspended round.
type PendingToolCall struct {
	Call       ToolCall `json:"call"`
	Err        string   `json:"error,omitempty"`
	ApprovalID string   `json:"approval_id,omitempty"`
	// Denied: the policy refused the call (Err says why).
	Denied bool `json:"denied,omitempty"`
}

// ApprovalPolicy says which calls need a person's decision; Options.Approvals.
type ApprovalPolicy struct {
	// Tools always ask, read-only or not: canonical names or path.Match
	// globs ("execute_command", "*@*").
	Tools []string
	// AllTools: every tool that is not read-only asks.
	AllTools bool
	// Mode is the approval mode of runs that do not choose one: suggest,
	// auto_edit or full_auto (default).
	Mode string
	// Timeout decides an approval nobody decided after it; 0 means one
	// hour, negative never.
	Timeout time.Duration
	// OnTimeout is the decision then: reject (default) or cancel.
	OnTimeout string
}

func (p ApprovalPolicy) withDefaults() ApprovalPolicy {
	if p.Mode == "" {
		p.Mode = ApprovalFullAuto
	}
	if p.Timeout == 0 {
		p.Timeout = time.Hour
	}
	if p.OnTimeout == "" {
		p.OnTimeout = DecisionReject
	}
	return p
}

// CheckApprovalMode validates an approval mode ("" = the policy's).
func CheckApprovalMode(mode string) error {
	switch mode {
	case "", ApprovalSuggest, ApprovalAutoEdit, ApprovalFullAuto:
		return nil
	}
	return invalidf("approval_mode must be %q, %q or %q, got %q", ApprovalSuggest, ApprovalAutoEdit, ApprovalFullAuto, mode)
}

// SchemaValidator validates a value against a JSON Schema (cmd/wunder
// wires github.com/google/jsonschema-go); Options.Schemas.
type SchemaValidator interface {
	Validate(schema, value json.RawMessage) error
}

func matchesAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, err := path.Match(p, name)
		return p == name || (err == nil && ok)
	})
}

// ask is one call of a round that needs a decision.
type ask struct {
	index   int
	kind    string
	reason  string
	missing json.RawMessage
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
		switch d.Verdict {
		case VerdictDeny:
			c.deny(d.Reason)
		case VerdictNeedsApproval:
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
	if kind == KindParamRequired {
		return []string{DecisionEdit, DecisionReject, DecisionCancel}
	}
	return []string{DecisionApprove, DecisionEdit, DecisionReject, DecisionCancel}
}

// suspend stores the approvals of a round and its calls, emits
// approval_required for each, and returns the outcome that makes launch
// suspend the run (see suspendRun).
func (l *loop) suspend(ctx context.Context, resp *ModelResponse, calls []pendingCall, asks []ask) outcome {
	o, lr := l.o, l.lr
	now := o.opts.Now()
	var expires *time.Time
	if t := o.opts.Approvals.Timeout; t > 0 {
		e := now.Add(t)
		expires = &e
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
			Missing: a.missing, Decisions: decisionsFor(a.kind), State: ApprovalPending, CreatedAt: now, ExpiresAt: expires}
		approvals[i] = ap
		pending.Calls[a.index].ApprovalID = ap.ID
	}
	lr.asked.Store(true) // before the store has them: see noApprovals
	err := o.retry(context.WithoutCancel(ctx), "store approvals", func(ctx context.Context) error {
		return o.store.CreateApprovals(ctx, approvals)
	})
	if err != nil {
		return l.fail(ctx, "store", fmt.Errorf("store approvals: %w", err))
	}
	// The round is stored with the run before anyone hears of it: if this
	// process dies before the wait is stored, the reaper finds the round
	// and its pending approvals and makes the run wait (recoverRun).
	r := lr.update(func(r *Run) { r.Pending = pending; r.Usage = l.usage })
	err = o.retry(context.WithoutCancel(ctx), "store the waiting round", func(ctx context.Context) error { return o.store.UpdateRun(ctx, &r) })
	if err != nil {
		return l.fail(ctx, "store", fmt.Errorf("store the waiting round: %w", err))
	}
	for _, ap := range approvals {
		l.log.emit(EventApprovalRequired, ApprovalRequiredData{ApprovalID: ap.ID, Kind: ap.Kind, Tool: ap.Tool, Arguments: ap.Arguments,
			Reason: ap.Reason, Decisions: ap.Decisions, Missing: ap.Missing, CallID: ap.CallID, Round: ap.Round, ExpiresAt: ap.ExpiresAt})
	}
	return outcome{state: RunWaitingApproval, usage: l.usage}
}

// waitTTL is how long a waiting run's locks are kept: until its approvals
// expire (plus the lock TTL), or a long time when they never do.
func (o *Orchestrator) waitTTL() time.Duration {
	if t := o.opts.Approvals.Timeout; t > 0 {
		return t + o.opts.LockTTL
	}
	return 30 * 24 * time.Hour
}

// suspendRun ends the execution of a run whose loop returned waiting: its
// heartbeat stops, its locks are extended for the wait, its log is
// flushed, and only then is the run stored as waiting_approval, so a claimant
// resuming it continues after every event of this execution. The slot
// goes to the queue.
func (o *Orchestrator) suspendRun(lr *liveRun, out outcome) {
	done := make(chan struct{})
	defer close(done)
	lr.update(func(*Run) { lr.suspended = done })
	lr.cancel()
	<-lr.hbDone
	ctx := context.Background()
	if r := lr.snapshot(); r.State == RunCancelling {
		o.complete(lr, outcome{stop: StopCancelled, state: RunCancelled, usage: out.usage}, true)
		o.closeApprovals(ctx, lr.id, "the run was cancelled")
		return
	}
	if lr.abortErr() != nil || lr.isLost() {
		o.complete(lr, out, true)
		return
	}
	for _, k := range lr.locks {
		if err := o.acquireLock(ctx, k, lr.id, o.waitTTL()); err != nil {
			o.log.Warn("lock of a waiting run not extended", "key", k, "run_id", lr.id, "err", err)
		}
	}
	lr.log.close()
	if lr.log.err() != nil {
		o.complete(lr, out, true)
		return
	}
	// Its execution is over: the slot goes to the queue before the wait is
	// stored, so whoever sees the run waiting finds the slot free.
	o.mu.Lock()
	o.active--
	next := o.nextLocked()
	o.mu.Unlock()
	if next != nil {
		o.launch(next)
	}
	// Stored first, shown after: GetRun says waiting_approval only once a
	// restarted server would say so too.
	// A cancel that came since the check above set cancelling on the live
	// run (not moved: the wait is stored, not shown); one that comes after
	// this finds it waiting (cancelLive).
	r, moved, err := o.transition(ctx, change{lr: lr, from: RunRunning, to: RunWaitingApproval,
		set: func(r *Run) { r.LastSeq = lr.log.visibleSeq() },
		store: func(ctx context.Context, r *Run) error {
			return o.retry(ctx, "store the run's wait", func(ctx context.Context) error { return o.store.UpdateRun(ctx, r) })
		}})
	cancelled := err == nil && !moved
	lr.observedEnd(RunEnd{State: RunWaitingApproval, Usage: out.usage})
	if err != nil {
		// The events are stored, the state is not: the reaper finds a
		// running run of this instance that executes nowhere and ends it
		// (or resumes it) like any interrupted run.
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
	if cancelled {
		// Stored waiting, asked to stop: end it as Cancel ends a waiting run.
		if err := o.endWaiting(ctx, r, outcome{stop: StopCancelled, state: RunCancelled, usage: r.Usage}); err != nil && !errors.Is(err, ErrConflict) {
			o.log.Error("run cancelled while it suspended not ended; it stays waiting", "run_id", lr.id, "err", err)
		}
		return
	}
	o.watchExpiry(lr.id, r.Pending)
	// A decision may have come while the run was suspending.
	if err := o.resumeIfReady(ctx, lr.id); err != nil {
		o.log.Warn("waiting run not resumed", "run_id", lr.id, "err", err)
	}
}

// watchExpiry resumes the run when its approvals time out.
func (o *Orchestrator) watchExpiry(runID string, p *PendingRound) {
	t := o.opts.Approvals.Timeout
	if t <= 0 || p == nil {
		return
	}
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
	switch d.Decision {
	case DecisionApprove:
		state, d.Arguments = ApprovalApproved, nil
	case DecisionReject:
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
	if err != nil || r.State != RunWaitingApproval {
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
	pending, cancelled, why := 0, false, ""
	for _, a := range approvals {
		if a.State == ApprovalPending && a.ExpiresAt != nil && !now.Before(*a.ExpiresAt) {
			d := ApprovalDecision{Decision: o.opts.Approvals.OnTimeout, By: DecidedByTimeout, Reason: "nobody decided in time"}
			a.State, a.Decision, a.DecidedAt = ApprovalRejected, &d, &now
			if d.Decision == DecisionCancel {
				a.State = ApprovalCancelled
			}
			if err := o.store.UpdateApproval(ctx, a, ApprovalPending, ""); err != nil && !errors.Is(err, ErrConflict) {
				return err
			} else if err != nil {
				if a, err = o.store.GetApproval(ctx, runID, a.ID); err != nil {
					return err
				}
			}
		}
		switch a.State {
		case ApprovalPending:
			pending++
		case ApprovalCancelled:
			cancelled = true
			if a.Decision != nil && a.Decision.Reason != "" {
				why = a.Decision.Reason
			}
		}
	}
	switch {
	case pending > 0:
		return nil
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
	if err := o.resumeDecided(ctx, claimed); err != nil {
		o.log.Warn("decided run cannot go on; ending it", "run_id", runID, "err", err)
		o.releaseKeys(claimed.Pending.Locks, runID)
		return o.endStored(ctx, claimed, outcome{stop: StopError, state: RunFailed, usage: claimed.Usage, errMsg: "not resumed: " + err.Error()}, nil)
	}
	return nil
}

// resumeDecided executes a claimed run whose approvals are decided, here,
// through the ordinary admission; its locks are the ones it kept.
func (o *Orchestrator) resumeDecided(ctx context.Context, r *Run) error {
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
	lr.resumed, lr.decided = true, true
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

// resuspend makes an orphan wait again when its process died while it was
// suspending: the round and approvals it stored are pending, so the person
// who was asked can still decide. It reports whether it did.
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
	_, _, err = o.transition(ctx, change{run: r, to: RunWaitingApproval, set: func(r *Run) { r.LastSeq = seq },
		store: func(ctx context.Context, r *Run) error {
			return o.retry(ctx, "store the run's wait", func(ctx context.Context) error { return o.store.UpdateRun(ctx, r) })
		}})
	if err != nil {
		return false, err
	}
	o.watchExpiry(r.ID, r.Pending)
	if err := o.resumeIfReady(ctx, r.ID); err != nil {
		o.log.Warn("waiting run not resumed", "run_id", r.ID, "err", err)
	}
	return true, nil
}
