package connectapi_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

var askTurns = []ot.Turn{
	{ToolCalls: []orchestrator.ToolCall{ot.Call("ask_user", `{"question":"Which regions?","options":["eu","us","ap"],"multi":true}`)}},
	{Content: "Done."},
}

// The model's question over Connect: the Run stream carries
// user_input_required and stays open; ListApprovals lists the question as
// an approval of kind question with its question; Answer refuses an
// answer that is no option (INVALID_ARGUMENT) and another user
// (NOT_FOUND), answers once (a second is FAILED_PRECONDITION), and the
// stream goes on to the final event, the model reading the answer.
func TestAnswerOverConnect(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, envOpts{turns: askTurns})
			c := e.clients(p)
			ctx := t.Context()
			s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "alice", Question: "where?", ToolNames: []string{"ask_user"}}))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var runID, questionID string
			for runID == "" && s.Receive() {
				ev := s.Msg().GetEvent()
				if ev.GetType() == orchestrator.EventFinal {
					t.Fatalf("the run ended before asking: %v", ev.GetData().AsMap())
				}
				if ev.GetType() == orchestrator.EventUserInputRequired {
					runID, questionID = ev.GetRunId(), ev.GetData().AsMap()["question_id"].(string)
				}
			}
			list, err := c.runs.ListApprovals(ctx, connect.NewRequest(&wunderv1.ListApprovalsRequest{UserId: "alice", RunId: runID}))
			if err != nil {
				t.Fatal(err)
			}
			q := list.Msg.GetApprovals()[0]
			if q.GetApprovalId() != questionID || q.GetKind() != wunderv1.ApprovalKind_APPROVAL_KIND_QUESTION ||
				q.GetQuestion().GetQuestion() != "Which regions?" || !q.GetQuestion().GetMulti() ||
				!slices.Equal(q.GetQuestion().GetOptions(), []string{"eu", "us", "ap"}) ||
				!slices.Equal(q.GetDecisions(), []wunderv1.Decision{wunderv1.Decision_DECISION_ANSWER, wunderv1.Decision_DECISION_DECLINE, wunderv1.Decision_DECISION_CANCEL}) {
				t.Fatalf("listed question = %v", q)
			}
			answer := func(user string, picks ...string) (*connect.Response[wunderv1.AnswerResponse], error) {
				return c.runs.Answer(ctx, connect.NewRequest(&wunderv1.AnswerRequest{UserId: user, RunId: runID, Answer: picks}))
			}
			for _, tc := range []struct {
				user  string
				picks []string
				code  connect.Code
			}{
				{"alice", []string{"mars"}, connect.CodeInvalidArgument},
				{"alice", nil, connect.CodeInvalidArgument},
				{"bob", []string{"eu"}, connect.CodeNotFound},
			} {
				if _, err := answer(tc.user, tc.picks...); connect.CodeOf(err) != tc.code {
					t.Fatalf("Answer(%s, %v) = %v; want %v", tc.user, tc.picks, err, tc.code)
				}
			}
			res, err := answer("alice", "eu", "ap")
			if err != nil {
				t.Fatal(err)
			}
			if a := res.Msg.GetQuestion(); a.GetState() != wunderv1.ApprovalState_APPROVAL_STATE_ANSWERED || !slices.Equal(a.GetAnswer(), []string{"eu", "ap"}) {
				t.Fatalf("answered = %v", a)
			}
			var ce *connect.Error
			if _, err := answer("alice", "us"); !errors.As(err, &ce) || ce.Code() != connect.CodeFailedPrecondition {
				t.Fatalf("second answer: %v; want FAILED_PRECONDITION", err)
			}
			final := ""
			for s.Receive() {
				if ev := s.Msg().GetEvent(); ev.GetType() == orchestrator.EventFinal {
					final, _ = ev.GetData().AsMap()["answer"].(string)
				}
			}
			if final != "Done." {
				t.Fatalf("final answer %q; stream: %v", final, s.Err())
			}
			reqs := e.model.Requests()
			last := reqs[len(reqs)-1].Messages
			if m := last[len(last)-1]; !strings.Contains(m.Content, `{\"answer\":[\"eu\",\"ap\"]}`) {
				t.Fatalf("the model's last message = %+v; want the answer as the call's result", m)
			}
		})
	}
}
