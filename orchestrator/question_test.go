package orchestrator_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

const pickEnv = `{"question":"Which environment?","options":["staging","prod"],"default":"staging"}`

func askHarness(t *testing.T, store orchestrator.Store, q orchestrator.QuestionPolicy, turns ...orchestratortest.Turn) *harness {
	return newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, turns: turns,
		opts: orchestrator.Options{Questions: q, FollowInterval: 5 * time.Millisecond}})
}

func questionData(t *testing.T, ev orchestrator.Event) orchestrator.UserInputRequiredData {
	t.Helper()
	if ev.Type != orchestrator.EventUserInputRequired {
		t.Fatalf("event %d is %s, not %s", ev.Seq, ev.Type, orchestrator.EventUserInputRequired)
	}
	var d orchestrator.UserInputRequiredData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// toolResult is the result event of the run's call callID.
func toolResult(t *testing.T, evs []orchestrator.Event, name string) orchestrator.ToolResultData {
	t.Helper()
	for _, ev := range evs {
		if ev.Type != orchestrator.EventToolResult {
			continue
		}
		var d orchestrator.ToolResultData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no tool_result of %s in %v", name, types(evs))
	return orchestrator.ToolResultData{}
}

// ask_user pauses the run: user_input_required with the question, the run
// stored waiting_input with the question as a pending approval of kind
// question, nothing executed. An answer outside the options is refused;
// the right one resumes the run, the model reads it as the call's result,
// and a second answer is a conflict. The log is dense across the wait.
func TestAskUserAnswered(t *testing.T) {
	h := askHarness(t, nil, orchestrator.QuestionPolicy{}, call(orchestrator.AskUserTool, pickEnv), orchestratortest.Turn{Content: "Deploying to prod."})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "deploy", ToolNames: []string{orchestrator.AskUserTool}})
	got := wait(t.Context(), h.o, "u", run.ID, 0)
	if got.err != nil || !got.w.Paused() || got.w.Run.State != orchestrator.RunWaitingInput {
		t.Fatalf("Wait = %+v, %v; want the question's pause", got.w, got.err)
	}
	d := questionData(t, got.w.Event)
	if d.Question != "Which environment?" || !slices.Equal(d.Options, []string{"staging", "prod"}) || d.QuestionID == "" ||
		string(d.Default) != `"staging"` || d.ExpiresAt == nil || d.CallID == "" {
		t.Fatalf("user_input_required = %+v", d)
	}
	if len(got.w.Approvals) != 1 || got.w.Approvals[0].ID != d.QuestionID || got.w.Approvals[0].Kind != orchestrator.KindQuestion ||
		!slices.Equal(got.w.Approvals[0].Decisions, []string{orchestrator.DecisionAnswer, orchestrator.DecisionDecline, orchestrator.DecisionCancel}) {
		t.Fatalf("pending = %+v; want the question", got.w.Approvals)
	}
	if r, err := h.store.GetRun(t.Context(), run.ID); err != nil || r.State != orchestrator.RunWaitingInput || r.Pending == nil {
		t.Fatalf("stored run = %+v, %v; want waiting_input with its round", r, err)
	}
	if _, err := h.o.Answer(t.Context(), "u", run.ID, "", json.RawMessage(`"production"`)); !errors.Is(err, orchestrator.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "staging, prod") {
		t.Fatalf("answer outside the options: %v; want invalid, naming the options", err)
	}
	if _, err := h.o.Answer(t.Context(), "u", run.ID, "", json.RawMessage(`["staging","prod"]`)); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("two answers to a single choice: %v; want invalid", err)
	}
	if _, err := h.o.Answer(t.Context(), "mallory", run.ID, "", json.RawMessage(`"prod"`)); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's answer: %v; want not found", err)
	}
	a, err := h.o.Answer(t.Context(), "u", run.ID, "", json.RawMessage(`" prod "`))
	if err != nil || a.State != orchestrator.ApprovalAnswered || string(a.Decision.Answer) != `"prod"` || a.Decision.By != "u" {
		t.Fatalf("Answer = %+v, %v", a, err)
	}
	if _, err := h.o.Answer(t.Context(), "u", run.ID, d.QuestionID, json.RawMessage(`"staging"`)); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("second answer: %v; want conflict", err)
	}
	on := wait(t.Context(), h.o, "u", run.ID, got.w.Event.Seq)
	if on.err != nil || on.w.Paused() || on.w.Event.Type != orchestrator.EventFinal {
		t.Fatalf("Wait after the answer = %+v, %v", on.w, on.err)
	}
	assertDense(t, on.evs, got.w.Event.Seq+1)
	if f := final(t, on.evs); f.State != orchestrator.RunFinished || f.Answer != "Deploying to prod." {
		t.Fatalf("final = %+v", f)
	}
	var answered orchestrator.UserInputAnsweredData
	if evs := ofType(on.evs, orchestrator.EventUserInputAnswered); len(evs) != 1 || json.Unmarshal(evs[0].Data, &answered) != nil ||
		answered.QuestionID != d.QuestionID || string(answered.Answer) != `"prod"` {
		t.Fatalf("user_input_answered = %+v in %v", answered, types(on.evs))
	}
	if res := toolResult(t, on.evs, orchestrator.AskUserTool); res.IsError || res.Content != `{"answer":"prod"}` {
		t.Fatalf("the model reads %+v; want the answer", res)
	}
	reqs := h.model.Requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != orchestrator.RoleTool || !strings.Contains(m.Content, `"prod"`) {
		t.Fatalf("the model's last message = %+v; want the answer as the call's result", m)
	}
}

