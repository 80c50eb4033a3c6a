package evaluation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The tests in this file play cases through the real core (a scripted
// model) with workspaces the core's file tools share with the manager.

// workspace is every case user's files: the evaluation's Workspace and
// the core's write_file and read_file tools at once.
type workspace struct {
	// mu guards the fields below.
	mu      sync.Mutex
	files   map[string]string // user + "/" + path
	reads   []string          // user/path of every read_file that found its file
	removed []string
}

func newWorkspace() *workspace { return &workspace{files: map[string]string{}} }

func (w *workspace) WriteFile(user, path string, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files[user+"/"+path] = string(data)
	return nil
}

func (w *workspace) ReadFile(user, path string) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.files[user+"/"+path]
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return []byte(s), nil
}

func (w *workspace) Remove(user string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.files {
		if strings.HasPrefix(k, user+"/") {
			delete(w.files, k)
		}
	}
	w.removed = append(w.removed, user)
	return nil
}

func (w *workspace) toolset() orchestrator.Toolset {
	type args struct{ Path, Content string }
	write := orchestratortest.NewTool("write_file", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var a args
		_ = json.Unmarshal(inv.Arguments, &a)
		_ = w.WriteFile(inv.UserID, a.Path, []byte(a.Content))
		return &orchestrator.ToolResult{Content: "wrote " + a.Path}, nil
	})
	read := orchestratortest.NewTool("read_file", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var a args
		_ = json.Unmarshal(inv.Arguments, &a)
		b, err := w.ReadFile(inv.UserID, a.Path)
		if err != nil {
			return orchestrator.ErrorResult(err.Error()), nil
		}
		w.mu.Lock()
		w.reads = append(w.reads, inv.UserID+"/"+a.Path)
		w.mu.Unlock()
		return &orchestrator.ToolResult{Content: string(b)}, nil
	})
	return orchestrator.StaticToolset{SetName: "files", List: []orchestrator.Tool{write, read}}
}

// newCore is the core with the scripted model (named "scripted") and the
// workspace's tools.
func newCore(t *testing.T, ws *workspace, turns ...orchestratortest.Turn) *orchestrator.Orchestrator {
	t.Helper()
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(turns...),
		Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeToolCall, Stream: true}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, orchestrator.NewRegistry("", nil, ws.toolset()), nil)
	t.Cleanup(func() {
		// Bounded: a run left running is the test's failure, not a hang.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = o.Close(ctx)
	})
	return o
}

// watch reads a run's events to eval_finished.
func watch(t *testing.T, m *Manager, id string) []Event {
	t.Helper()
	var evs []Event
	for ev, err := range m.Watch(t.Context(), id) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "eval_finished" {
		t.Fatalf("the stream did not end with eval_finished: %+v", evs)
	}
	return evs
}

func check(typ, value string) Check { return Check{Type: typ, Value: value} }

