package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// PendingApproval is an approval a waiting run asks for, as wunder@run and
// wunder@approve report it (the approval_required event's fields).
type PendingApproval struct {
	ApprovalID string `json:"approval_id"`
	// Kind is authorization (may the call run?) or param_required (the
	// call lacks arguments; Missing is their JSON Schema).
	Kind      string     `json:"kind"`
	Tool      string     `json:"tool"`
	Arguments any        `json:"arguments"`
	Reason    string     `json:"reason"`
	Decisions []string   `json:"decisions"`
	Missing   any        `json:"missing,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// answer is a tool call's answer: what a typed tool handler returns.
type answer struct {
	res *mcp.CallToolResult
	out RunOutput
	err error
}

func (a *answer) unpack() (*mcp.CallToolResult, RunOutput, error) { return a.res, a.out, a.err }

func (f *follower) failedAnswer(err error) *answer {
	res, out, err := f.failed(err)
	return &answer{res, out, err}
}

// failed is the answer of a core error, in the caller's language.
func (f *follower) failed(err error) (*mcp.CallToolResult, RunOutput, error) {
	return failed(f.h.langOf(f.req.Extra), err)
}

// follower follows one run for one tool call (wunder@run, wunder@approve)
// through its event log to the final event, and answers the call with the
// run's answer. When the run waits for approvals it asks the caller
// through elicitation/create, one approval after another, records the
// decisions and follows on; a caller that cannot be asked gets, at once,
// a result that lists what is pending (state waiting_approval).
type follower struct {
	h                      *Handler
	req                    *mcp.CallToolRequest
	user, runID, sessionID string
	// quietUntil names the approval wunder@approve decided: it replays the
	// log from the start, and sends no progress for the events up to that
	// approval's approval_required and the approval_required events right
	// after it (its round's).
	quietUntil string
	// settled are the approvals known to be decided.
	settled map[string]bool
}

// follow follows the run to its final event and answers the call.
func (f *follower) follow(ctx context.Context) (*mcp.CallToolResult, RunOutput, error) {
	f.settled = map[string]bool{}
	token := f.req.Params.GetProgressToken()
	quiet, passed := f.quietUntil != "", false
	n := 0
	for ev, err := range f.h.b.Events(ctx, f.user, f.runID, 0) {
		if err != nil {
			if ctx.Err() != nil {
				return f.abandon(ctx).unpack()
			}
			return f.failed(err)
		}
		n++
		var approval orchestrator.ApprovalRequiredData
		if ev.Type == orchestrator.EventApprovalRequired {
			_ = json.Unmarshal(ev.Data, &approval)
			passed = passed || approval.ApprovalID == f.quietUntil
		} else if passed {
			quiet = false
		}
		if token != nil && !quiet && ev.Type != orchestrator.EventFinal {
			_ = f.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: progressMessage(ev),
			})
		}
		switch ev.Type {
		case orchestrator.EventApprovalRequired:
			if ans := f.onApprovalRequired(ctx, approval.ApprovalID, ev.Seq); ans != nil {
				return ans.unpack()
			}
		case orchestrator.EventFinal:
			return f.final(ev).unpack()
		}
	}
	if ctx.Err() != nil {
		return f.abandon(ctx).unpack()
	}
	return f.failed(fmt.Errorf("%w: the event log of run %s ended without a final event", orchestrator.ErrUnavailable, f.runID))
}

// abandon cancels the run of a call its caller cancelled (or left).
func (f *follower) abandon(ctx context.Context) *answer {
	_, _ = f.h.b.Cancel(context.WithoutCancel(ctx), f.user, f.runID)
	return &answer{err: ctx.Err()}
}

// final is the answer of a run's final event.
func (f *follower) final(ev orchestrator.Event) *answer {
	var fd orchestrator.FinalData
	if err := json.Unmarshal(ev.Data, &fd); err != nil {
		return f.failedAnswer(fmt.Errorf("final event: %w", err))
	}
	out := RunOutput{Answer: fd.Answer, SessionID: f.sessionID, RunID: f.runID, State: fd.State, Usage: &fd.Usage, StopReason: string(fd.StopReason)}
	text, _ := json.Marshal(out)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	if fd.State != orchestrator.RunFinished {
		res.IsError = true
		res.Content = append(res.Content, &mcp.TextContent{Text: "run " + string(fd.State) + ": " + fd.Error})
	}
	return &answer{res: res, out: out}
}

// onApprovalRequired handles the approval_required event at seq: when its
// approval is still pending, the run waits (or is about to) for it and
// the other approvals of its round, stored before the first of their
// events. It returns nil to follow on.
func (f *follower) onApprovalRequired(ctx context.Context, approvalID string, seq int64) *answer {
	if approvalID == "" || f.settled[approvalID] {
		return nil
	}
	pending, err := f.pending(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return f.abandon(ctx)
		}
		return f.failedAnswer(err)
	}
	if !slices.ContainsFunc(pending, func(a *orchestrator.Approval) bool { return a.ID == approvalID }) {
		return nil // decided meanwhile (by this call, another client or the timeout)
	}
	if !f.h.canElicit(f.req.Session) {
		// Answered once the wait is stored, so the answer is what GetRun
		// says; a run decided and resumed meanwhile is followed on.
		r, err := f.h.b.Settled(ctx, f.user, f.runID)
		if err != nil {
			if ctx.Err() != nil {
				return f.abandon(ctx)
			}
			return f.failedAnswer(err)
		}
		if r.State != orchestrator.RunWaitingApproval {
			return nil
		}
		if pending, err = f.pending(ctx); err != nil {
			return f.failedAnswer(err)
		}
		return f.waiting(pending, "")
	}
	return f.elicitAll(ctx, pending, seq)
}

// pending lists the run's pending approvals, noting the decided ones.
func (f *follower) pending(ctx context.Context) ([]*orchestrator.Approval, error) {
	list, err := f.h.b.Approvals(ctx, f.user, f.runID)
	if err != nil {
		return nil, err
	}
	var pending []*orchestrator.Approval
	for _, a := range list {
		if a.State == orchestrator.ApprovalPending {
			pending = append(pending, a)
		} else {
			f.settled[a.ID] = true
		}
	}
	return pending, nil
}

// waiting answers that the run waits for the pending approvals: text a
// model can act on, and the structured list. A problem (why asking the
// caller failed) makes it an error result.
func (f *follower) waiting(pending []*orchestrator.Approval, problem string) *answer {
	out := RunOutput{SessionID: f.sessionID, RunID: f.runID, State: orchestrator.RunWaitingApproval}
	var b strings.Builder
	if problem != "" {
		b.WriteString(problem + "\n\n")
	}
	fmt.Fprintf(&b, "Run %s waits for a person's decision on %d tool call(s):\n", f.runID, len(pending))
	for _, a := range pending {
		p := PendingApproval{ApprovalID: a.ID, Kind: a.Kind, Tool: a.Tool, Reason: a.Reason, Decisions: a.Decisions, ExpiresAt: a.ExpiresAt}
		_ = json.Unmarshal(a.Arguments, &p.Arguments)
		if len(a.Missing) > 0 {
			_ = json.Unmarshal(a.Missing, &p.Missing)
		}
		out.Approvals = append(out.Approvals, p)
		fmt.Fprintf(&b, "- approval %s (%s): %s %s; %s; decisions: %s\n", a.ID, a.Kind, a.Tool, orchestrator.ClipText(string(a.Arguments), 500), a.Reason, strings.Join(a.Decisions, ", "))
	}
	fmt.Fprintf(&b, "Decide each with %s {run_id, approval_id, decision, arguments?, reason?}; it then follows the run like %s.",
		f.h.approveName(), f.h.runName())
	text, _ := json.Marshal(out)
	res := &mcp.CallToolResult{IsError: problem != "", Content: []mcp.Content{
		&mcp.TextContent{Text: b.String()}, &mcp.TextContent{Text: string(text)},
	}}
	return &answer{res: res, out: out}
}
