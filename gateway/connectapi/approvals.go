package connectapi

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
)

// Approvals: a run that waits for a person (orchestrator/approval.go).
// Its approval_required events reach Run and Follow streams like any
// other; ListApprovals and Decide are the REST routes
// GET /wunder/runs/{run_id}/approvals and
// POST /wunder/runs/{run_id}/approvals/{approval_id} over Connect.

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

var decisions = map[string]wunderv1.Decision{
	orchestrator.DecisionApprove: wunderv1.Decision_DECISION_APPROVE,
	orchestrator.DecisionEdit:    wunderv1.Decision_DECISION_EDIT,
	orchestrator.DecisionReject:  wunderv1.Decision_DECISION_REJECT,
	orchestrator.DecisionCancel:  wunderv1.Decision_DECISION_CANCEL,
}

var approvalStates = map[orchestrator.ApprovalState]wunderv1.ApprovalState{
	orchestrator.ApprovalPending:   wunderv1.ApprovalState_APPROVAL_STATE_PENDING,
	orchestrator.ApprovalApproved:  wunderv1.ApprovalState_APPROVAL_STATE_APPROVED,
	orchestrator.ApprovalEdited:    wunderv1.ApprovalState_APPROVAL_STATE_EDITED,
	orchestrator.ApprovalRejected:  wunderv1.ApprovalState_APPROVAL_STATE_REJECTED,
	orchestrator.ApprovalCancelled: wunderv1.ApprovalState_APPROVAL_STATE_CANCELLED,
}

var approvalKinds = map[string]wunderv1.ApprovalKind{
	orchestrator.KindAuthorization: wunderv1.ApprovalKind_APPROVAL_KIND_AUTHORIZATION,
	orchestrator.KindParamRequired: wunderv1.ApprovalKind_APPROVAL_KIND_PARAM_REQUIRED,
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
	default:
		return d, invalid("decision must be DECISION_APPROVE, DECISION_EDIT, DECISION_REJECT or DECISION_CANCEL, got %v", m.GetDecision())
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
	}
	return out
}
