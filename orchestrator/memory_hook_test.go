package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// fakeMemory is long-term memory as the core meets it: a block per user,
// a switch per user, and a record of what the core told it.
type fakeMemory struct {
	mu       sync.Mutex
	blocks   map[string]string
	off      map[string]bool
	asked    []string // "user/lang" of each PromptBlock
	finished []orchestrator.FinishedRun
	forgot   []string
}

func (m *fakeMemory) PromptBlock(_ context.Context, userID, lang string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, userID+"/"+lang)
	if m.off[userID] {
		return "", true
	}
	return m.blocks[userID], false
}

func (m *fakeMemory) RunFinished(_ context.Context, r orchestrator.FinishedRun) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished = append(m.finished, r)
}

func (m *fakeMemory) ForgetUser(userID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgot = append(m.forgot, userID)
}

func (m *fakeMemory) state() (asked []string, finished []orchestrator.FinishedRun, forgot []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.asked), slices.Clone(m.finished), slices.Clone(m.forgot)
}

func memoryHarness(t *testing.T, m *fakeMemory, turns ...orchestratortest.Turn) *harness {
	return newHarness(t, harnessOpts{opts: orchestrator.Options{Memory: m}, turns: turns})
}

// The user's block is in the run's system prompt, and only in their
// runs'; a finished run is told to memory before its final event is
// visible, with its language.
func TestMemoryBlockAndFinishedRun(t *testing.T) {
	m := &fakeMemory{blocks: map[string]string{"alice": "[Long-term Memory]\nalice likes green tea"}}
	h := memoryHarness(t, m, orchestratortest.Turn{Content: "ok"})
	for _, u := range []string{"alice", "bob"} {
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: u, Question: "hi", Language: "zh"})
		if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
			t.Fatalf("%s's run ended %s", u, f.State)
		}
		// Told before the final event was visible: already recorded.
		_, finished, _ := m.state()
		if n := len(finished); n == 0 || finished[n-1].ID != run.ID {
			t.Fatalf("memory not told of %s's finished run before its end was visible: %+v", u, finished)
		}
		if r := finished[len(finished)-1]; r.SessionID != run.SessionID || r.UserID != u || r.Language != "zh" {
			t.Errorf("FinishedRun = %+v", r)
		}
	}
	reqs := h.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls; want 2", len(reqs))
	}
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "alice likes green tea") {
		t.Errorf("alice's system prompt lacks her memory:\n%s", sys)
	}
	if sys := reqs[1].Messages[0].Content; strings.Contains(sys, "alice likes green tea") || strings.Contains(sys, "[Long-term Memory]") {
		t.Errorf("bob's system prompt holds alice's memory:\n%s", sys)
	}
	if asked, _, _ := m.state(); !slices.Equal(asked, []string{"alice/zh", "bob/zh"}) {
		t.Errorf("PromptBlock asked for %v", asked)
	}
}

// Memory hears only of runs that finished and whose prompt found the
// switch on.
func TestMemoryNotToldOfOtherEnds(t *testing.T) {
	cases := []struct {
		name  string
		off   bool
		turn  orchestratortest.Turn
		state orchestrator.RunState
	}{
		{"switch off", true, orchestratortest.Turn{Content: "ok"}, orchestrator.RunFinished},
		{"failed", false, orchestratortest.Turn{Err: errors.New("model down")}, orchestrator.RunFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := &fakeMemory{off: map[string]bool{"u": c.off}}
			h := memoryHarness(t, m, c.turn)
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "hi"})
			if f := final(t, collect(t, h.o, run.ID, 0)); f.State != c.state {
				t.Fatalf("run ended %s; want %s", f.State, c.state)
			}
			if _, finished, _ := m.state(); len(finished) != 0 {
				t.Errorf("memory told of %+v", finished)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		m := &fakeMemory{}
		gate, started := make(chan struct{}), make(chan struct{})
		defer close(gate)
		h := memoryHarness(t, m, orchestratortest.Turn{Content: "late", Wait: gate, Started: started})
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "hi"})
		<-started
		if _, err := h.o.Cancel(t.Context(), "u", run.ID); err != nil {
			t.Fatal(err)
		}
		if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunCancelled {
			t.Fatalf("run ended %s", f.State)
		}
		if _, finished, _ := m.state(); len(finished) != 0 {
			t.Errorf("memory told of a cancelled run: %+v", finished)
		}
	})
}

// Deleting a user's data tells memory to forget the user, and only them;
// a refused deletion forgets nothing.
func TestDeleteUserDataForgetsMemory(t *testing.T) {
	m := &fakeMemory{}
	gate, started := make(chan struct{}), make(chan struct{})
	h := memoryHarness(t, m, orchestratortest.Turn{Content: "slow", Wait: gate, Started: started}, orchestratortest.Turn{Content: "ok"})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "hi"})
	<-started
	if err := h.o.DeleteUserData(t.Context(), "alice"); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("DeleteUserData during a run = %v; want ErrConflict", err)
	}
	if _, _, forgot := m.state(); len(forgot) != 0 {
		t.Errorf("a refused deletion forgot %v", forgot)
	}
	close(gate)
	collect(t, h.o, run.ID, 0)
	if err := h.o.DeleteUserData(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	if _, _, forgot := m.state(); !slices.Equal(forgot, []string{"alice"}) {
		t.Errorf("forgot %v; want alice", forgot)
	}
	if err := h.o.DeleteUserData(t.Context(), "a/b"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("DeleteUserData(a/b) = %v; want ErrInvalidArgument", err)
	}
}

// The default language is the one runs that name none get, from the next
// run on; "" puts back English.
func TestSetDefaultLanguage(t *testing.T) {
	m := &fakeMemory{}
	h := memoryHarness(t, m, orchestratortest.Turn{Content: "ok"})
	for _, lang := range []string{"zh", "", "zh"} {
		h.o.SetDefaultLanguage(lang)
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "hi"})
		collect(t, h.o, run.ID, 0)
	}
	named := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "hi", Language: "en"})
	collect(t, h.o, named.ID, 0)
	asked, finished, _ := m.state()
	if !slices.Equal(asked, []string{"u/zh", "u/en", "u/zh", "u/en"}) {
		t.Errorf("languages asked = %v", asked)
	}
	var langs []string
	for _, r := range finished {
		langs = append(langs, r.Language)
	}
	if !slices.Equal(langs, []string{"zh", "en", "zh", "en"}) {
		t.Errorf("languages of the finished runs = %v", langs)
	}
	// The prompts differ by language too.
	reqs := h.model.Requests()
	if reqs[0].Messages[0].Content == reqs[1].Messages[0].Content {
		t.Error("the zh and en system prompts are the same")
	}
}
