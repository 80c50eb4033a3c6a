package orchestrator

import (
	"context"
	"encoding/json"
)

// finalResponse is the always-on tool a model calls to end the run with an
// answer. The loop recognises it by name and never executes Call.
type finalResponse struct{}

var _ Tool = finalResponse{}

func (finalResponse) Spec() ToolSpec { return finalResponseSpec }

// finalResponseSpec is built once: every run is offered it.
var finalResponseSpec = ToolSpec{
	Name:        FinalResponseTool,
	Aliases:     []string{"最终回复"},
	Description: "Give the final answer to the user and end the task. Call it once, when the task is done.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string","description":"The final answer, in Markdown."}},"required":["content"]}`),
	Source:      "builtin",
	ReadOnly:    true,
	AlwaysOn:    true,
}

func (finalResponse) Call(_ context.Context, inv *ToolInvocation) (*ToolResult, error) {
	answer, err := finalAnswer(inv.Arguments)
	if err != nil {
		return ErrorResult(err.Error()), nil
	}
	return &ToolResult{Content: answer}, nil
}

// finalAnswer extracts the answer from final_response arguments. It accepts
// {"content": ...}, the original wunder's {"answer": ...} and a bare string.
func finalAnswer(args json.RawMessage) (string, error) {
	var obj struct {
		Content *string `json:"content"`
		Answer  *string `json:"answer"`
	}
	if err := json.Unmarshal(args, &obj); err == nil {
		switch {
		case obj.Content != nil:
			return *obj.Content, nil
		case obj.Answer != nil:
			return *obj.Answer, nil
		}
	}
	var s string
	if err := json.Unmarshal(args, &s); err == nil {
		return s, nil
	}
	return "", invalidf("final_response needs {\"content\": \"...\"}")
}
