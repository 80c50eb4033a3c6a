package gateway_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type askingAnswer struct {
	RunID     string                               `json:"run_id"`
	State     string                               `json:"state"`
	Approvals []*orchestrator.Approval             `json:"approvals"`
	Questions []orchestrator.UserInputRequiredData `json:"questions"`
}

var askThenDone = []orchestratortest.Turn{
	{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("ask_user", `{"question":"Which environment?","options":["staging","prod"]}`)}},
	{Content: "deploying to prod"},
}

// POST /wunder (JSON) answers a run that asks with its question; bad
// answers are 400 problems naming what is wrong; POST .../input answers
// it once (a second is 409), and the run finishes with the answer as the
// call's result.
func TestQuestionRoutes(t *testing.T) {
	e := newEnv(t, envOpts{turns: askThenDone})
	w := decode[askingAnswer](t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"deploy","tool_names":["ask_user"],"stream":false}`), 200)
	if w.State != "waiting_input" || len(w.Approvals) != 0 || len(w.Questions) != 1 || w.Questions[0].Question != "Which environment?" ||
		!slices.Equal(w.Questions[0].Options, []string{"staging", "prod"}) {
		t.Fatalf("waiting answer = %+v", w)
	}
	path := "/wunder/runs/" + w.RunID + "/input?user_id=alice"
	wantProblem(t, e.do(t, "POST", path, `{}`), 400, "missing_answer")
	wantProblem(t, e.do(t, "POST", path, `{"answer":null}`), 400, "missing_answer")
	if p := wantProblem(t, e.do(t, "POST", path, `{"answer":"qa"}`), 400, "invalid_argument"); p.Detail == "" {
		t.Fatal("an answer outside the options is refused without saying why")
	}
	wantProblem(t, e.do(t, "POST", path, `{"answer":{"env":"prod"}}`), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", path, `{"answer":"prod"`), 400, "invalid_json")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/run_nope/input?user_id=alice", `{"answer":"prod"}`), 404, "not_found")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/"+w.RunID+"/input?user_id=bob", `{"answer":"prod"}`), 404, "not_found")
	wantProblem(t, e.do(t, "POST", path, `{"answer":"prod","question_id":"ask_nope"}`), 404, "not_found")
	answered := decode[orchestrator.Approval](t, e.do(t, "POST", path, `{"answer":"prod"}`), 200)
	if answered.State != orchestrator.ApprovalAnswered || answered.Decision == nil || string(answered.Decision.Answer) != `"prod"` {
		t.Fatalf("answered = %+v", answered)
	}
	wantProblem(t, e.do(t, "POST", path, `{"answer":"staging","question_id":"`+w.Questions[0].QuestionID+`"}`), 409, "conflict")
	evs := readSSE(t, e.do(t, "GET", "/wunder/runs/"+w.RunID+"/events?user_id=alice", "").Body)
	var final orchestrator.FinalData
	_ = json.Unmarshal(evs[len(evs)-1].ev.Data, &final)
	if final.State != orchestrator.RunFinished || final.Answer != "deploying to prod" {
		t.Fatalf("final = %+v", final)
	}
	wantProblem(t, e.do(t, "POST", path, `{"answer":"prod"}`), 409, "conflict")
}

// Streamed, the question comes as user_input_required and the stream
// stays open through the wait: answered meanwhile, it goes on to the
// final event, with no gap in the sequence.
func TestQuestionStreamed(t *testing.T) {
	e := newEnv(t, envOpts{turns: askThenDone})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"deploy","tool_names":["ask_user"]}`)
	var seen []string
	var last int64
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		var cur orchestrator.Event
		if err := json.Unmarshal(ev.Data, &cur); err != nil {
			t.Fatal(err)
		}
		if last != 0 && cur.Seq != last+1 {
			t.Fatalf("seq %d after %d", cur.Seq, last)
		}
		last = cur.Seq
		seen = append(seen, ev.Type)
		if ev.Type == orchestrator.EventUserInputRequired {
			var q orchestrator.UserInputRequiredData
			if err := json.Unmarshal(cur.Data, &q); err != nil || q.QuestionID == "" || len(q.Options) != 2 {
				t.Fatalf("user_input_required = %s, %v", cur.Data, err)
			}
			decode[orchestrator.Approval](t, e.do(t, "POST", "/wunder/runs/"+cur.RunID+"/input?user_id=alice",
				`{"answer":"prod","question_id":"`+q.QuestionID+`"}`), 200)
		}
		if ev.Type == orchestrator.EventFinal {
			break
		}
	}
	for _, want := range []string{orchestrator.EventUserInputRequired, orchestrator.EventUserInputAnswered, orchestrator.EventToolResult, orchestrator.EventFinal} {
		if !slices.Contains(seen, want) {
			t.Fatalf("stream %v lacks %s", seen, want)
		}
	}
}
