package connectapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/wunder/wunder/gateway/connectapi"
	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// deployTool counts its calls and records their arguments: the side
// effect an approval guards. It is not read-only, so approval mode
// suggest makes it ask.
type deployTool struct {
	mu    sync.Mutex
	calls []string
}

func (d *deployTool) toolset() orchestrator.Toolset {
	t := ot.NewTool("deploy", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		d.mu.Lock()
		d.calls = append(d.calls, string(inv.Arguments))
		d.mu.Unlock()
		return &orchestrator.ToolResult{Content: "deployed " + string(inv.Arguments)}, nil
	})
	t.S.InputSchema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)
	return orchestrator.StaticToolset{SetName: "deploy", List: []orchestrator.Tool{t}}
}

func (d *deployTool) called() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

var deployTurns = []ot.Turn{{ToolCalls: []orchestrator.ToolCall{ot.Call("deploy", `{"env":"prod"}`)}}, {Content: "Done."}}

// untilApproval receives events until approval_required and returns them.
func untilApproval(t *testing.T, s *connect.ServerStreamForClient[wunderv1.RunResponse]) []*wunderv1.Event {
	t.Helper()
	var evs []*wunderv1.Event
	for s.Receive() {
		ev := s.Msg().GetEvent()
		evs = append(evs, ev)
		switch ev.GetType() {
		case orchestrator.EventApprovalRequired:
			return evs
		case orchestrator.EventFinal:
			t.Fatalf("the run ended before asking: %v", ev.GetData().AsMap())
		}
	}
	t.Fatalf("the stream ended before approval_required: %v", s.Err())
	return nil
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A run with approval_mode suggest waits before deploy; the Run stream
// stays open across the wait. ListApprovals shows the pending approval;
// each decision, over each protocol, does what the core says: approve runs
// the tool once, edit runs it once with the new arguments, reject lets the
// model read the reason and finish, cancel ends the run cancelled. A
// second decision is FAILED_PRECONDITION (CONFLICT); another user's lookup
// is NOT_FOUND; bad decisions are INVALID_ARGUMENT.
func TestApprovalsOverConnect(t *testing.T) {
	cases := []struct {
		name      string
		req       *wunderv1.DecideRequest
		state     wunderv1.ApprovalState
		runState  string
		answer    string
		calls     []string
		modelRead string // in the last message the model read
	}{
		{name: "approve", req: &wunderv1.DecideRequest{Decision: wunderv1.Decision_DECISION_APPROVE},
			state: wunderv1.ApprovalState_APPROVAL_STATE_APPROVED, runState: "finished", answer: "Done.", calls: []string{`{"env":"prod"}`}},
		{name: "edit", req: &wunderv1.DecideRequest{Decision: wunderv1.Decision_DECISION_EDIT},
			state: wunderv1.ApprovalState_APPROVAL_STATE_EDITED, runState: "finished", answer: "Done.", calls: []string{`{"env":"staging"}`}},
		{name: "reject", req: &wunderv1.DecideRequest{Decision: wunderv1.Decision_DECISION_REJECT, Reason: "not on a Friday"},
			state: wunderv1.ApprovalState_APPROVAL_STATE_REJECTED, runState: "finished", answer: "Done.", modelRead: "not on a Friday"},
		{name: "cancel", req: &wunderv1.DecideRequest{Decision: wunderv1.Decision_DECISION_CANCEL, Reason: "changed my mind"},
			state: wunderv1.ApprovalState_APPROVAL_STATE_CANCELLED, runState: "cancelled"},
	}
	for _, p := range protocols {
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				d := &deployTool{}
				e := newEnv(t, envOpts{turns: deployTurns, toolsets: []orchestrator.Toolset{d.toolset()}})
				c := e.clients(p)
				ctx := t.Context()
				s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{
					UserId: "alice", Question: "ship it", ToolNames: []string{"deploy"},
					ApprovalMode: wunderv1.ApprovalMode_APPROVAL_MODE_SUGGEST,
				}))
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				evs := untilApproval(t, s)
				runID := evs[0].GetRunId()
				asked := evs[len(evs)-1].GetData().AsMap()
				id, _ := asked["approval_id"].(string)
				if id == "" || asked["tool"] != "deploy" || asked["kind"] != orchestrator.KindAuthorization {
					t.Fatalf("approval_required = %v", asked)
				}

				list, err := c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "alice", RunId: runID}))
				if err != nil {
					t.Fatal(err)
				}
				if n := len(list.Msg.GetApprovals()); n != 1 {
					t.Fatalf("ListApprovals: %d approvals", n)
				}
				a := list.Msg.GetApprovals()[0]
				wantDecisions := []wunderv1.Decision{wunderv1.Decision_DECISION_APPROVE, wunderv1.Decision_DECISION_EDIT,
					wunderv1.Decision_DECISION_REJECT, wunderv1.Decision_DECISION_CANCEL}
				if a.GetApprovalId() != id || a.GetRunId() != runID || a.GetSessionId() == "" || a.GetUserId() != "alice" ||
					a.GetKind() != wunderv1.ApprovalKind_APPROVAL_KIND_AUTHORIZATION || a.GetTool() != "deploy" ||
					a.GetArguments().AsMap()["env"] != "prod" || !strings.Contains(a.GetReason(), "suggest") ||
					fmt.Sprint(a.GetDecisions()) != fmt.Sprint(wantDecisions) || a.GetState() != wunderv1.ApprovalState_APPROVAL_STATE_PENDING ||
					a.GetCreateTime() == nil || a.GetExpireTime() == nil || a.GetDecideTime() != nil || a.GetDecision() != wunderv1.Decision_DECISION_UNSPECIFIED {
					t.Fatalf("pending approval = %v", a)
				}

				decide := func(req *wunderv1.DecideRequest) (*wunderv1.Approval, error) {
					res, err := c.runs.Decide(ctx, connect.NewRequest(req))
					if err != nil {
						return nil, err
					}
					return res.Msg.GetApproval(), nil
				}
				wantCode := func(what string, err error, code connect.Code, reason string) {
					t.Helper()
					if connect.CodeOf(err) != code || errorInfoReason(err) != reason {
						t.Errorf("%s: %v (reason %q), want %v (%s)", what, err, errorInfoReason(err), code, reason)
					}
				}
				// Another user sees no such run.
				_, err = c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "bob", RunId: runID}))
				wantCode("bob lists", err, connect.CodeNotFound, "NOT_FOUND")
				_, err = decide(&wunderv1.DecideRequest{UserId: "bob", RunId: runID, ApprovalId: id, Decision: wunderv1.Decision_DECISION_APPROVE})
				wantCode("bob decides", err, connect.CodeNotFound, "NOT_FOUND")
				_, err = decide(&wunderv1.DecideRequest{UserId: "alice", RunId: runID, ApprovalId: "appr_nope", Decision: wunderv1.Decision_DECISION_APPROVE})
				wantCode("unknown approval", err, connect.CodeNotFound, "NOT_FOUND")
				// Bad decisions change nothing.
				for what, bad := range map[string]*wunderv1.DecideRequest{
					"no decision":            {},
					"unknown decision":       {Decision: 42},
					"edit without arguments": {Decision: wunderv1.Decision_DECISION_EDIT},
					"edit lacking env":       {Decision: wunderv1.Decision_DECISION_EDIT, Arguments: mustStruct(t, map[string]any{"region": "eu"})},
					// A Value with no kind: only this front-end decodes Structs.
					"malformed arguments": {Decision: wunderv1.Decision_DECISION_EDIT, Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"env": {}}}},
				} {
					bad.UserId, bad.RunId, bad.ApprovalId = "alice", runID, id
					_, err := decide(bad)
					wantCode(what, err, connect.CodeInvalidArgument, "INVALID_ARGUMENT")
				}
				_, err = decide(&wunderv1.DecideRequest{UserId: "alice", RunId: runID, Decision: wunderv1.Decision_DECISION_APPROVE})
				wantCode("no approval id", err, connect.CodeInvalidArgument, "INVALID_ARGUMENT")

				req := &wunderv1.DecideRequest{UserId: "alice", RunId: runID, ApprovalId: id, Decision: tc.req.GetDecision(), Reason: tc.req.GetReason()}
				if tc.name == "edit" {
					req.Arguments = mustStruct(t, map[string]any{"env": "staging"})
				}
				got, err := decide(req)
				if err != nil {
					t.Fatal(err)
				}
				if got.GetState() != tc.state || got.GetDecision() != req.GetDecision() || got.GetDecidedBy() == "" ||
					got.GetDecisionReason() != req.GetReason() || got.GetDecideTime() == nil {
					t.Fatalf("decided approval = %v", got)
				}
				if tc.name == "edit" && got.GetEditedArguments().AsMap()["env"] != "staging" {
					t.Fatalf("edited arguments = %v", got.GetEditedArguments())
				}

				// The stream that started the run goes on to its final event.
				rest := collect(t, s)
				all := append(evs, rest...)
				checkDense(t, all, 1)
				f := final(t, all)
				if f["state"] != tc.runState || (tc.answer != "" && f["answer"] != tc.answer) {
					t.Fatalf("final = %v", f)
				}
				var sawDecided bool
				for _, ev := range rest {
					sawDecided = sawDecided || ev.GetType() == orchestrator.EventApprovalDecided
				}
				if tc.runState == "finished" && !sawDecided {
					t.Errorf("no approval_decided event after the decision")
				}
				if calls := d.called(); fmt.Sprint(calls) != fmt.Sprint(tc.calls) {
					t.Errorf("deploy ran %v, want %v", calls, tc.calls)
				}
				if tc.modelRead != "" {
					reqs := e.model.Requests()
					msgs := reqs[len(reqs)-1].Messages
					if m := msgs[len(msgs)-1]; !strings.Contains(m.Content, tc.modelRead) {
						t.Errorf("the model last read %q, want the reason %q", m.Content, tc.modelRead)
					}
				}

				// A second decision is a conflict; the listing keeps the first.
				_, err = decide(&wunderv1.DecideRequest{UserId: "alice", RunId: runID, ApprovalId: id, Decision: wunderv1.Decision_DECISION_REJECT})
				wantCode("second decision", err, connect.CodeFailedPrecondition, "CONFLICT")
				list, err = c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "alice", RunId: runID}))
				if err != nil || len(list.Msg.GetApprovals()) != 1 || list.Msg.GetApprovals()[0].GetState() != tc.state {
					t.Fatalf("ListApprovals after the decision: %v %v", list, err)
				}
			})
		}
	}
}

