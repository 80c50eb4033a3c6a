package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/memory/memorytest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// harness is an orchestrator with long-term memory over in-memory stores
// and a scripted model that answers the runs and writes the summaries.
type harness struct {
	o     *orchestrator.Orchestrator
	mem   *memory.Memory
	model *orchestratortest.ScriptedModel
}

func newHarness(t *testing.T, opts *memory.Options, turns ...orchestratortest.Turn) *harness {
	t.Helper()
	h := &harness{model: orchestratortest.NewScriptedModel(turns...)}
	store := orchestratortest.NewMemStore()
	models := orchestratortest.Models{Model: h.model, Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 6, Stream: true}}
	h.mem = memory.New(memorytest.NewMemStore(), store, models, opts)
	h.o = orchestrator.New(store, models, orchestrator.NewRegistry("", nil), &orchestrator.Options{Memory: h.mem})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.o.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		h.mem.Close() // after the core: a run's end may queue a task
	})
	return h
}

func memoryHarness(t *testing.T, max int, turns ...orchestratortest.Turn) *harness {
	t.Helper()
	return newHarness(t, &memory.Options{Enabled: true, MaxRecords: max, PollInterval: 10 * time.Millisecond}, turns...)
}

// final follows a run to its end and returns its final event's payload.
func final(t *testing.T, o *orchestrator.Orchestrator, runID string) orchestrator.FinalData {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var last orchestrator.Event
	for ev, err := range o.Events(ctx, "", runID, 0) {
		if err != nil {
			t.Fatalf("Events(%s): %v", runID, err)
		}
		last = ev
	}
	if last.Type != orchestrator.EventFinal {
		t.Fatalf("last event of %s is %q, not final", runID, last.Type)
	}
	var f orchestrator.FinalData
	if err := json.Unmarshal(last.Data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitMemoryDone polls the task log until n tasks of the user are done:
// the observable end of the workers' work.
func waitMemoryDone(t *testing.T, m *memory.Memory, user string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tasks, err := m.Tasks(t.Context(), memory.TaskFilter{UserID: user, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, x := range tasks {
			switch x.State {
			case memory.Done:
				done++
			case memory.Failed:
				t.Fatalf("memory task %s failed: %s", x.ID, x.Error)
			}
		}
		if done >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d memory tasks done after 20s", done, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runOnce(t *testing.T, h *harness, user, question, lang string) *orchestrator.Run {
	t.Helper()
	run, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: user, Question: question, Language: lang})
	if err != nil {
		t.Fatal(err)
	}
	final(t, h.o, run.ID)
	return run
}

// The 31st record drops the oldest: one record per session, at most
// MaxRecords (30) per user.
func TestMemory31stRecordDropsOldest(t *testing.T) {
	t.Parallel()
	h := memoryHarness(t, 30, orchestratortest.Turn{Content: "noted"})
	if err := h.mem.SetEnabled(t.Context(), "alice", true); err != nil {
		t.Fatal(err)
	}
	var sessions []string
	for i := range 31 {
		sessions = append(sessions, runOnce(t, h, "alice", fmt.Sprintf("fact %d", i), "").SessionID)
		if i == 29 {
			waitMemoryDone(t, h.mem, "alice", 30)
			if recs, _ := h.mem.Records(t.Context(), "alice"); len(recs) != 30 {
				t.Fatalf("after 30 sessions: %d records, want 30", len(recs))
			}
		}
	}
	waitMemoryDone(t, h.mem, "alice", 31)
	recs, err := h.mem.Records(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 {
		t.Fatalf("after 31 sessions: %d records, want 30", len(recs))
	}
	if recs[0].SessionID != sessions[30] {
		t.Errorf("newest record is of %s, want the 31st session %s", recs[0].SessionID, sessions[30])
	}
	for _, r := range recs {
		if r.SessionID == sessions[0] {
			t.Errorf("the first session's record is still there after the 31st")
		}
	}
}

// A session summarised again replaces its record; the summary is
// timestamped; the language of the run chooses the memory prompt.
func TestMemoryOneRecordPerSessionAndLanguage(t *testing.T) {
	t.Parallel()
	h := memoryHarness(t, 30, orchestratortest.Turn{Content: "好的"})
	if err := h.mem.SetEnabled(t.Context(), "li", true); err != nil {
		t.Fatal(err)
	}
	first := runOnce(t, h, "li", "我喜欢绿茶", "zh")
	waitMemoryDone(t, h.mem, "li", 1)
	again, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "li", Question: "还有乌龙茶", Language: "zh", SessionID: first.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	final(t, h.o, again.ID)
	waitMemoryDone(t, h.mem, "li", 2)
	recs, err := h.mem.Records(t.Context(), "li")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].SessionID != first.SessionID || !strings.HasPrefix(recs[0].Summary, "[20") {
		t.Fatalf("records = %+v; want one timestamped record of %s", recs, first.SessionID)
	}
	var summaries []*orchestrator.ModelRequest
	for _, r := range h.model.Requests() {
		if len(r.Messages) == 2 && r.Messages[0].Role == orchestrator.RoleSystem && strings.Contains(r.Messages[0].Content, "长期记忆") {
			summaries = append(summaries, r)
		}
	}
	if len(summaries) != 2 {
		t.Fatalf("%d summarisation calls with the Chinese memory prompt, want 2", len(summaries))
	}
	// The second summary reads the whole session: both questions, merged
	// into one user message.
	if u := summaries[1].Messages[1].Content; !strings.Contains(u, "我喜欢绿茶") || !strings.Contains(u, "还有乌龙茶") {
		t.Errorf("second summary's user message lacks the session:\n%s", u)
	}
	// The preview shows what a run would get.
	prompt, err := h.o.SystemPrompt(t.Context(), orchestrator.PromptRequest{UserID: "li", Language: "zh"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, "[Long-term Memory]") || !strings.Contains(prompt, recs[0].Summary) {
		t.Errorf("system prompt preview lacks the memory block:\n%s", prompt)
	}
}

// The block is newest first and within its budget: what does not fit is
// left out, and a first record larger than the budget is clipped.
func TestMemoryPromptBlockBudget(t *testing.T) {
	t.Parallel()
	recs := []memory.Record{
		{Summary: "newest " + strings.Repeat("a", 400)},
		{Summary: "middle " + strings.Repeat("b", 400)},
		{Summary: "oldest " + strings.Repeat("c", 400)},
	}
	block := memory.RenderForTest(recs, "en", 300)
	if !strings.HasPrefix(block, "[Long-term Memory]") || !strings.Contains(block, "newest") || !strings.Contains(block, "middle") || strings.Contains(block, "oldest") {
		t.Errorf("block with a budget of 300 tokens (about two records):\n%s", block)
	}
	if i, j := strings.Index(block, "newest"), strings.Index(block, "middle"); i > j {
		t.Errorf("records are not newest first:\n%s", block)
	}
	small := memory.RenderForTest(recs, "en", 80)
	if !strings.Contains(small, "newest") || strings.Contains(small, "middle") || len(small) > 80*4+200 {
		t.Errorf("block with a budget of 80 tokens: %d bytes\n%s", len(small), small)
	}
	if got := memory.RenderForTest(nil, "en", 300); got != "" {
		t.Errorf("block without records = %q, want empty", got)
	}
}

// Memory off (the default) or a user who never turned it on: no task.
func TestMemoryOffQueuesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, orchestratortest.Turn{Content: "ok"})
	runOnce(t, h, "alice", "hi", "")
	if _, err := h.mem.Records(t.Context(), "alice"); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Errorf("Records with memory off: %v, want ErrUnavailable", err)
	}
	m := memoryHarness(t, 30, orchestratortest.Turn{Content: "ok"})
	runOnce(t, m, "bob", "hi", "")
	tasks, err := m.mem.Tasks(t.Context(), memory.TaskFilter{})
	if err != nil || len(tasks) != 0 {
		t.Errorf("tasks of a user without memory = %v, %v; want none", tasks, err)
	}
}

