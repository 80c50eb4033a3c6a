package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// fsTools are an MCP server's read and write tools.
func fsTools() orchestrator.Toolset {
	mk := func(name string, readOnly bool) orchestrator.Tool {
		tl := orchestratortest.NewTool(name, readOnly, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "ok"}, nil
		})
		tl.S.Source = orchestrator.SourceMCP
		return tl
	}
	return orchestrator.StaticToolset{SetName: "fs", List: []orchestrator.Tool{mk("fs@read", true), mk("fs@write", false)}}
}

// The tools a front-end offers every run join a run's selection when the
// user may use them; one the policy denies the user is left out, not an
// error (the run goes on without it); one no toolset offers is unknown,
// as any name is. What was offered is stored with the run.
func TestOfferedToolsFollowThePolicy(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{fsTools()},
		turns: []orchestratortest.Turn{{Content: "ok"}}})
	h.o.Registry().SetAccess(rules{"alice": {Denied: []string{"fs@write"}}})
	offer := []string{"fs@read", "fs@write"}
	cases := []struct {
		user string
		want []string
	}{
		{"alice", []string{"fs@read"}},
		{"bob", []string{"fs@read", "fs@write"}},
	}
	for _, c := range cases {
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: c.user, Question: "q", OfferedTools: offer, Caller: orchestrator.CallerAgent})
		if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
			t.Fatalf("%s's run ended %s", c.user, f.State)
		}
		reqs := h.model.Take()
		var got []string
		for _, name := range offered(reqs[0]) {
			if name == "fs@read" || name == "fs@write" || name == h.o.Registry().WireName("fs@read") || name == h.o.Registry().WireName("fs@write") {
				got = append(got, h.o.Registry().CanonicalName(name))
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s's run offers %v; want %v", c.user, got, c.want)
		}
		stored, err := h.store.GetRun(t.Context(), run.ID)
		if err != nil || stored.Spec == nil {
			t.Fatalf("stored run = %+v, %v", stored, err)
		}
		for _, name := range c.want {
			if !slices.Contains(stored.Spec.ToolNames, name) {
				t.Errorf("%s's stored spec %v lacks the offered %s", c.user, stored.Spec.ToolNames, name)
			}
		}
		if c.user == "alice" && slices.Contains(stored.Spec.ToolNames, "fs@write") {
			t.Errorf("alice's stored spec holds the tool she is denied: %v", stored.Spec.ToolNames)
		}
	}
	_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "bob", Question: "q", OfferedTools: []string{"fs@nothing"}, Caller: orchestrator.CallerAgent})
	if !errors.Is(err, orchestrator.ErrToolNotFound) {
		t.Errorf("an offered tool no toolset has = %v; want ErrToolNotFound", err)
	}
}

// A rule that cannot be read fails closed: every offered tool is left
// out, and the run goes on with the always-on tools alone.
func TestOfferedToolsWithAnUnreadableRule(t *testing.T) {
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{fsTools()},
		turns: []orchestratortest.Turn{{Content: "ok"}}})
	h.o.Registry().SetAccess(rules{}) // "broken"'s rule cannot be read
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "broken", Question: "q", OfferedTools: []string{"fs@read", "fs@write"}, Caller: orchestrator.CallerAgent})
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("run ended %s", f.State)
	}
	if got := offered(h.model.Requests()[0]); !slices.Equal(got, []string{"final_response"}) {
		t.Errorf("a user whose rule cannot be read is offered %v; want the always-on final_response alone", got)
	}
}

// The admission counters: runs holding a slot, runs queued, and the
// configured bounds; they go back to zero as the runs end.
func TestStatsCountSlotsAndQueue(t *testing.T) {
	h := newHarness(t, harnessOpts{opts: orchestrator.Options{MaxActiveRuns: 2, QueueSize: 3}, turns: []orchestratortest.Turn{{Content: "ok"}}})
	held := holdAll(t, h.model)
	if s := h.o.Stats(); s != (orchestrator.Stats{MaxActiveRuns: 2, QueueSize: 3}) {
		t.Fatalf("Stats before any run = %+v", s)
	}
	var runs []*orchestrator.Run
	for range 4 {
		runs = append(runs, mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", Caller: orchestrator.CallerAgent}))
	}
	held(2)
	if s := h.o.Stats(); s.Active != 2 || s.Queued != 2 {
		t.Errorf("Stats with four runs = %+v; want 2 active, 2 queued", s)
	}
	if _, err := h.o.Cancel(t.Context(), "u", runs[3].ID); err != nil {
		t.Fatal(err)
	}
	if s := h.o.Stats(); s.Active != 2 || s.Queued != 1 {
		t.Errorf("Stats after cancelling a queued run = %+v; want 2 active, 1 queued", s)
	}
	h.model.Hold(nil)
	for range 2 {
		h.model.Release()
	}
	for _, r := range runs {
		collect(t, h.o, r.ID, 0)
	}
	if s := h.o.Stats(); s.Active != 0 || s.Queued != 0 {
		t.Errorf("Stats after the runs = %+v; want none", s)
	}
}
