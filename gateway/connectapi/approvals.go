package connectapi

import (
	"context"
	"encoding/json"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
)

// Approvals: a run that waits for a person (orchestrator/approval.go).
// Its approval_required events reach Run and Follow streams like any
// other; ListApprovals and Decide are the REST routes
// GET /wunder/runs/{run_id}/approvals and
// POST /wunder/runs/{run_id}/approvals/{approval_id} over Connect, and
// Answer is POST /wunder/runs/{run_id}/input: the answer to a question the
// run asks (ask_user, orchestrator/question.go), which ListApprovals lists
// as an approval of kind question.

// ListApprovals lists a run's approvals, oldest first.
func (s *runService) ListApprovals(ctx context.Context, req *connect.Request[wunderv1.ListApprovalsRequest]) (*connect.Response[wunderv1.ListApprovalsResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	if req.Msg.GetRunId() == "" {
		return nil, s.toConnect(ctx, proc, invalid("run_id is required"))
	}
	list, err := s.b.Approvals(ctx, userID, req.Msg.GetRunId())
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	out := &wunderv1.ListApprovalsResponse{}
	for _, a := range list {
		out.Approvals = append(out.Approvals, approvalProto(a))
	}
	return connect.NewResponse(out), nil
}

// Decide records a decision on an approval; the run goes on when it was
// the last of its round.
func (s *runService) Decide(ctx context.Context, req *connect.Request[wunderv1.DecideRequest]) (*connect.Response[wunderv1.DecideResponse], error) {
	proc := req.Spec().Procedure
	m := req.Msg
	userID, err := s.scope(ctx, m.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	d, err := coreDecision(m)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	a, err := s.b.Decide(ctx, userID, m.GetRunId(), m.GetApprovalId(), d)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	return connect.NewResponse(&wunderv1.DecideResponse{Approval: approvalProto(a)}), nil
}

// Answer answers a run's question; the run goes on.
func (s *runService) Answer(ctx context.Context, req *connect.Request[wunderv1.AnswerRequest]) (*connect.Response[wunderv1.AnswerResponse], error) {
	proc := req.Spec().Procedure
	m := req.Msg
	userID, err := s.scope(ctx, m.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	if m.GetRunId() == "" {
		return nil, s.toConnect(ctx, proc, invalid("run_id is required"))
	}
	if len(m.GetAnswer()) == 0 {
		return nil, s.toConnect(ctx, proc, invalid("answer is required: one item, or several for a multiple choice"))
	}
	var answer []byte
	if len(m.GetAnswer()) == 1 {
		answer, _ = json.Marshal(m.GetAnswer()[0])
	} else {
		answer, _ = json.Marshal(m.GetAnswer())
	}
	a, err := s.b.Answer(ctx, userID, m.GetRunId(), m.GetQuestionId(), answer)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	return connect.NewResponse(&wunderv1.AnswerResponse{Question: approvalProto(a)}), nil
}

var decisions = map[string]wunderv1.Decision{
	orchestrator.DecisionApprove: wunderv1.Decision_DECISION_APPROVE,
	orchestrator.DecisionEdit:    wunderv1.Decision_DECISION_EDIT,
	orchestrator.DecisionReject:  wunderv1.Decision_DECISION_REJECT,
	orchestrator.DecisionCancel:  wunderv1.Decision_DECISION_CANCEL,
	orchestrator.DecisionAnswer:  wunderv1.Decision_DECISION_ANSWER,
	orchestrator.DecisionDecline: wunderv1.Decision_DECISION_DECLINE,
}

var approvalStates = map[orchestrator.ApprovalState]wunderv1.ApprovalState{
	orchestrator.ApprovalPending:   wunderv1.ApprovalState_APPROVAL_STATE_PENDING,
	orchestrator.ApprovalApproved:  wunderv1.ApprovalState_APPROVAL_STATE_APPROVED,
	orchestrator.ApprovalEdited:    wunderv1.ApprovalState_APPROVAL_STATE_EDITED,
	orchestrator.ApprovalRejected:  wunderv1.ApprovalState_APPROVAL_STATE_REJECTED,
	orchestrator.ApprovalCancelled: wunderv1.ApprovalState_APPROVAL_STATE_CANCELLED,
	orchestrator.ApprovalAnswered:  wunderv1.ApprovalState_APPROVAL_STATE_ANSWERED,
}

var approvalKinds = map[string]wunderv1.ApprovalKind{
	orchestrator.KindAuthorization: wunderv1.ApprovalKind_APPROVAL_KIND_AUTHORIZATION,
	orchestrator.KindParamRequired: wunderv1.ApprovalKind_APPROVAL_KIND_PARAM_REQUIRED,
	orchestrator.KindQuestion:      wunderv1.ApprovalKind_APPROVAL_KIND_QUESTION,
}

// coreDecision decodes the decision of a DecideRequest. The run and
// approval ids are the core's to check (an unknown one is not found).
func coreDecision(m *wunderv1.DecideRequest) (orchestrator.ApprovalDecision, error) {
	if m.GetRunId() == "" {
		return orchestrator.ApprovalDecision{}, invalid("run_id is required")
	}
	if m.GetApprovalId() == "" {
		return orchestrator.ApprovalDecision{}, invalid("approval_id is required")
	}
	d := orchestrator.ApprovalDecision{Reason: m.GetReason()}
	switch m.GetDecision() {
	case wunderv1.Decision_DECISION_APPROVE:
		d.Decision = orchestrator.DecisionApprove
	case wunderv1.Decision_DECISION_EDIT:
		d.Decision = orchestrator.DecisionEdit
	case wunderv1.Decision_DECISION_REJECT:
		d.Decision = orchestrator.DecisionReject
	case wunderv1.Decision_DECISION_CANCEL:
		d.Decision = orchestrator.DecisionCancel
	case wunderv1.Decision_DECISION_DECLINE:
		d.Decision = orchestrator.DecisionDecline
	case wunderv1.Decision_DECISION_ANSWER:
		return d, invalid("a question is answered with Answer, not Decide")
	default:
		return d, invalid("decision must be DECISION_APPROVE, DECISION_EDIT, DECISION_REJECT, DECISION_CANCEL or (a question) DECISION_DECLINE, got %v", m.GetDecision())
	}
	if args := m.GetArguments(); args != nil {
		b, err := protojson.Marshal(args)
		if err != nil {
			return d, invalid("arguments: %v", err)
		}
		d.Arguments = b
	}
	return d, nil
}

// coreApprovalMode maps a requested approval mode to the core's name.
func coreApprovalMode(m wunderv1.ApprovalMode) (string, error) {
	switch m {
	case wunderv1.ApprovalMode_APPROVAL_MODE_UNSPECIFIED:
		return "", nil
	case wunderv1.ApprovalMode_APPROVAL_MODE_SUGGEST:
		return orchestrator.ApprovalSuggest, nil
	case wunderv1.ApprovalMode_APPROVAL_MODE_AUTO_EDIT:
		return orchestrator.ApprovalAutoEdit, nil
	case wunderv1.ApprovalMode_APPROVAL_MODE_FULL_AUTO:
		return orchestrator.ApprovalFullAuto, nil
	}
	return "", invalid("approval_mode: %d is not an approval mode", int32(m))
}

func approvalProto(a *orchestrator.Approval) *wunderv1.Approval {
	out := &wunderv1.Approval{
		ApprovalId: a.ID, RunId: a.RunID, SessionId: a.SessionID, UserId: a.UserID,
		Kind: approvalKinds[a.Kind], Tool: a.Tool, Arguments: object(a.Arguments), Reason: a.Reason,
		Missing: object(a.Missing), State: approvalStates[a.State],
		CreateTime: ts(a.CreatedAt), ExpireTime: tsPtr(a.ExpiresAt), DecideTime: tsPtr(a.DecidedAt),
	}
	for _, d := range a.Decisions {
		out.Decisions = append(out.Decisions, decisions[d])
	}
	if d := a.Decision; d != nil {
		out.Decision, out.DecidedBy, out.DecisionReason = decisions[d.Decision], d.By, d.Reason
		out.EditedArguments = object(d.Arguments)
		out.Answer = answerList(d.Answer)
	}
	if q := orchestrator.QuestionOf(a); q != nil {
		out.Question = &wunderv1.Question{Question: q.Question, Options: q.Options, Multi: q.Multi, FreeText: q.FreeText,
			DefaultAnswer: answerList(q.Default)}
	}
	return out
}

// answerList is a stored answer (a string, or a list of strings) as a
// list.
func answerList(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}
