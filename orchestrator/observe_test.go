package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// spanKey is the value a recording observer puts on the contexts it
// returns, as a tracer puts its span: the core must carry it on.
type spanKey struct{}

// recorder is an Observer that keeps what it is told, and checks that
// every end func is called exactly once.
type recorder struct {
	t  *testing.T
	mu sync.Mutex

	runs      []orchestrator.RunInfo
	runEnds   []orchestrator.RunEnd
	models    []orchestrator.ModelCallInfo
	modelEnds []orchestrator.ModelCallEnd
	tools     []orchestrator.ToolCallInfo
	toolEnds  []orchestrator.ToolCallEnd
	firsts    []time.Duration
	decisions []orchestrator.ToolLog
	// spans are the span values each hook found on its ctx.
	spans []string
}

func (r *recorder) span(ctx context.Context, name string) {
	v, _ := ctx.Value(spanKey{}).(string)
	r.spans = append(r.spans, name+"<"+v)
}

// once fails the test when end is called twice.
func once[T any](r *recorder, what string, keep func(T)) func(T) {
	var called bool
	return func(v T) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if called {
			r.t.Errorf("%s ended twice", what)
		}
		called = true
		keep(v)
	}
}

func (r *recorder) RunStarted(parent, ctx context.Context, info orchestrator.RunInfo) (context.Context, func(orchestrator.RunEnd)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, info)
	if v, _ := parent.Value(spanKey{}).(string); v != "" {
		r.spans = append(r.spans, "run<parent:"+v)
	}
	return context.WithValue(ctx, spanKey{}, "run"), once(r, "run", func(e orchestrator.RunEnd) { r.runEnds = append(r.runEnds, e) })
}

func (r *recorder) ModelCall(ctx context.Context, c orchestrator.ModelCallInfo) (context.Context, func(orchestrator.ModelCallEnd)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.models = append(r.models, c)
	r.span(ctx, "model")
	return context.WithValue(ctx, spanKey{}, "model"), once(r, "model call", func(e orchestrator.ModelCallEnd) { r.modelEnds = append(r.modelEnds, e) })
}

func (r *recorder) ToolCall(ctx context.Context, c orchestrator.ToolCallInfo) (context.Context, func(orchestrator.ToolCallEnd)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools = append(r.tools, c)
	r.span(ctx, "tool")
	return context.WithValue(ctx, spanKey{}, "tool"), once(r, "tool call", func(e orchestrator.ToolCallEnd) { r.toolEnds = append(r.toolEnds, e) })
}

func (r *recorder) FirstOutput(ctx context.Context, info orchestrator.RunInfo, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.firsts = append(r.firsts, wait)
}

func (r *recorder) ToolDecision(l *orchestrator.ToolLog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions = append(r.decisions, *l)
}

// snapshot returns a copy of what was recorded, under the lock.
func (r *recorder) snapshot() recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recorder{runs: slices.Clone(r.runs), runEnds: slices.Clone(r.runEnds), models: slices.Clone(r.models),
		modelEnds: slices.Clone(r.modelEnds), tools: slices.Clone(r.tools), toolEnds: slices.Clone(r.toolEnds),
		firsts: slices.Clone(r.firsts), decisions: slices.Clone(r.decisions), spans: slices.Clone(r.spans)}
}

func observed(t *testing.T, turns []orchestratortest.Turn, toolsets ...orchestrator.Toolset) (*harness, *recorder) {
	rec := &recorder{t: t}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, opts: orchestrator.Options{Observer: rec}, toolsets: toolsets, turns: turns})
	return h, rec
}