// One evaluation over cases that pass, fail, are skipped and break: each
// runs as a user of its own with its setup files in that user's
// workspace, removed afterwards; the stream says what happens in order;
// the score counts the graded cases only; what was streamed is stored.
func TestEvaluationPlaysEveryCase(t *testing.T) {
	ws := newWorkspace()
	o := newCore(t, ws,
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"out.txt","content":"42"}`)}},
		orchestratortest.Turn{Content: "done: 42"},
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("read_file", `{"path":"in.txt"}`)}},
		orchestratortest.Turn{Content: "it says secret"},
		orchestratortest.Turn{Content: "Sydney"},
		orchestratortest.Turn{Err: errors.New("model exploded")},
		orchestratortest.Turn{Content: "Canberra is the capital."},
	)
	sets := []CaseSet{{Name: "s", Cases: []Case{
		{ID: "write", Question: "write 42 to out.txt", Tools: []string{"write_file"},
			Checks: []Check{{Type: "file_exists", Path: "out.txt", Contains: "42"}, check("contains", "42")}},
		{ID: "setup", Question: "what does in.txt say?", Tools: []string{"read_file"}, Files: []File{{Path: "in.txt", Content: "secret"}},
			Checks: []Check{check("contains", "secret"), {Type: "contains", Path: "in.txt", Value: "secret"}}},
		{ID: "wrong", Question: "capital of Australia?", Checks: []Check{check("contains", "Canberra")}},
		{ID: "skipped", Question: "echo", Requires: Requires{MCPServers: []string{"everything"}}, Checks: []Check{check("contains", "x")}},
		{ID: "broken", Question: "anything", Checks: []Check{check("contains", "x")}},
		{ID: "judged", Question: "capital of Australia?", Checks: []Check{{Type: "judge", Rubric: "names Canberra"}}},
	}}}
	for i := range sets[0].Cases {
		sets[0].Cases[i].Set = "s"
	}
	var judged []string
	judge := func(_ context.Context, model, rubric, question, answer string) (bool, string, error) {
		judged = append(judged, model, rubric, question, answer)
		return strings.Contains(answer, "Canberra"), "PASS", nil
	}
	store := newMemStore()
	m := NewManager(o, ws, store, Options{Cases: func() ([]CaseSet, error) { return sets, nil },
		DefaultModel: func() string { return "scripted" }, HasModel: func(n string) bool { return n == "scripted" }, Judge: judge})
	defer m.Close()

	started, err := m.Start(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if started.Status != StatusRunning || started.ModelName != "scripted" || started.CaseCount != 6 ||
		!slices.Equal(started.CaseIDs, []string{"write", "setup", "wrong", "skipped", "broken", "judged"}) {
		t.Fatalf("started = %+v", started)
	}
	evs := watch(t, m, started.ID)

	// started, then per case: the item active, the item graded, progress.
	if len(evs) != 1+3*6+1 || evs[0].Type != "eval_started" {
		t.Fatalf("%d events, want 20", len(evs))
	}
	outcome := map[string]Item{}
	for i := range 6 {
		active, graded, progress := evs[1+3*i], evs[2+3*i], evs[3+3*i]
		a, _ := active.Data.(Item)
		g, _ := graded.Data.(Item)
		if active.Type != "eval_item" || a.Status != StatusActive || graded.Type != "eval_item" || g.CaseID != a.CaseID || progress.Type != "eval_progress" {
			t.Fatalf("case %d: events %s %+v, %s %+v, %s", i, active.Type, a, graded.Type, g, progress.Type)
		}
		if p, _ := progress.Data.(map[string]int); p["completed"] != i+1 || p["total"] != 6 {
			t.Errorf("progress after case %d = %v", i, p)
		}
		outcome[g.CaseID] = g
	}
	for id, want := range map[string]string{"write": StatusPassed, "setup": StatusPassed, "wrong": StatusFailed,
		"skipped": StatusSkipped, "broken": StatusError, "judged": StatusPassed} {
		if it := outcome[id]; it.Status != want {
			t.Errorf("%s: %s (error %q, checks %+v), want %s", id, it.Status, it.Error, it.Checks, want)
		}
	}
	if it := outcome["write"]; !slices.Equal(it.ToolCalls, []string{"write_file"}) || it.Answer != "done: 42" || it.Score != 1 ||
		it.MaxScore != 1 || len(it.Checks) != 2 || it.CoreRunID == "" || it.SessionID == "" || it.CaseSet != "s" {
		t.Errorf("write = %+v", it)
	}
	if it := outcome["wrong"]; it.Score != 0 || len(it.Checks) != 1 || it.Checks[0].Detail != `the answer does not contain "Canberra"` {
		t.Errorf("wrong = %+v", it)
	}
	if it := outcome["skipped"]; it.SkipReason != `needs MCP server "everything", which is not configured` || it.CoreRunID != "" {
		t.Errorf("skipped = %+v; want the reason and no run", it)
	}
	if it := outcome["broken"]; !strings.HasPrefix(it.Error, "the run ended failed") {
		t.Errorf("broken = %+v; want an error saying how its run ended", it)
	}
	if want := []string{"scripted", "names Canberra", "capital of Australia?", "Canberra is the capital."}; !slices.Equal(judged, want) {
		t.Errorf("the judge was asked %q, want %q", judged, want)
	}

	fin, _ := evs[len(evs)-1].Data.(Run)
	if fin.Status != StatusFinished || fin.Passed != 3 || fin.Failed != 1 || fin.Skipped != 1 || fin.Errors != 1 || fin.Score != 60 || fin.FinishedAt == nil {
		t.Errorf("finished = %+v; want 3 passed, 1 failed, 1 skipped, 1 error, score 60", fin)
	}

	// Each case ran as its own user, with its setup file there; every
	// workspace a case used is gone.
	ws.mu.Lock()
	reads, removed, left := slices.Clone(ws.reads), slices.Clone(ws.removed), len(ws.files)
	ws.mu.Unlock()
	user := func(id string) string { return UserPrefix + strings.TrimPrefix(started.ID, "ev_") + "-" + id }
	for id, it := range outcome {
		if it.UserID != user(id) {
			t.Errorf("%s ran as %q, want %q", id, it.UserID, user(id))
		}
	}
	if !slices.Equal(reads, []string{user("setup") + "/in.txt"}) {
		t.Errorf("reads = %q; want the setup file read in the setup case's workspace", reads)
	}
	for _, id := range []string{"write", "setup", "wrong", "broken", "judged"} {
		if !slices.Contains(removed, user(id)) {
			t.Errorf("the workspace of %s was not removed (removed %q)", id, removed)
		}
	}
	if left != 0 {
		t.Errorf("%d files left in the workspaces", left)
	}

	// Stored as streamed, and replayed from the store.
	run, items, err := m.Get(t.Context(), started.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != StatusFinished || run.Score != 60 || len(items) != 6 {
		t.Fatalf("stored run %+v with %d items", run, len(items))
	}
	for _, it := range items {
		if it.Status != outcome[it.CaseID].Status {
			t.Errorf("%s stored %s, streamed %s", it.CaseID, it.Status, outcome[it.CaseID].Status)
		}
	}
	if replay := watch(t, m, started.ID); len(replay) != 8 || replay[0].Type != "eval_started" {
		t.Errorf("replay of an ended run: %d events, want started, 6 items, finished", len(replay))
	}
}

// A case over case_timeout_s is an error naming the key; its core run is
// ended, and the evaluation goes on to the next case.
func TestCaseTimeout(t *testing.T) {
	ws := newWorkspace()
	o := newCore(t, ws,
		orchestratortest.Turn{Content: "never", Wait: make(chan struct{})},
		orchestratortest.Turn{Content: "ok"},
	)
	sets := []CaseSet{{Name: "s", Cases: []Case{
		{ID: "slow", Question: "q", Checks: []Check{check("contains", "x")}},
		{ID: "quick", Question: "q", Checks: []Check{check("contains", "ok")}},
	}}}
	m := NewManager(o, ws, newMemStore(), Options{Cases: func() ([]CaseSet, error) { return sets, nil }, CaseTimeout: 100 * time.Millisecond})
	defer m.Close()
	started, err := m.Start(t.Context(), Request{ModelName: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	watch(t, m, started.ID)
	_, items, err := m.Get(t.Context(), started.ID)
	if err != nil || len(items) != 2 {
		t.Fatalf("items %+v, %v", items, err)
	}
	slow, quick := items[0], items[1]
	if slow.Status != StatusError || slow.Error != "the case took longer than 100ms (evaluation.case_timeout_s)" {
		t.Errorf("slow = %s %q", slow.Status, slow.Error)
	}
	if r, err := o.GetRun(t.Context(), slow.UserID, slow.CoreRunID); err != nil || r.State != orchestrator.RunCancelled {
		t.Errorf("the slow case's core run = %+v, %v; want it cancelled", r, err)
	}
	if quick.Status != StatusPassed {
		t.Errorf("quick = %+v, want passed after the slow one", quick)
	}
}

// While an evaluation runs it cannot be deleted; cancelled, its case in
// flight ends cancelled with its core run, the cases after it never run,
// and a second cancel is a conflict naming its status.
func TestCancelledEvaluation(t *testing.T) {
	ws := newWorkspace()
	modelCalled := make(chan struct{})
	o := newCore(t, ws, orchestratortest.Turn{Content: "never", Wait: make(chan struct{}), Started: modelCalled})
	sets := []CaseSet{{Name: "s", Cases: []Case{
		{ID: "first", Question: "q", Files: []File{{Path: "f.txt", Content: "x"}}, Checks: []Check{check("contains", "x")}},
		{ID: "second", Question: "q", Checks: []Check{check("contains", "x")}},
	}}}
	m := NewManager(o, ws, newMemStore(), Options{Cases: func() ([]CaseSet, error) { return sets, nil }})
	defer m.Close()
	started, err := m.Start(t.Context(), Request{ModelName: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	<-modelCalled
	if _, err := m.Delete(t.Context(), started.ID); !errors.Is(err, orchestrator.ErrConflict) {
		t.Errorf("Delete while running = %v, want a conflict", err)
	}
	if _, err := m.Cancel(t.Context(), "ev_unknown"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("Cancel of an unknown run = %v, want not found", err)
	}
	// Follow it live before the cancel: a watch that begins after the end
	// replays the stored run, which keeps no eval_log.
	next, stop := iter.Pull2(m.Watch(t.Context(), started.ID))
	defer stop()
	first, err, ok := next()
	if !ok || err != nil {
		t.Fatalf("watching the running evaluation: %v", err)
	}
	if _, err := m.Cancel(t.Context(), started.ID); err != nil {
		t.Fatal(err)
	}
	evs := []Event{first}
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if evs[len(evs)-1].Type != "eval_finished" {
		t.Fatalf("the stream did not end with eval_finished: %+v", evs)
	}
	if fin, _ := evs[len(evs)-1].Data.(Run); fin.Status != StatusCancelled {
		t.Errorf("finished = %+v, want cancelled", fin)
	}
	if !slices.ContainsFunc(evs, func(e Event) bool { return e.Type == "eval_log" }) {
		t.Error("no eval_log says the cancel was asked")
	}
	_, items, _ := m.Get(t.Context(), started.ID)
	if len(items) != 1 || items[0].Status != StatusCancelled || items[0].Error != "the evaluation was cancelled" {
		t.Fatalf("items = %+v; want the first cancelled and the second never run", items)
	}
	if r, err := o.GetRun(t.Context(), items[0].UserID, items[0].CoreRunID); err != nil || r.State != orchestrator.RunCancelled {
		t.Errorf("the first case's core run = %+v, %v; want it cancelled", r, err)
	}
	ws.mu.Lock()
	left := len(ws.files)
	ws.mu.Unlock()
	if left != 0 {
		t.Errorf("the cancelled case left %d files", left)
	}
	if _, err := m.Cancel(t.Context(), started.ID); !errors.Is(err, orchestrator.ErrConflict) || !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("Cancel after the end = %v, want a conflict naming the status", err)
	}
}

// A start that cannot run is refused before anything is stored, with an
// invalid-argument error naming what is wrong; case files that do not
// load make the feature unavailable. A case set and case ids narrow the
// run, and no model name means the default model.
func TestStartRequests(t *testing.T) {
	c := func(id string) Case { return Case{ID: id, Question: "q", Checks: []Check{check("contains", "x")}} }
	sets := []CaseSet{{Name: "a", Cases: []Case{c("a1"), c("a2")}}, {Name: "b", Cases: []Case{c("b1")}}}
	store := newMemStore()
	loadErr := error(nil)
	m := NewManager(skipBackend{release: make(chan struct{})}, nil, store, Options{
		Cases:        func() ([]CaseSet, error) { return sets, loadErr },
		DefaultModel: func() string { return "gpt" },
		HasModel:     func(n string) bool { return n == "gpt" || n == "ds" },
	})
	defer m.Close()
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{ModelName: "nope"}, `model_name "nope" is not a configured model`},
		{Request{CaseSet: "zzz"}, `case_set "zzz" does not exist`},
		{Request{CaseIDs: []string{"a1", "nope"}}, `case "nope" does not exist`},
		{Request{CaseSet: "a", CaseIDs: []string{"b1"}}, `case "b1" does not exist`},
	} {
		_, err := m.Start(t.Context(), tc.req)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want invalid argument %q", tc.req, err, tc.want)
		}
	}
	if runs, _ := store.ListRuns(t.Context(), Filter{}); len(runs) != 0 {
		t.Errorf("refused starts stored %d runs", len(runs))
	}
	for _, tc := range []struct {
		req   Request
		model string
		ids   []string
	}{
		{Request{}, "gpt", []string{"a1", "a2", "b1"}},
		{Request{ModelName: "ds", CaseSet: "a"}, "ds", []string{"a1", "a2"}},
		{Request{CaseIDs: []string{"b1", "a2"}}, "gpt", []string{"a2", "b1"}},
	} {
		r, err := m.Start(t.Context(), tc.req)
		if err != nil {
			t.Errorf("Start(%+v): %v", tc.req, err)
			continue
		}
		if r.ModelName != tc.model || !slices.Equal(r.CaseIDs, tc.ids) || r.CaseCount != len(tc.ids) || r.CaseSet != tc.req.CaseSet {
			t.Errorf("Start(%+v) = %+v, want model %s and cases %q", tc.req, r, tc.model, tc.ids)
		}
	}
	loadErr = errors.New("cases/x.yaml: bad")
	if _, err := m.Start(t.Context(), Request{}); !errors.Is(err, orchestrator.ErrUnavailable) || !strings.Contains(err.Error(), "cases/x.yaml") {
		t.Errorf("Start with case files that do not load = %v, want unavailable naming the file", err)
	}
	sets, loadErr = nil, nil
	if _, err := m.Start(t.Context(), Request{}); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "no cases to run") {
		t.Errorf("Start with no cases = %v", err)
	}
}

// toolsBackend offers a fixed catalog.
type toolsBackend struct {
	Backend
	specs []orchestrator.ToolSpec
}

func (b toolsBackend) Tools(context.Context, string) ([]orchestrator.ToolSpec, error) {
	return b.specs, nil
}

// Prerequisites are looked up in the catalog: tools by name or alias,
// MCP servers by their tools' prefix, skills and knowledge bases by
// their source; the first missing one is named.
func TestPrerequisites(t *testing.T) {
	m := NewManager(toolsBackend{specs: []orchestrator.ToolSpec{
		{Name: "write_file", Aliases: []string{"写入文件"}, Source: orchestrator.SourceBuiltin},
		{Name: "everything@echo", Source: orchestrator.SourceMCP},
		{Name: "data-report", Source: orchestrator.SourceSkill},
		{Name: "handbook", Source: orchestrator.SourceKnowledge},
		{Name: "handbook-tool", Source: orchestrator.SourceBuiltin},
	}}, nil, newMemStore(), Options{})
	for _, tc := range []struct {
		c    Case
		want string
	}{
		{Case{Tools: []string{"write_file"}}, ""},
		{Case{Tools: []string{"写入文件"}}, ""},
		{Case{Requires: Requires{MCPServers: []string{"everything"}, Skills: []string{"data-report"}, Knowledge: []string{"handbook"}, Tools: []string{"everything@echo"}}}, ""},
		{Case{Tools: []string{"read_file"}}, `needs tool "read_file", which is not configured`},
		{Case{Requires: Requires{Tools: []string{"execute_command"}}}, `needs tool "execute_command"`},
		{Case{Requires: Requires{MCPServers: []string{"echo"}}}, `needs MCP server "echo"`},
		{Case{Requires: Requires{Skills: []string{"handbook"}}}, `needs skill "handbook"`},
		{Case{Requires: Requires{Knowledge: []string{"data-report"}}}, `needs knowledge base "data-report"`},
		{Case{Requires: Requires{Knowledge: []string{"handbook-tool"}}}, `needs knowledge base "handbook-tool"`},
	} {
		got, err := m.missing(t.Context(), "u", tc.c)
		if err != nil || (tc.want == "" && got != "") || !strings.HasPrefix(got, tc.want) {
			t.Errorf("missing(%+v) = %q, %v; want %q", tc.c, got, err, tc.want)
		}
	}
}
