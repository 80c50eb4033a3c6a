package orchestrator_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// probeTool records the invocation's metadata and model name and emits
// events through ToolInvocation.Emit, including a final that must be
// refused.
type probeTool struct {
	got   chan map[string]string
	model chan string
}

func (p probeTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: "probe", Description: "probe", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p probeTool) Call(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	p.got <- inv.Metadata
	p.model <- inv.ModelName
	inv.Emit(orchestrator.EventA2ARequest, map[string]string{"service": "x"})
	inv.Emit(orchestrator.EventFinal, orchestrator.FinalData{Answer: "forged"})
	inv.Emit(orchestrator.EventA2AResult, map[string]string{"service": "x"})
	return &orchestrator.ToolResult{Content: "ok"}, nil
}

// RunRequest.Metadata and the run's model name reach tools; Emit appends
// events to the run's log but never a final or error.
func TestMetadataAndEmit(t *testing.T) {
	probe := probeTool{got: make(chan map[string]string, 1), model: make(chan string, 1)}
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{orchestrator.StaticToolset{SetName: "probe", List: []orchestrator.Tool{probe}}},
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("probe", `{}`)}},
			{Content: "done"},
		},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"probe"},
		Metadata: map[string]string{"wunder.a2a.depth": "2"}})
	evs := collect(t, h.o, run.ID, 0)
	if md := <-probe.got; md["wunder.a2a.depth"] != "2" {
		t.Fatalf("tool metadata %v", md)
	}
	if m := <-probe.model; m != "scripted" {
		t.Fatalf("tool saw model %q, want the run's (scripted)", m)
	}
	if n := len(ofType(evs, orchestrator.EventFinal)); n != 1 || final(t, evs).Answer != "done" {
		t.Fatalf("%d final events, answer %q: a tool forged the end of the run", n, final(t, evs).Answer)
	}
	if len(ofType(evs, orchestrator.EventA2ARequest)) != 1 || len(ofType(evs, orchestrator.EventA2AResult)) != 1 {
		t.Fatalf("emitted events missing: %v", types(evs))
	}
	assertDense(t, evs, 1)
}
