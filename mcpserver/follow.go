package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/a2ui"
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
	// pending: the answer lists what the run waits for (waiting).
	pending bool
}

func (a *answer) unpack() (*mcp.CallToolResult, RunOutput, error) { return a.res, a.out, a.err }

func (f *follower) failedAnswer(err error) *answer {
	res, out, err := f.failed(err)
	return &answer{res: res, out: out, err: err}
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
	// problems are why the last answers to input requests could not be
	// used, by approval id, and failedRounds how many rounds in a row had
	// one (input.go).
	problems     map[string]string
	failedRounds int
	// task is the MCP task whose result the follower reads (tasks.go):
	// then the run goes on when the caller leaves, a pause the caller
	// cannot decide is waited out, and the follow starts after seq from.
	task string
	from int64
}

// follow follows the run to its final event and answers the call; at
// each pause the core's Wait returns, the caller decides (onPause) and
// the run is followed on, or the call answers what is pending.
func (f *follower) follow(ctx context.Context) (*mcp.CallToolResult, RunOutput, error) {
	token := f.req.Params.GetProgressToken()
	quiet, passed := f.quietUntil != "", false
	n := 0
	progress := func(ev orchestrator.Event) error {
		n++
		if ev.Type == orchestrator.EventApprovalRequired || ev.Type == orchestrator.EventUserInputRequired {
			var ask struct {
				ApprovalID string `json:"approval_id"`
				QuestionID string `json:"question_id"`
			}
			_ = json.Unmarshal(ev.Data, &ask)
			passed = passed || cmp.Or(ask.ApprovalID, ask.QuestionID) == f.quietUntil
		} else if passed {
			quiet = false
		}
		if token != nil && !quiet && ev.Type != orchestrator.EventFinal {
			_ = f.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n), Message: progressMessage(ev),
			})
		}
		return nil
	}
	for after := f.from; ; {
		st, err := f.h.b.Wait(ctx, f.user, f.runID, after, progress)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return f.abandon(ctx).unpack()
			}
			return f.failed(err)
		case st.Paused():
			if ans := f.onPause(ctx, st); ans != nil {
				return ans.unpack()
			}
			after = st.Event.Seq
		case st.Event.Type == orchestrator.EventFinal:
			return f.final(st.Event).unpack()
		case f.task != "" && st.Run != nil && st.Run.State.Terminal():
			// Ended at or before seq from, its final event no longer
			// logged (storage.event_retention_days): the stored run says
			// the same.
			return f.finalOf(st.Run).unpack()
		default:
			return f.failed(fmt.Errorf("%w: the event log of run %s ended without a final event", orchestrator.ErrUnavailable, f.runID))
		}
	}
}

// abandon cancels the run of a call its caller cancelled (or left); a
// task's run goes on (tasks/cancel cancels it).
func (f *follower) abandon(ctx context.Context) *answer {
	if f.task == "" {
		_, _ = f.h.b.Cancel(context.WithoutCancel(ctx), f.user, f.runID)
	}
	return &answer{err: ctx.Err()}
}

// final is the answer of a run's final event.
func (f *follower) final(ev orchestrator.Event) *answer {
	var fd orchestrator.FinalData
	if err := json.Unmarshal(ev.Data, &fd); err != nil {
		return f.failedAnswer(fmt.Errorf("final event: %w", err))
	}
	return f.finalData(fd)
}

// finalOf is the answer of an ended run as stored.
func (f *follower) finalOf(r *orchestrator.Run) *answer {
	return f.finalData(orchestrator.FinalData{Answer: r.Answer, State: r.State, Usage: r.Usage, StopReason: r.StopReason, Error: r.Error})
}

// finalData is the answer of a run that ended so.
func (f *follower) finalData(fd orchestrator.FinalData) *answer {
	out := RunOutput{Answer: fd.Answer, SessionID: f.sessionID, RunID: f.runID, State: fd.State, Usage: &fd.Usage, StopReason: string(fd.StopReason)}
	text, _ := json.Marshal(out)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
	if fd.State != orchestrator.RunFinished {
		res.IsError = true
		res.Content = append(res.Content, &mcp.TextContent{Text: "run " + string(fd.State) + ": " + fd.Error})
	}
	for _, ad := range fd.Artifacts {
		res.Content = append(res.Content, f.h.artifactContent(f.user, ad))
	}
	for _, ud := range fd.A2UI {
		// A2UI "delivered as tool output": the messages, marked as A2UI
		// data, for a client that renders them.
		res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "wunder://a2ui/" + ud.ID, MIMEType: a2ui.MIMEType, Text: string(ud.Messages)}})
	}
	return &answer{res: res, out: out}
}