// A run with one tool round is observed whole: the run once, each model
// call with its round, the tool call with its source, the first output
// once, the policy's decision; each end once, with how it ended; and the
// contexts nest (the tool's and the model's inside the run's, the
// request's values reaching the run's start).
func TestObserverSeesARun(t *testing.T) {
	h, rec := observed(t, []orchestratortest.Turn{
		call("read_file", `{"path":"a.txt"}`),
		{Content: "done", Usage: &orchestrator.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}},
	})
	ctx := context.WithValue(t.Context(), spanKey{}, "request")
	run, err := h.o.Start(ctx, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"read_file"}, Frontend: orchestrator.FrontendREST})
	if err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("run ended %s", f.State)
	}
	got := rec.snapshot()
	if len(got.runs) != 1 || len(got.runEnds) != 1 {
		t.Fatalf("runs %d, ends %d; want one each", len(got.runs), len(got.runEnds))
	}
	info := got.runs[0]
	if info.ID != run.ID || info.SessionID != run.SessionID || info.UserID != "u" || info.Model != "scripted" ||
		info.Frontend != orchestrator.FrontendREST || info.Resumed || info.CreatedAt.IsZero() {
		t.Errorf("RunInfo = %+v", info)
	}
	if e := got.runEnds[0]; e.State != orchestrator.RunFinished || e.StopReason != orchestrator.StopModelResponse || e.Usage.TotalTokens != 12 || e.Error != "" {
		t.Errorf("RunEnd = %+v", e)
	}
	if len(got.models) != 2 || len(got.modelEnds) != 2 {
		t.Fatalf("model calls %d, ends %d; want two each", len(got.models), len(got.modelEnds))
	}
	for i, m := range got.models {
		if m.RunID != run.ID || m.Model != "scripted" || m.Round != i+1 || m.Mode != orchestrator.ModeFunctionCall {
			t.Errorf("model call %d = %+v", i, m)
		}
		if e := got.modelEnds[i]; e.Err != nil || e.Response == nil {
			t.Errorf("model call %d ended %+v", i, e)
		}
	}
	if len(got.tools) != 1 || len(got.toolEnds) != 1 {
		t.Fatalf("tool calls %d, ends %d; want one each", len(got.tools), len(got.toolEnds))
	}
	if c := got.tools[0]; c.RunID != run.ID || c.Tool != "read_file" || c.Source != "test" || c.CallID == "" {
		t.Errorf("ToolCallInfo = %+v", c)
	}
	if e := got.toolEnds[0]; !e.IsError || e.Cancelled { // no such file: a failed result
		t.Errorf("ToolCallEnd = %+v; want a failed result, not cancelled", e)
	}
	if len(got.firsts) != 1 || got.firsts[0] < 0 {
		t.Errorf("first outputs = %v; want one", got.firsts)
	}
	if len(got.decisions) != 1 || got.decisions[0].Tool != "read_file" || got.decisions[0].Via != orchestrator.ViaRun || got.decisions[0].Outcome != orchestrator.OutcomeError {
		t.Errorf("decisions = %+v; want read_file via a run, an error", got.decisions)
	}
	want := []string{"run<parent:request", "model<run", "tool<run", "model<run"}
	if !slices.Equal(got.spans, want) {
		t.Errorf("contexts = %v; want %v", got.spans, want)
	}
}

// A failed model call ends the model call with its error and the run
// failed with its message.
func TestObserverSeesAFailure(t *testing.T) {
	h, rec := observed(t, []orchestratortest.Turn{{Err: errors.New("model exploded")}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	collect(t, h.o, run.ID, 0)
	got := rec.snapshot()
	if len(got.modelEnds) != 1 || got.modelEnds[0].Err == nil || got.modelEnds[0].Response != nil {
		t.Fatalf("model ends = %+v; want one with the error", got.modelEnds)
	}
	if len(got.runEnds) != 1 || got.runEnds[0].State != orchestrator.RunFailed || got.runEnds[0].StopReason != orchestrator.StopError || got.runEnds[0].Error == "" {
		t.Fatalf("run ends = %+v; want one, failed with its error", got.runEnds)
	}
	if len(got.firsts) != 0 {
		t.Errorf("first outputs = %v; a run that never answered has none", got.firsts)
	}
}

// A tool call the run's cancellation interrupts ends Cancelled, and the
// run ends cancelled.
func TestObserverSeesACancelledToolCall(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h, rec := observed(t, []orchestratortest.Turn{call("block", `{}`), {Content: "never"}}, blockingTool("block", started, release))
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"block"}})
	<-started
	if _, err := h.o.Cancel(t.Context(), "u", run.ID); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunCancelled {
		t.Fatalf("run ended %s", f.State)
	}
	got := rec.snapshot()
	if len(got.toolEnds) != 1 || !got.toolEnds[0].Cancelled {
		t.Errorf("tool ends = %+v; want one, cancelled", got.toolEnds)
	}
	if len(got.runEnds) != 1 || got.runEnds[0].State != orchestrator.RunCancelled || got.runEnds[0].StopReason != orchestrator.StopCancelled {
		t.Errorf("run ends = %+v; want one, cancelled", got.runEnds)
	}
}

// A run that suspends for an approval ends its observed execution
// waiting; its resumption is observed as a resumed run, which reports no
// first output.
func TestObserverSeesASuspensionAndResumption(t *testing.T) {
	d := &deployTool{}
	rec := &recorder{t: t}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{Observer: rec, Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: deployTurns})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	if _, err := h.o.Decide(t.Context(), "u", run.ID, approvalData(t, evs[len(evs)-1]).ApprovalID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("run ended %s", f.State)
	}
	got := rec.snapshot()
	if len(got.runs) != 2 || got.runs[0].Resumed || !got.runs[1].Resumed || got.runs[1].ID != run.ID {
		t.Fatalf("runs observed = %+v; want the start, then the resumption", got.runs)
	}
	var states []orchestrator.RunState
	for _, e := range got.runEnds {
		states = append(states, e.State)
	}
	if !slices.Equal(states, []orchestrator.RunState{orchestrator.RunWaitingApproval, orchestrator.RunFinished}) {
		t.Errorf("run ends = %v; want waiting_approval, then finished", states)
	}
	if len(got.firsts) != 1 {
		t.Errorf("first outputs = %d; want one, of the start only", len(got.firsts))
	}
	if len(got.tools) != 1 || got.tools[0].Tool != "deploy" || got.toolEnds[0].IsError {
		t.Errorf("tool calls = %+v, %+v; want the approved deploy, ok", got.tools, got.toolEnds)
	}
}