// approval_mode on Submit: unspecified is the server's (full_auto: deploy
// runs at once), suggest waits (the run is waiting_approval, Follow sees
// approval_required), and a value that is no mode is INVALID_ARGUMENT.
func TestSubmitApprovalMode(t *testing.T) {
	d := &deployTool{}
	e := newEnv(t, envOpts{turns: []ot.Turn{deployTurns[0], deployTurns[1], deployTurns[0], deployTurns[1]},
		toolsets: []orchestrator.Toolset{d.toolset()}})
	c := e.clients(protocols[0])
	ctx := t.Context()
	submit := func(mode wunderv1.ApprovalMode) (string, error) {
		res, err := c.runs.Submit(ctx, connect.NewRequest(&wunderv1.SubmitRequest{UserId: "carol", Question: "ship it",
			ToolNames: []string{"deploy"}, ApprovalMode: mode}))
		if err != nil {
			return "", err
		}
		return res.Msg.GetRun().GetRunId(), nil
	}
	follow := func(runID string, until string) []*wunderv1.Event {
		f, err := c.runs.Follow(ctx, connect.NewRequest(&wunderv1.FollowRequest{UserId: "carol", RunId: runID}))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var evs []*wunderv1.Event
		for f.Receive() {
			evs = append(evs, f.Msg().GetEvent())
			if evs[len(evs)-1].GetType() == until {
				return evs
			}
		}
		t.Fatalf("no %s event: %v", until, f.Err())
		return nil
	}
	runID, err := submit(wunderv1.ApprovalMode_APPROVAL_MODE_UNSPECIFIED)
	if err != nil {
		t.Fatal(err)
	}
	follow(runID, orchestrator.EventFinal)
	if calls := d.called(); len(calls) != 1 {
		t.Fatalf("full_auto: deploy ran %v", calls)
	}
	runID, err = submit(wunderv1.ApprovalMode_APPROVAL_MODE_SUGGEST)
	if err != nil {
		t.Fatal(err)
	}
	follow(runID, orchestrator.EventApprovalRequired)
	list, err := c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "carol", RunId: runID}))
	if err != nil || len(list.Msg.GetApprovals()) != 1 {
		t.Fatalf("suggest: %v %v", list, err)
	}
	if calls := d.called(); len(calls) != 1 {
		t.Fatalf("suggest: deploy ran before a decision: %v", calls)
	}
	_, err = submit(9)
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("approval_mode 9: %v", err)
	}
	_, err = c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "carol"}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("ListApprovals without run_id: %v", err)
	}
}

