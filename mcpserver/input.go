package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Approvals as input requests: from revision 2026-07-28 a server sends no
// requests of its own (SEP-2322); a tool call that needs the client's
// input answers with an input-required result instead, and the client
// calls again with the same arguments, its answers (inputResponses) and
// the result's requestState. A wunder@run or wunder@approve call of such a
// client that declared form elicitation and reaches a run's approvals
// answers
//
//	inputRequests  one elicitation/create per pending approval, keyed by
//	               its approval id, with the form elicit.go sends
//	requestState   the run (and its session), base64url JSON
//
// and the retry decides each answered approval as the caller (the answer
// maps to a decision as an elicitation's does) and follows the run on like
// wunder@approve: to its answer, or to the next input-required result. An
// unanswered approval is asked again; an unusable answer is asked again
// with the problem in the message, and a second round in a row with one
// ends the call with the error result that lists what is pending. The
// state is no credential: the run is looked up as the caller, so another
// user's run id is not found.

// inputState is the requestState of an input-required result.
type inputState struct {
	Run     string `json:"run"`
	Session string `json:"session"`
	// Failed counts the rounds in a row whose answers could not be used.
	Failed int `json:"failed,omitempty"`
}

func (s inputState) encode() string {
	b, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeInputState(v string) (inputState, error) {
	var s inputState
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err == nil && s.Run == "" {
		err = errors.New("no run")
	}
	return s, err
}

// canAskInput reports whether the caller of a tool can be asked with an
// input-required result: a request of revision 2026-07-28 or later whose
// client declared form elicitation.
func (h *Handler) canAskInput(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.ProtocolVersion < protocolNoServerRequests || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// inputRequired asks the caller to decide the pending approvals: one
// elicitation per approval, the problems of the last answers at the top of
// their messages.
func (f *follower) inputRequired(pending []*orchestrator.Approval) *answer {
	state := inputState{Run: f.runID, Session: f.sessionID, Failed: f.failedRounds}
	return &answer{res: &mcp.CallToolResult{InputRequests: approvalRequests(f.runID, pending, f.problems), RequestState: state.encode()}}
}

// approvalRequests are the input requests of a run's pending approvals,
// keyed by approval id (unique over the run's life): an input-required
// result's, and a task's inputRequests (tasks.go).
func approvalRequests(runID string, pending []*orchestrator.Approval, problems map[string]string) mcp.InputRequestMap {
	reqs := mcp.InputRequestMap{}
	for _, a := range pending {
		form := newApprovalForm(a, runID)
		reqs[a.ID] = &mcp.ElicitParams{Mode: "form", Message: form.message(problems[a.ID]), RequestedSchema: form.schema}
	}
	return reqs
}

// resume serves the retry of a call that answered input-required: it
// decides the answered approvals and follows the run on.
func (h *Handler) resume(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, RunOutput, error) {
	lang := h.langOf(req.Extra)
	st, err := decodeInputState(req.Params.RequestState)
	if err != nil {
		return nil, RunOutput{}, invalidParams(lang, "requestState is not one wunder issued: "+err.Error())
	}
	f := &follower{h: h, req: req, user: h.userOf(req.Extra), runID: st.Run, sessionID: st.Session}
	pending, err := f.pending(ctx) // as the caller: another user's run is not found
	if err != nil {
		return failed(lang, err)
	}
	if len(pending) > 0 {
		f.quietUntil = pending[len(pending)-1].ID // the follow replays the log: quiet up to this round
	}
	problems, cancelledBy, err := h.decideAnswers(ctx, f.user, st.Run, pending, req.Params.InputResponses)
	switch {
	case err != nil:
		return failed(lang, err)
	case cancelledBy != "":
		f.quietUntil = cancelledBy
		return f.follow(ctx) // the run ends: nothing more to decide
	}
	f.problems = problems
	if len(f.problems) > 0 {
		f.failedRounds = st.Failed + 1
	}
	if f.failedRounds >= 2 {
		if pending, err = f.pending(ctx); err != nil {
			return failed(lang, err)
		}
		var last string
		for _, a := range pending {
			last = cmp.Or(f.problems[a.ID], last)
		}
		return f.waiting(orchestrator.RunWaitingApproval, pending,
			fmt.Sprintf("Asking for decisions failed twice (last: %s); %d approval(s) are still pending.", last, len(pending))).unpack()
	}
	return f.follow(ctx)
}

// decideAnswers decides, as user, each of a run's pending approvals that
// responses answer (keyed by approval id, as inputRequests asked them):
// the retry of an input-required result, and a task's tasks/update
// (tasks.go). An unanswered approval is left pending. It returns why the
// answers it could not use were unusable, by approval id; the approval
// whose answer cancelled the run (nothing more is decided after it); and
// a core error. An approval decided elsewhere meanwhile is no problem.
func (h *Handler) decideAnswers(ctx context.Context, user, runID string, pending []*orchestrator.Approval, responses mcp.InputResponseMap) (problems map[string]string, cancelledBy string, err error) {
	problems = map[string]string{}
	for _, a := range pending {
		r, ok := responses[a.ID].(*mcp.ElicitResult)
		if !ok {
			continue // not answered: asked again
		}
		d, err := newApprovalForm(a, runID).decision(r)
		if err == nil {
			_, err = h.b.Decide(ctx, user, runID, a.ID, d)
			switch {
			case err == nil && d.Decision == orchestrator.DecisionCancel:
				return problems, a.ID, nil
			case err == nil, errors.Is(err, orchestrator.ErrConflict): // decided (here or elsewhere meanwhile)
				continue
			case !errors.Is(err, orchestrator.ErrInvalidArgument):
				return problems, "", err
			}
		}
		problems[a.ID] = err.Error()
	}
	return problems, "", nil
}
