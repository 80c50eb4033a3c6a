package orchestrator

import (
	"context"
	"fmt"
)

// The loop's side of approvals: finishing a round that waited.

// finishPending runs the round a run suspended, with its decisions
// applied, and stores it. It returns the history with the round, or the
// outcome that ends the run.
func (l *loop) finishPending(ctx context.Context, msgs []Message, p *PendingRound) ([]Message, *outcome) {
	lr, o := l.lr, l.o
	var approvals []*Approval
	err := o.retry(ctx, "read approvals", func(ctx context.Context) (err error) {
		approvals, err = o.store.ListApprovals(ctx, lr.id)
		return err
	})
	if err != nil {
		out := l.fail(ctx, "store", fmt.Errorf("read approvals: %w", err))
		return msgs, &out
	}
	byID := map[string]*Approval{}
	for _, a := range approvals {
		if a.Round == p.Round {
			byID[a.ID] = a
			if a.State == ApprovalCancelled {
				// Only a run resumed after a crash meets this: a decided
				// cancel ends the run where it is recorded.
				out := l.cancelled()
				return msgs, &out
			}
		}
	}
	// The selection the round was made with (loaded skills bring tools).
	msgs[0].Content, l.sel = o.promptSelection(ctx, l.pp, msgs)
	resp := &ModelResponse{Content: p.Content, ReasoningContent: p.ReasoningContent}
	assistant := Message{Role: RoleAssistant, Content: p.Content, ReasoningContent: p.ReasoningContent, RunID: lr.id, CreatedAt: o.opts.Now()}
	calls := make([]pendingCall, len(p.Calls))
	for i, pc := range p.Calls {
		c := pendingCall{call: pc.Call, err: pc.Err, denied: pc.Denied}
		if c.err == "" {
			if t, ok := l.sel.Lookup(c.call.Name); ok {
				c.tool = t
			} else {
				c.err = fmt.Sprintf("tool %s is no longer available", c.call.Name)
			}
		}
		if lr.mode == ModeFunctionCall {
			assistant.ToolCalls = append(assistant.ToolCalls, pc.Call) // as the model asked
		}
		if pc.ApprovalID != "" {
			c = l.applyDecision(c, byID[pc.ApprovalID])
		}
		calls[i] = c
	}
	msgs, stop := l.endRound(ctx, msgs, resp, assistant, calls)
	lr.update(func(r *Run) { r.Pending = nil })
	return msgs, stop
}

// applyDecision turns a decided approval into how its call goes: run
// (with the person's arguments after an edit), or a result it gets
// without running.
func (l *loop) applyDecision(c pendingCall, a *Approval) pendingCall {
	if a == nil {
		c.preset = ErrorResult("this call's approval was not found; it did not run")
		return c
	}
	d := ApprovalDecision{}
	if a.Decision != nil {
		d = *a.Decision
	}
	if a.Kind == KindQuestion {
		l.log.emit(EventUserInputAnswered, UserInputAnsweredData{QuestionID: a.ID, Answer: d.Answer, By: d.By, Declined: a.State != ApprovalAnswered})
		if a.State != ApprovalAnswered {
			msg := "The user declined to answer this question."
			if d.Reason != "" {
				msg += " They said: " + d.Reason
			}
			c.preset = ErrorResult(msg)
			return c
		}
		c.preset = answerResult(a)
		return c
	}
	l.log.emit(EventApprovalDecided, ApprovalDecidedData{ApprovalID: a.ID, Tool: a.Tool, State: a.State, Decision: d.Decision,
		Arguments: d.Arguments, Reason: d.Reason, By: d.By})
	switch a.State {
	case ApprovalApproved, ApprovalEdited:
		if a.State == ApprovalEdited && len(d.Arguments) > 0 {
			c.call.Arguments = d.Arguments
			c.note = fmt.Sprintf("(The user changed the arguments of this call before it ran; it ran with %s.)\n", d.Arguments)
		}
		switch a.Execution {
		case ExecutionDone:
			if a.Result != nil {
				c.preset = &ToolResult{Content: a.Result.Content, IsError: a.Result.IsError}
			} else {
				c.preset = &ToolResult{}
			}
		case ExecutionStarted:
			c.preset = ErrorResult("this call was started, but the server stopped before its result was stored: whether it took effect is unknown, and it is not run again")
		default:
			c.approval = a
		}
	case ApprovalRejected:
		c.denied = true
		msg := "The user rejected this call; it did not run."
		if d.By == DecidedByTimeout {
			msg = "Nobody approved this call in time; it did not run."
		}
		if d.Reason != "" {
			msg += " Reason: " + d.Reason
		}
		c.preset = ErrorResult(msg)
	default:
		c.preset = ErrorResult("this call was not approved; it did not run")
	}
	return c
}

// callApproved runs an approved call exactly once: marked started in the
// store before, done with its result after.
func (l *loop) callApproved(ctx context.Context, c pendingCall) *ToolResult {
	o := l.o
	started := *c.approval
	started.Execution = ExecutionStarted
	err := o.retry(ctx, "mark an approved call started", func(ctx context.Context) error {
		return o.store.UpdateApproval(ctx, &started, c.approval.State, "")
	})
	if err != nil {
		res := ErrorResult("not run: its approval could not be recorded as started: " + err.Error())
		l.reportResult(c, res, 0)
		return res
	}
	res := l.callTool(ctx, c)
	done := started
	done.Execution, done.Result = ExecutionDone, &ApprovalResult{Content: res.Content, IsError: res.IsError}
	err = o.retry(context.WithoutCancel(ctx), "store an approved call's result", func(ctx context.Context) error {
		return o.store.UpdateApproval(ctx, &done, c.approval.State, ExecutionStarted)
	})
	if err != nil {
		o.log.Warn("result of an approved call not stored; a resumed run reports its outcome unknown", "run_id", l.lr.id, "approval_id", c.approval.ID, "err", err)
	}
	return res
}
