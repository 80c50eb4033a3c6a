package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// ApproveTool is the canonical name of the tool that decides an approval
// of a run wunder@run left waiting (wunder__approve on the wire).
const ApproveTool = "wunder@approve"

// ApproveInput is the input of wunder@approve.
type ApproveInput struct {
	RunID      string         `json:"run_id" jsonschema:"the waiting run (run_id of the result that listed the approval)"`
	ApprovalID string         `json:"approval_id" jsonschema:"the approval to decide (approval_id from that result)"`
	Decision   string         `json:"decision" jsonschema:"one of the approval's decisions: approve (run the call), edit (run it with arguments), reject (skip it; the agent reads the reason), cancel (stop the run); for a question: answer, decline or cancel"`
	Arguments  map[string]any `json:"arguments,omitempty" jsonschema:"for edit: the call's new arguments (authorization), or the missing ones (param_required)"`
	Answer     any            `json:"answer,omitempty" jsonschema:"for answer (a question the run asks, kind question): a string, or a list of strings for a multiple choice"`
	Reason     string         `json:"reason,omitempty" jsonschema:"why; on reject the agent reads it as the tool's result"`
}

// approveName is wunder@approve on the wire, per the registry's encoding.
func (h *Handler) approveName() string { return h.b.Registry().WireName(ApproveTool) }

func (h *Handler) addApproveTool(s *mcp.Server) {
	in, err := jsonschema.For[ApproveInput](nil)
	if err != nil {
		panic(err) // a static type: cannot fail
	}
	in.Properties["decision"].Enum = []any{orchestrator.DecisionApprove, orchestrator.DecisionEdit, orchestrator.DecisionReject, orchestrator.DecisionCancel,
		orchestrator.DecisionAnswer, orchestrator.DecisionDecline}
	mcp.AddTool(s, &mcp.Tool{
		Name:  h.approveName(),
		Title: "Decide an approval of a wunder run",
		Description: "Decides a tool call that a run of " + h.runName() + " waits for (its result had state waiting_approval " +
			"and listed the approvals), or answers the question it asks (state waiting_input, kind question), then follows " +
			"the run like " + h.runName() + ": it returns the run's answer, or again what is pending when the run waits once more.",
		InputSchema: in,
	}, h.approve)
}

// approve is wunder@approve: decide as the caller, then follow the run.
func (h *Handler) approve(ctx context.Context, req *mcp.CallToolRequest, in ApproveInput) (*mcp.CallToolResult, RunOutput, error) {
	if req.Params.RequestState != "" {
		return h.resume(ctx, req) // the retry of an input-required result
	}
	user := h.userOf(req.Extra)
	d := orchestrator.ApprovalDecision{Decision: in.Decision, Reason: in.Reason}
	if in.Arguments != nil {
		d.Arguments, _ = json.Marshal(in.Arguments)
	}
	if in.Answer != nil {
		d.Answer, _ = json.Marshal(in.Answer)
	}
	a, err := h.b.Decide(ctx, user, in.RunID, in.ApprovalID, d)
	if err != nil {
		return failed(h.langOf(req.Extra), err)
	}
	f := &follower{h: h, req: req, user: user, runID: a.RunID, sessionID: a.SessionID, quietUntil: a.ID}
	return f.follow(ctx)
}
