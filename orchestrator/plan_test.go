package orchestrator_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// flaky fails every call: the tool a replan is about.
func flaky() orchestrator.Toolset {
	t := orchestratortest.NewTool("fetch", true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return orchestrator.ErrorResult("connection refused"), nil
	})
	return orchestrator.StaticToolset{SetName: "flaky", List: []orchestrator.Tool{t}}
}

func call(name, args string) orchestratortest.Turn {
	return orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call(name, args)}}
}

const twoSteps = `{"steps":[{"title":"fetch the data","status":"running"},{"title":"write the report","status":"pending"}]}`

func planEvents(t *testing.T, evs []orchestrator.Event, typ string, into any) int {
	t.Helper()
	got := ofType(evs, typ)
	if len(got) > 0 && into != nil {
		if err := json.Unmarshal(got[len(got)-1].Data, into); err != nil {
			t.Fatal(err)
		}
	}
	return len(got)
}

// A tool that fails three times in a row makes the loop ask for a replan;
// the model answers with the plan tool and a strategy, which is recorded;
// the run goes on and ends with the model's answer.
func TestReplanAfterThreeFailures(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{flaky()},
		opts: orchestrator.Options{Replan: orchestrator.ReplanPolicy{Enabled: true}},
		turns: []orchestratortest.Turn{
			call("plan", twoSteps),
			call("fetch", `{}`), call("fetch", `{}`), call("fetch", `{}`),
			call("plan", `{"steps":[{"title":"fetch the data","status":"skipped"},{"title":"write the report","status":"running"}],"strategy":"skip_failed"}`),
			{Content: "Report written without the data."},
		}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "report", ToolNames: []string{"plan", "fetch"}})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "Report written without the data." || f.StopReason != orchestrator.StopModelResponse {
		t.Fatalf("final = %+v", f)
	}
	var replans []orchestrator.ReplanData
	for _, e := range ofType(evs, orchestrator.EventReplan) {
		var d orchestrator.ReplanData
		_ = json.Unmarshal(e.Data, &d)
		replans = append(replans, d)
	}
	if len(replans) != 2 || replans[0].Stage != "requested" || replans[0].Tool != "fetch" || replans[0].Failures != 3 ||
		!strings.Contains(replans[0].Error, "connection refused") || replans[1].Stage != "chosen" || replans[1].Strategy != orchestrator.StrategySkipFailed {
		t.Fatalf("replan events = %+v; want requested (fetch, 3 failures) then chosen skip_failed", replans)
	}
	// The replan request reached the model, after the third failure only.
	reqs := h.model.Requests()
	asked := func(r *orchestrator.ModelRequest) bool {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "[Replan needed]") {
				return true
			}
		}
		return false
	}
	if asked(reqs[3]) || !asked(reqs[4]) {
		t.Errorf("replan request in model requests 4 and 5: %v %v; want only after the third failure", asked(reqs[3]), asked(reqs[4]))
	}
	var plan orchestrator.PlanData
	if n := planEvents(t, evs, orchestrator.EventPlan, &plan); n != 2 || plan.Steps[0].Status != orchestrator.StepSkipped || plan.Strategy != "skip_failed" {
		t.Errorf("plan events: %d, last %+v", n, plan)
	}
}

// The abort strategy ends the run with the model's reason.
func TestReplanAbortEndsTheRun(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{flaky()},
		opts: orchestrator.Options{Replan: orchestrator.ReplanPolicy{Enabled: true, MaxRetries: 2}},
		turns: []orchestratortest.Turn{
			call("fetch", `{}`), call("fetch", `{}`),
			call("plan", `{"steps":[{"title":"fetch the data","status":"failed"}],"strategy":"abort","note":"The data source is down."}`),
			{Content: "never asked"},
		}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "report", ToolNames: []string{"plan", "fetch"}})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "The data source is down." || f.StopReason != orchestrator.StopAborted || f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v; want the note, stop reason aborted", f)
	}
	if n := len(h.model.Requests()); n != 3 {
		t.Errorf("model called %d times; want 3 (no call after abort)", n)
	}
}