// The switch as a run found it when it built its prompt decides: a run
// that started with memory off is not summarised even when its user turns
// memory on while it runs, and one that started with it on is not
// summarised when its user turns memory off before it ends.
func TestMemorySwitchDuringRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		before, during bool
	}{
		{"off then on", false, true},
		{"on then off", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			started, release := make(chan struct{}), make(chan struct{})
			h := memoryHarness(t, 30, orchestratortest.Turn{Content: "ok", Started: started, Wait: release})
			ctx := t.Context()
			if err := h.mem.SetEnabled(ctx, "carol", tc.before); err != nil {
				t.Fatal(err)
			}
			run, err := h.o.Start(ctx, orchestrator.RunRequest{UserID: "carol", Question: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			<-started // the prompt is built: the switch was read
			if err := h.mem.SetEnabled(ctx, "carol", tc.during); err != nil {
				t.Fatal(err)
			}
			close(release)
			if f := final(t, h.o, run.ID); f.State != orchestrator.RunFinished {
				t.Fatalf("run ended %s", f.State)
			}
			// The task is queued before the final event, so none now means none.
			tasks, err := h.mem.Tasks(ctx, memory.TaskFilter{UserID: "carol"})
			if err != nil || len(tasks) != 0 {
				t.Errorf("memory tasks = %v, %v; want none", tasks, err)
			}
		})
	}
	// And the control: on throughout is summarised.
	h := memoryHarness(t, 30, orchestratortest.Turn{Content: "ok"})
	if err := h.mem.SetEnabled(t.Context(), "dave", true); err != nil {
		t.Fatal(err)
	}
	runOnce(t, h, "dave", "hi", "")
	tasks, err := h.mem.Tasks(t.Context(), memory.TaskFilter{UserID: "dave"})
	if err != nil || len(tasks) != 1 {
		t.Errorf("memory tasks of a user with memory on = %v, %v; want one", tasks, err)
	}
}