// A question nobody answers takes its default when the policy says so,
// and the model is told it was the default; without a default the run
// ends failed, saying which question went unanswered; with on_timeout
// fail it fails even with one.
func TestAskUserTimeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy orchestrator.QuestionPolicy
		args   string
		state  orchestrator.RunState
	}{
		{"the question's default", orchestrator.QuestionPolicy{Timeout: time.Millisecond}, pickEnv, orchestrator.RunFinished},
		{"the configured default", orchestrator.QuestionPolicy{Timeout: time.Millisecond, DefaultAnswer: "prod"},
			`{"question":"Which environment?","options":["staging","prod"]}`, orchestrator.RunFinished},
		{"no default", orchestrator.QuestionPolicy{Timeout: time.Millisecond}, `{"question":"Which environment?"}`, orchestrator.RunFailed},
		{"a configured default that is no option", orchestrator.QuestionPolicy{Timeout: time.Millisecond, DefaultAnswer: "qa"},
			`{"question":"Which environment?","options":["staging","prod"]}`, orchestrator.RunFailed},
		{"on_timeout fail", orchestrator.QuestionPolicy{Timeout: time.Millisecond, OnTimeout: orchestrator.QuestionTimeoutFail}, pickEnv, orchestrator.RunFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := askHarness(t, nil, tc.policy, call(orchestrator.AskUserTool, tc.args), orchestratortest.Turn{Content: "Went on."})
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "deploy", ToolNames: []string{orchestrator.AskUserTool}})
			evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventFinal)
			f := final(t, evs)
			if f.State != tc.state {
				t.Fatalf("final = %+v; want %s", f, tc.state)
			}
			if tc.state == orchestrator.RunFailed {
				if !strings.Contains(f.Error, "Which environment?") || !strings.Contains(f.Error, "in time") {
					t.Fatalf("error = %q; want the unanswered question named", f.Error)
				}
				return
			}
			res := toolResult(t, evs, orchestrator.AskUserTool)
			if !strings.Contains(res.Content, `"answer":"`) || !strings.Contains(res.Content, "default") {
				t.Fatalf("the model reads %q; want the default, said to be one", res.Content)
			}
		})
	}
}

// A cancel ends the run cancelled, without a model call after the pause.
func TestAskUserCancel(t *testing.T) {
	h := askHarness(t, nil, orchestrator.QuestionPolicy{}, call(orchestrator.AskUserTool, pickEnv))
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "deploy", ToolNames: []string{orchestrator.AskUserTool}})
	got := wait(t.Context(), h.o, "u", run.ID, 0)
	if !got.w.Paused() {
		t.Fatalf("Wait = %+v, %v", got.w, got.err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, got.w.Approvals[0].ID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionApprove}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("approve on a question: %v; want invalid", err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, got.w.Approvals[0].ID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionCancel}); err != nil {
		t.Fatal(err)
	}
	on := wait(t.Context(), h.o, "u", run.ID, got.w.Event.Seq)
	if f := final(t, on.evs); f.State != orchestrator.RunCancelled {
		t.Fatalf("final = %+v; want cancelled", f)
	}
	if n := len(h.model.Requests()); n != 1 {
		t.Fatalf("model called %d times; want once", n)
	}
}

