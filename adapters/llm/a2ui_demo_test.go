package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/orchestrator"
)

// The demo's A2UI path: a question about A2UI calls the a2ui tool with
// messages the tool accepts (a form whose button sends the demo's
// action); the action, as the model reads it, plays its own turns (an
// update the tool accepts, then an answer quoting it), not the form again.
func TestEchoScriptA2UIDemo(t *testing.T) {
	t.Parallel()
	m := llm.NewScripted(llm.EchoScript())
	call := func(q string) orchestrator.ToolCall {
		t.Helper()
		req := question(q)
		req.Tools = []orchestrator.ToolSpec{{Name: "a2ui"}} // function_call mode
		r := collect(t, context.Background(), m, req)
		if r.Err != nil || len(r.Resp.ToolCalls) != 1 || r.Resp.ToolCalls[0].Name != "a2ui" {
			t.Fatalf("%q: %+v, %v; want a call of a2ui", q, r.Resp, r.Err)
		}
		return r.Resp.ToolCalls[0]
	}
	validate := func(c orchestrator.ToolCall) *a2ui.Batch {
		t.Helper()
		var args struct {
			Messages json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		b, err := a2ui.Validate(args.Messages)
		if err != nil {
			t.Fatalf("the demo's messages are refused: %v", err)
		}
		return b
	}
	form := validate(call("Show me the A2UI demo"))
	if !strings.Contains(string(form.JSON()), `"name":"`+llm.A2UIAction+`"`) || form.Surfaces[0] != llm.A2UISurface {
		t.Fatalf("the form: %s", form.JSON())
	}
	if !strings.Contains(form.Text(), "[Send]") {
		t.Fatalf("the form's text: %s", form.Text())
	}
	action := a2ui.ActionPrefix + `{"context":{"name":"Ada"},"name":"` + llm.A2UIAction + `","sourceComponentId":"send","surfaceId":"` + llm.A2UISurface + `"}`
	update := validate(call(action))
	if !strings.Contains(string(update.JSON()), `"updateDataModel"`) {
		t.Fatalf("the answer to the action: %s", update.JSON())
	}
	req := question(action)
	req.Messages = append(req.Messages, orchestrator.Message{Role: orchestrator.RoleAssistant, ToolCalls: []orchestrator.ToolCall{{ID: "c", Name: "a2ui"}}},
		orchestrator.Message{Role: orchestrator.RoleTool, ToolCallID: "c", Content: "Sent"})
	if r := collect(t, context.Background(), m, req); r.Err != nil || !strings.Contains(r.Resp.Content, action) {
		t.Fatalf("the last answer: %+v, %v; want it to quote the action", r.Resp, r.Err)
	}
}