// Off by default, and bounded: without the policy nothing is injected;
// with MaxReplans 1 the second streak asks nothing.
func TestReplanOffAndBounded(t *testing.T) {
	fails := []orchestratortest.Turn{call("fetch", `{}`), call("fetch", `{}`), call("fetch", `{}`), call("fetch", `{}`), call("fetch", `{}`), call("fetch", `{}`), {Content: "gave up"}}
	for _, tc := range []struct {
		name   string
		policy orchestrator.ReplanPolicy
		want   int
	}{{"off", orchestrator.ReplanPolicy{}, 0}, {"max one", orchestrator.ReplanPolicy{Enabled: true, MaxReplans: 1}, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{flaky()},
				opts: orchestrator.Options{Replan: tc.policy}, settings: &orchestrator.ModelSettings{MaxRounds: 10, Stream: true}, turns: fails})
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"fetch"}})
			evs := collect(t, h.o, run.ID, 0)
			if n := planEvents(t, evs, orchestrator.EventReplan, nil); n != tc.want {
				t.Errorf("replan events = %d; want %d", n, tc.want)
			}
		})
	}
}

// The goal check: after a step is completed the model is asked whether the
// goal is met; "yes" skips the rest and tells the model to answer.
func TestGoalCheckStopsEarly(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall,
		opts: orchestrator.Options{Replan: orchestrator.ReplanPolicy{GoalCheck: true}},
		turns: []orchestratortest.Turn{
			call("plan", `{"steps":[{"title":"look it up","status":"completed"},{"title":"double-check","status":"pending"},{"title":"format","status":"pending"}]}`),
			{Content: "yes"}, // the goal check
			{Content: "42"},
		}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "the answer?", ToolNames: []string{"plan"}})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "42" {
		t.Fatalf("final = %+v", f)
	}
	var gc orchestrator.GoalCheckData
	if n := planEvents(t, evs, orchestrator.EventGoalCheck, &gc); n != 1 || !gc.Met {
		t.Fatalf("goal_check events = %d, last %+v; want one, met", n, gc)
	}
	var plan orchestrator.PlanData
	planEvents(t, evs, orchestrator.EventPlan, &plan)
	if plan.Steps[1].Status != orchestrator.StepSkipped || plan.Steps[2].Status != orchestrator.StepSkipped || plan.Steps[0].Status != orchestrator.StepCompleted {
		t.Errorf("last plan = %+v; want the open steps skipped", plan)
	}
	reqs := h.model.Requests()
	if len(reqs) != 3 || len(reqs[1].Tools) != 0 || !strings.Contains(reqs[2].Messages[len(reqs[2].Messages)-1].Content, "[Goal met]") {
		t.Errorf("model requests: %d; want plan, a tool-less goal check, then the answer told the goal is met", len(reqs))
	}
}

// Bad plans are error results the model reads, never a crash.
func TestPlanToolValidates(t *testing.T) {
	for _, args := range []string{`{}`, `{"steps":[]}`, `{"steps":[{"title":"","status":"pending"}]}`,
		`{"steps":[{"title":"a","status":"done"}]}`, `{"steps":[{"title":"a","status":"pending"}],"strategy":"pray"}`, `[1]`} {
		h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, turns: []orchestratortest.Turn{call("plan", args), {Content: "ok"}}})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"计划面板"}})
		evs := collect(t, h.o, run.ID, 0)
		var res struct {
			IsError bool `json:"is_error"`
		}
		if n := planEvents(t, evs, orchestrator.EventToolResult, &res); n != 1 || !res.IsError || len(ofType(evs, orchestrator.EventPlan)) != 0 {
			t.Errorf("plan %s: tool_result error %v, plan events %d; want an error result and no plan", args, res.IsError, len(ofType(evs, orchestrator.EventPlan)))
		}
	}
}