// A credential pinned to alice lists and decides her run's approvals
// without naming her, and is PERMISSION_DENIED naming anyone else.
func TestApprovalsScope(t *testing.T) {
	d := &deployTool{}
	e := newEnv(t, envOpts{turns: deployTurns, toolsets: []orchestrator.Toolset{d.toolset()},
		api: pinnedTo("alice")})
	c := e.clients(protocols[0])
	ctx := t.Context()
	s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{Question: "ship it", ToolNames: []string{"deploy"},
		ApprovalMode: wunderv1.ApprovalMode_APPROVAL_MODE_SUGGEST}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs := untilApproval(t, s)
	runID := evs[0].GetRunId()
	id, _ := evs[len(evs)-1].GetData().AsMap()["approval_id"].(string)
	_, err = c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "mallory", RunId: runID}))
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("ListApprovals naming mallory: %v", err)
	}
	_, err = c.runs.Decide(ctx, connect.NewRequest(&wunderv1.DecideRequest{UserId: "mallory", RunId: runID, ApprovalId: id,
		Decision: wunderv1.Decision_DECISION_APPROVE}))
	if connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Errorf("Decide naming mallory: %v", err)
	}
	if _, err := c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{RunId: runID})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.runs.Decide(ctx, connect.NewRequest(&wunderv1.DecideRequest{RunId: runID, ApprovalId: id,
		Decision: wunderv1.Decision_DECISION_APPROVE})); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, s)); f["state"] != "finished" || len(d.called()) != 1 {
		t.Fatalf("final = %v, deploy ran %v", f, d.called())
	}
}

// pinnedTo is the scope of a credential pinned to one user.
func pinnedTo(user string) connectapi.Options {
	return connectapi.Options{Scope: func(_ context.Context, requested string) (string, error) {
		if requested != "" && requested != user {
			return "", fmt.Errorf("%w: this credential acts for %s", orchestrator.ErrPermissionDenied, user)
		}
		return user, nil
	}}
}
