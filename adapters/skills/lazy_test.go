package skills_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

const reviewBody = "# Code review checklist"

// world is a store shared by orchestrators that come and go (a restart).
type world struct {
	t     *testing.T
	store orchestrator.Store
	set   *skills.Set
}

func newWorld(t *testing.T, retention int) *world {
	return &world{t: t, store: orchestratortest.NewMemStore(),
		set: skills.New(&skills.Options{Paths: []string{repoSkills}, RetentionTurns: retention,
			Workspace: func(string) (string, error) { return t.TempDir(), nil }})}
}

// orch starts an orchestrator over the world's store, playing turns.
func (w *world) orch(mode string, turns ...orchestratortest.Turn) (*orchestrator.Orchestrator, *orchestratortest.ScriptedModel) {
	model := orchestratortest.NewScriptedModel(turns...)
	reg := orchestrator.NewRegistry("", nil, w.set)
	o := orchestrator.New(w.store, orchestratortest.Models{Model: model,
		Settings: orchestrator.ModelSettings{ToolCallMode: mode, MaxRounds: 4}}, reg, &orchestrator.Options{})
	w.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = o.Close(ctx)
	})
	return o, model
}

// run runs one question to its end and returns the session id.
func run(t *testing.T, o *orchestrator.Orchestrator, req orchestrator.RunRequest) string {
	t.Helper()
	req.UserID = "alice"
	r, err := o.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var last orchestrator.Event
	for ev, err := range o.Events(ctx, "", r.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	if last.Type != orchestrator.EventFinal {
		t.Fatalf("run ended with %s: %s", last.Type, last.Data)
	}
	return r.SessionID
}

func systemOf(req *orchestrator.ModelRequest) string { return req.Messages[0].Content }

// TestLazyLoadingRetentionAndRestore: the prompt lists summaries only until
// load_skill, carries the body from the next model call on, keeps it for
// retention_turns turns (across a restart: a new orchestrator over the same
// store) and then drops it.
func TestLazyLoadingRetentionAndRestore(t *testing.T) {
	w := newWorld(t, 2)
	answer := orchestratortest.Turn{Content: "ok"}
	o1, m1 := w.orch(orchestrator.ModeToolCall,
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("load_skill", `{"name":"code-review"}`)}}, answer)
	sess := run(t, o1, orchestrator.RunRequest{Question: "review main.go", ToolNames: []string{"load_skill"}})
	reqs := m1.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	before, after := systemOf(reqs[0]), systemOf(reqs[1])
	for _, name := range []string{"code-review", "data-report", "chinese-writing"} {
		if !strings.Contains(before, "- "+name+": ") {
			t.Errorf("first prompt lacks the summary of %s", name)
		}
	}
	if strings.Contains(before, reviewBody) {
		t.Error("first prompt already carries the skill's body")
	}
	if !strings.Contains(after, reviewBody) {
		t.Errorf("prompt after load_skill lacks the body:\n%s", after)
	}

	// A restart: a new orchestrator on the same store finds the skill
	// loaded from the history (turn 1 of retention 2).
	o2, m2 := w.orch(orchestrator.ModeToolCall, answer)
	run(t, o2, orchestrator.RunRequest{SessionID: sess, Question: "and util.go?", ToolNames: []string{"load_skill"}})
	if got := systemOf(m2.Requests()[0]); !strings.Contains(got, reviewBody) {
		t.Error("the body is gone after a restart, within retention")
	}
	// Turn 2: past retention, the body is dropped; the summary stays.
	run(t, o2, orchestrator.RunRequest{SessionID: sess, Question: "thanks", ToolNames: []string{"load_skill"}})
	got := systemOf(m2.Requests()[1])
	if strings.Contains(got, reviewBody) || !strings.Contains(got, "- code-review: ") {
		t.Errorf("after retention the prompt should list the summary only:\n%s", got)
	}
}

// TestSkillNamedInToolNamesAndPreload: naming a skill offers its summary
// (only) and load_skill; preload_skills puts the body in from the start;
// the entry tool is offered only while its skill is loaded.
func TestSkillNamedInToolNamesAndPreload(t *testing.T) {
	w := newWorld(t, 5)
	o, m := w.orch(orchestrator.ModeFunctionCall,
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("load_skill", `{"name":"data-report"}`)}},
		orchestratortest.Turn{Content: "ok"}, orchestratortest.Turn{Content: "ok"})
	run(t, o, orchestrator.RunRequest{Question: "summarise data.csv", ToolNames: []string{"data-report"}})
	reqs := m.Requests()
	first, second := systemOf(reqs[0]), systemOf(reqs[1])
	if !strings.Contains(first, "- data-report: ") || strings.Contains(first, "code-review") {
		t.Errorf("naming data-report should list it alone:\n%s", first)
	}
	names := func(r *orchestrator.ModelRequest) (out []string) {
		for _, s := range r.Tools {
			out = append(out, s.Name)
		}
		return out
	}
	if got := strings.Join(names(reqs[0]), ","); got != "final_response,load_skill" {
		t.Errorf("tools before loading = %s, want final_response,load_skill", got)
	}
	if got := strings.Join(names(reqs[1]), ","); got != "data-report,final_response,load_skill" {
		t.Errorf("tools after loading = %s", got)
	}
	if !strings.Contains(second, "# Data report") {
		t.Error("body missing after load_skill")
	}
	run(t, o, orchestrator.RunRequest{Question: "write nicely", ToolNames: []string{"chinese-writing"}, PreloadSkills: []string{"chinese-writing"}})
	if got := systemOf(m.Requests()[2]); !strings.Contains(got, "中文写作风格") {
		t.Errorf("preloaded body missing:\n%s", got)
	}
}

// TestLoadSkillRefusesSkillsNotOffered: a run that offers one skill cannot
// load another.
func TestLoadSkillRefusesSkillsNotOffered(t *testing.T) {
	w := newWorld(t, 5)
	o, m := w.orch(orchestrator.ModeToolCall,
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("load_skill", `{"name":"code-review"}`)}},
		orchestratortest.Turn{Content: "ok"})
	run(t, o, orchestrator.RunRequest{Question: "q", ToolNames: []string{"data-report"}})
	second := m.Requests()[1]
	if strings.Contains(systemOf(second), reviewBody) {
		t.Error("a skill the run does not offer was loaded")
	}
	if last := second.Messages[len(second.Messages)-1].Content; !strings.Contains(last, "the skills are: data-report") {
		t.Errorf("tool result = %q", last)
	}
}