// Arguments that ask nothing answerable are the call's error result: the
// model reads why, and the run does not pause.
func TestAskUserBadArguments(t *testing.T) {
	h := askHarness(t, nil, orchestrator.QuestionPolicy{},
		call(orchestrator.AskUserTool, `{"question":"Pick","multi":true}`), orchestratortest.Turn{Content: "Fine."})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "go", ToolNames: []string{orchestrator.AskUserTool}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventFinal)
	if res := toolResult(t, evs, orchestrator.AskUserTool); !res.IsError || !strings.Contains(res.Content, "multi needs options") {
		t.Fatalf("result = %+v; want the argument error", res)
	}
	if n := len(ofType(evs, orchestrator.EventUserInputRequired)); n != 0 {
		t.Fatalf("%d questions asked; want none", n)
	}
}

// A question asked on one replica is answered through another sharing the
// store, which resumes the run; Wait there follows it to its end.
func TestAskUserAnsweredOnAnotherReplica(t *testing.T) {
	store := orchestratortest.NewMemStore()
	a := askHarness(t, store, orchestrator.QuestionPolicy{}, call(orchestrator.AskUserTool, `{"question":"Name?"}`))
	b := askHarness(t, store, orchestrator.QuestionPolicy{}, orchestratortest.Turn{Content: "Hello, Ada."})
	run := mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "greet me", ToolNames: []string{orchestrator.AskUserTool}})
	got := wait(t.Context(), b.o, "u", run.ID, 0)
	if got.err != nil || !got.w.Paused() || len(got.w.Approvals) != 1 {
		t.Fatalf("Wait on the other replica = %+v, %v", got.w, got.err)
	}
	if _, err := b.o.Answer(t.Context(), "u", run.ID, "", json.RawMessage(`"Ada"`)); err != nil {
		t.Fatal(err)
	}
	on := wait(t.Context(), b.o, "u", run.ID, got.w.Event.Seq)
	if f := final(t, on.evs); on.err != nil || f.State != orchestrator.RunFinished || f.Answer != "Hello, Ada." {
		t.Fatalf("final = %+v, %v", f, on.err)
	}
	assertDense(t, on.evs, got.w.Event.Seq+1)
}

func TestQuestionAnswers(t *testing.T) {
	for _, tc := range []struct {
		args, answer, want, err string
	}{
		{`{"question":"q"}`, `"anything"`, `"anything"`, ""},
		{`{"question":"q","options":["a","b"]}`, `"a"`, `"a"`, ""},
		{`{"question":"q","options":["a","b"]}`, `"c"`, "", "not one of the options"},
		{`{"question":"q","options":["a","b"],"free_text":true}`, `"c"`, `"c"`, ""},
		{`{"question":"q","options":["a","b"],"multi":true}`, `["a","b"]`, `["a","b"]`, ""},
		{`{"question":"q","options":["a","b"],"multi":true}`, `"b"`, `["b"]`, ""},
		{`{"question":"q","options":["a","b"],"multi":true}`, `[]`, "", "required"},
		{`{"question":"q"}`, `""`, "", "empty"},
		{`{"question":"q"}`, `null`, "", "required"},
		{`{"question":"q"}`, `42`, "", "string"},
		{`{"question":"q"}`, `"` + strings.Repeat("x", 4001) + `"`, "", "longer than 4000"},
	} {
		q, err := orchestrator.ParseQuestion(json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		got, err := q.CheckAnswer(json.RawMessage(tc.answer))
		if tc.err != "" {
			if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s answered %.20s: %v; want %q", tc.args, tc.answer, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s answered %s = %s, %v; want %s", tc.args, tc.answer, got, err, tc.want)
		}
	}
	for args, want := range map[string]string{
		`{}`:                                               "needs a question",
		`{"question":"q","options":["a","a"]}`:             "twice",
		`{"question":"q","options":[""]}`:                  "option 1",
		`{"question":"q","multi":true}`:                    "multi needs options",
		`{"question":"q","options":["a"],"default":"b"}`:   "default",
		`{"question":"` + strings.Repeat("x", 4001) + `"}`: "longer than 4000",
		`[1]`: "needs",
	} {
		if _, err := orchestrator.ParseQuestion(json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseQuestion(%.40s) = %v; want %q", args, err, want)
		}
	}
}
