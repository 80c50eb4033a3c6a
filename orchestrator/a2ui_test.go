package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// uiTool emits A2UI batches: its arguments say how many, and one
// malformed (no id) first.
type uiTool struct{}

func (uiTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: "ui", Description: "ui", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (uiTool) Call(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	var a struct{ N int }
	_ = json.Unmarshal(inv.Arguments, &a)
	inv.Emit(orchestrator.EventA2UI, orchestrator.A2UIData{Messages: json.RawMessage(`[]`)}) // no id: dropped
	for i := range a.N {
		inv.Emit(orchestrator.EventA2UI, orchestrator.A2UIData{ID: fmt.Sprintf("a2ui_%d", i), Messages: json.RawMessage(`[{"version":"v0.9"}]`),
			Surfaces: []string{"s"}, Text: "[surface s]", CallID: inv.CallID})
	}
	return &orchestrator.ToolResult{Content: "sent"}, nil
}

// A run keeps the A2UI batches a tool sends: each is an a2ui event, the
// final event lists them in order, a malformed one is dropped, and the
// run keeps at most MaxA2UI.
func TestA2UIBatchesInTheFinalEvent(t *testing.T) {
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{orchestrator.StaticToolset{SetName: "ui", List: []orchestrator.Tool{uiTool{}}}},
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("ui", `{"N":2}`)}},
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("ui", fmt.Sprintf(`{"N":%d}`, orchestrator.MaxA2UI))}},
			{Content: "done"},
		},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"ui"}})
	evs := collect(t, h.o, run.ID, 0)
	if n := len(ofType(evs, orchestrator.EventA2UI)); n != orchestrator.MaxA2UI {
		t.Fatalf("%d a2ui events; want %d (the malformed ones and those over the bound dropped)", n, orchestrator.MaxA2UI)
	}
	f := final(t, evs)
	if len(f.A2UI) != orchestrator.MaxA2UI || f.A2UI[0].ID != "a2ui_0" || f.A2UI[1].ID != "a2ui_1" || f.A2UI[2].ID != "a2ui_0" ||
		f.A2UI[0].Text != "[surface s]" || string(f.A2UI[0].Messages) != `[{"version":"v0.9"}]` || f.A2UI[0].CallID == "" {
		t.Fatalf("the final event's a2ui: %d, first %+v", len(f.A2UI), f.A2UI[0])
	}
	assertDense(t, evs, 1)
}

// A run resumed after an approval keeps the batches it sent before the
// wait: its final event lists them with the new ones.
func TestA2UIBatchesSurviveAWait(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall,
		toolsets: []orchestrator.Toolset{d.toolset(), orchestrator.StaticToolset{SetName: "ui", List: []orchestrator.Tool{uiTool{}}}},
		opts:     orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: []orchestratortest.Turn{
			call("ui", `{"N":1}`), call("deploy", `{"env":"prod"}`), call("ui", `{"N":2}`), {Content: "done"},
		}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"ui", "deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	if _, err := h.o.Decide(t.Context(), "u", run.ID, approvalData(t, evs[len(evs)-1]).ApprovalID, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	f := final(t, collect(t, h.o, run.ID, 0))
	var ids []string
	for _, ud := range f.A2UI {
		ids = append(ids, ud.ID)
	}
	if fmt.Sprint(ids) != "[a2ui_0 a2ui_0 a2ui_1]" {
		t.Fatalf("the resumed run's final event lists %v; want the batch before the wait and the two after", ids)
	}
}
