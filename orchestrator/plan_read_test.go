package orchestrator_test

import (
	"errors"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// Plan reads a run's plan as its last plan event left it, from the
// store; a run that made none has an empty plan (steps [], never nil),
// and another user's run is not found.
func TestPlanIsTheLastPlanEvent(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall,
		turns: []orchestratortest.Turn{
			call("plan", twoSteps),
			call("plan", `{"steps":[{"title":"fetch the data","status":"completed"},{"title":"write the report","status":"running"}]}`),
			{Content: "done"},
			{Content: "no plan here"},
		}})
	ctx := t.Context()
	planned := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "report", ToolNames: []string{"plan"}})
	evs := collect(t, h.o, planned.ID, 0)
	if n := len(ofType(evs, orchestrator.EventPlan)); n < 2 {
		t.Fatalf("%d plan events; want two updates: %v", n, types(evs))
	}
	p, err := h.o.Plan(ctx, "u", planned.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 2 || p.Steps[0].Status != orchestrator.StepCompleted || p.Steps[1].Status != orchestrator.StepRunning || p.Steps[1].Title != "write the report" {
		t.Errorf("Plan = %+v; want the second update", p)
	}
	if all, err := h.o.Plan(ctx, "", planned.ID); err != nil || len(all.Steps) != 2 {
		t.Errorf("unscoped Plan = %+v, %v", all, err)
	}

	plain := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "just answer"})
	collect(t, h.o, plain.ID, 0)
	if p, err := h.o.Plan(ctx, "u", plain.ID); err != nil || p.Steps == nil || len(p.Steps) != 0 {
		t.Errorf("Plan of a run without one = %+v, %v; want empty steps", p, err)
	}
	for _, c := range []struct {
		user, run string
		want      error
	}{
		{"mallory", planned.ID, orchestrator.ErrNotFound},
		{"u", "run_unknown", orchestrator.ErrNotFound},
		{"u", "", orchestrator.ErrInvalidArgument},
	} {
		if _, err := h.o.Plan(ctx, c.user, c.run); !errors.Is(err, c.want) {
			t.Errorf("Plan(%q, %q) = %v; want %v", c.user, c.run, err, c.want)
		}
	}
}
