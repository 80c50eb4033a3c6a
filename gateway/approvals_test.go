package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type waitingAnswer struct {
	RunID     string                   `json:"run_id"`
	State     string                   `json:"state"`
	Answer    string                   `json:"answer"`
	Approvals []*orchestrator.Approval `json:"approvals"`
}

var writeThenDone = []orchestratortest.Turn{
	{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a.txt","content":"hi"}`)}},
	{Content: "wrote it"},
}

// POST /wunder (JSON) answers a run that waits with its approvals; GET
// lists them with their state; POST decides once (a second is 409); bad
// decisions are 400 problems; the run then finishes and the file exists.
func TestApprovalRoutes(t *testing.T) {
	e := newEnv(t, envOpts{turns: writeThenDone})
	w := decode[waitingAnswer](t, e.do(t, "POST", "/wunder",
		`{"user_id":"alice","question":"write","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`), 200)
	if w.State != "waiting_approval" || len(w.Approvals) != 1 || w.Approvals[0].Tool != "write_file" || w.Approvals[0].State != orchestrator.ApprovalPending {
		t.Fatalf("waiting answer = %+v", w)
	}
	id := w.Approvals[0].ID
	list := decode[struct {
		Approvals []map[string]any `json:"approvals"`
	}](t, e.do(t, "GET", "/wunder/runs/"+w.RunID+"/approvals", ""), 200)
	if len(list.Approvals) != 1 {
		t.Fatalf("list = %+v", list)
	}
	for _, k := range []string{"approval_id", "kind", "tool", "arguments", "reason", "decisions", "state"} {
		if _, ok := list.Approvals[0][k]; !ok {
			t.Fatalf("listed approval has no %q: %v", k, list.Approvals[0])
		}
	}
	path := "/wunder/runs/" + w.RunID + "/approvals/" + id
	wantProblem(t, e.do(t, "POST", path, `{}`), 400, "missing_decision")
	wantProblem(t, e.do(t, "POST", path, `{"decision":"yes"}`), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", path, `{"decision":"edit","arguments":[1]}`), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", path, `{"decision":"approve"`), 400, "invalid_json")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/"+w.RunID+"/approvals/appr_nope", `{"decision":"approve"}`), 404, "not_found")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/run_nope/approvals/"+id, `{"decision":"approve"}`), 404, "not_found")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/"+w.RunID+"/approvals/a%00b", `{"decision":"approve"}`), 404, "not_found")
	decided := decode[orchestrator.Approval](t, e.do(t, "POST", path, `{"decision":"approve"}`), 200)
	if decided.State != orchestrator.ApprovalApproved || decided.Decision == nil || decided.Decision.Decision != "approve" {
		t.Fatalf("decided = %+v", decided)
	}
	wantProblem(t, e.do(t, "POST", path, `{"decision":"reject"}`), 409, "conflict")
	evs := readSSE(t, e.do(t, "GET", "/wunder/runs/"+w.RunID+"/events", "").Body)
	var seen []string
	for _, ev := range evs {
		seen = append(seen, ev.typ)
	}
	got := strings.Join(seen, ",")
	for _, want := range []string{"approval_required", "approval_decided", "tool_result", "final"} {
		if !strings.Contains(got, want) {
			t.Fatalf("events %s lack %s", got, want)
		}
	}
	var final orchestrator.FinalData
	_ = json.Unmarshal(evs[len(evs)-1].ev.Data, &final)
	if final.State != orchestrator.RunFinished || final.Answer != "wrote it" {
		t.Fatalf("final = %+v", final)
	}
	if c, ok := e.files.Get("alice", "a.txt"); !ok || c != "hi" {
		t.Fatalf("a.txt = %q, %v", c, ok)
	}
	wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"q","approval_mode":"yolo","stream":false}`), 400, "invalid_argument")
}

// The answer at a pause says what the run has used so far, as the run
// does (GET /wunder/runs/{id}), not nothing.
func TestPausedAnswerCarriesUsage(t *testing.T) {
	used := &orchestrator.Usage{InputTokens: 12, OutputTokens: 3, TotalTokens: 15}
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{
		{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a.txt","content":"hi"}`)}, Usage: used},
		{Content: "wrote it"},
	}})
	w := decode[struct {
		State string             `json:"state"`
		Usage orchestrator.Usage `json:"usage"`
	}](t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"write","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`), 200)
	if w.State != "waiting_approval" || w.Usage != *used {
		t.Fatalf("the answer at the pause: %+v; want waiting_approval with usage %+v", w, *used)
	}
}