// artifactContent is a run's artifact (orchestrator/artifact.go) as MCP
// content: a small file embedded with its bytes, a larger one as a
// resource link to GET /wunder/workspace/download (absolute under
// PublicURL; the caller fetches it with their own credentials), a JSON
// value embedded as application/json text.
func (h *Handler) artifactContent(user string, ad orchestrator.ArtifactData) mcp.Content {
	q := url.Values{"path": {ad.Path}}
	if user != "" {
		q.Set("user_id", user)
	}
	download := strings.TrimSuffix(h.opts.PublicURL, "/") + "/wunder/workspace/download?" + q.Encode()
	switch {
	case ad.Kind == orchestrator.ArtifactFile && ad.Bytes != nil:
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: download, MIMEType: ad.MediaType, Blob: ad.Bytes}}
	case ad.Kind == orchestrator.ArtifactFile:
		size := ad.Size
		return &mcp.ResourceLink{URI: download, Name: ad.Name, Description: ad.Description, MIMEType: ad.MediaType, Size: &size}
	}
	return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "wunder://artifact/" + ad.ArtifactID, MIMEType: "application/json", Text: string(ad.Data)}}
}

// onPause answers the call of a paused run p (stored so: the answer is
// what GetRun says), or returns nil to follow on: a caller that can be
// asked decides the approvals by elicitation; any other is answered at
// once with what is pending. A caller of revision 2026-07-28 is asked with
// an input-required result (input.go).
func (f *follower) onPause(ctx context.Context, p orchestrator.Waited) *answer {
	if f.task != "" {
		// A task's result waits for the run's end: a caller that can be
		// asked decides by elicitation, and the pause of one that cannot
		// (or did not answer) is decided elsewhere (wunder@approve, the
		// console).
		if len(p.Approvals) > 0 && f.h.canElicit(f.req.Session) {
			if ans := f.elicitAll(ctx, p.Approvals, p.Event.Seq); ans != nil && !ans.pending {
				return ans
			}
		}
		return nil
	}
	if len(p.Approvals) > 0 {
		switch {
		case f.h.canElicit(f.req.Session):
			return f.elicitAll(ctx, p.Approvals, p.Event.Seq)
		case f.h.canAskInput(f.req.Session):
			return f.inputRequired(p.Approvals)
		}
	}
	return f.waiting(p.Run.State, p.Approvals, "")
}

// pending lists the run's pending approvals.
func (f *follower) pending(ctx context.Context) ([]*orchestrator.Approval, error) {
	list, err := f.h.b.Approvals(ctx, f.user, f.runID)
	if err != nil {
		return nil, err
	}
	var pending []*orchestrator.Approval
	for _, a := range list {
		if a.State == orchestrator.ApprovalPending {
			pending = append(pending, a)
		}
	}
	return pending, nil
}

// waiting answers that the run waits in state for the pending approvals
// and questions: text a model can act on, and the structured list (a
// question is listed as an approval of kind question, its arguments the
// question). A problem (why asking the caller failed) makes it an error
// result.
func (f *follower) waiting(state orchestrator.RunState, pending []*orchestrator.Approval, problem string) *answer {
	out := RunOutput{SessionID: f.sessionID, RunID: f.runID, State: state}
	var b strings.Builder
	if problem != "" {
		b.WriteString(problem + "\n\n")
	}
	asks := slices.ContainsFunc(pending, func(a *orchestrator.Approval) bool { return a.Kind == orchestrator.KindQuestion })
	if asks {
		fmt.Fprintf(&b, "Run %s waits for a person: %d pending:\n", f.runID, len(pending))
	} else {
		fmt.Fprintf(&b, "Run %s waits for a person's decision on %d tool call(s):\n", f.runID, len(pending))
	}
	for _, a := range pending {
		if q := orchestrator.QuestionOf(a); q != nil {
			p := PendingApproval{ApprovalID: a.ID, Kind: a.Kind, Tool: a.Tool, Reason: a.Reason, Decisions: a.Decisions, ExpiresAt: a.ExpiresAt}
			_ = json.Unmarshal(a.Arguments, &p.Arguments)
			out.Approvals = append(out.Approvals, p)
			fmt.Fprintf(&b, "- question %s: %s", a.ID, q.Question)
			if len(q.Options) > 0 {
				fmt.Fprintf(&b, " (options: %s)", strings.Join(q.Options, ", "))
			}
			fmt.Fprintf(&b, "; answer with decision answer and answer\n")
			continue
		}
		p := PendingApproval{ApprovalID: a.ID, Kind: a.Kind, Tool: a.Tool, Reason: a.Reason, Decisions: a.Decisions, ExpiresAt: a.ExpiresAt}
		_ = json.Unmarshal(a.Arguments, &p.Arguments)
		if len(a.Missing) > 0 {
			_ = json.Unmarshal(a.Missing, &p.Missing)
		}
		out.Approvals = append(out.Approvals, p)
		fmt.Fprintf(&b, "- approval %s (%s): %s %s; %s; decisions: %s\n", a.ID, a.Kind, a.Tool, orchestrator.ClipText(string(a.Arguments), 500), a.Reason, strings.Join(a.Decisions, ", "))
	}
	fields := "arguments?, reason?"
	if asks {
		fields = "arguments?, answer?, reason?"
	}
	fmt.Fprintf(&b, "Decide each with %s {run_id, approval_id, decision, "+fields+"}; it then follows the run like %s.",
		f.h.approveName(), f.h.runName())
	text, _ := json.Marshal(out)
	res := &mcp.CallToolResult{IsError: problem != "", Content: []mcp.Content{
		&mcp.TextContent{Text: b.String()}, &mcp.TextContent{Text: string(text)},
	}}
	return &answer{res: res, out: out, pending: true}
}
