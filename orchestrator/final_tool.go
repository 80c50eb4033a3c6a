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

// replyTool ends the run with a direct answer: final_response for an
// answer that needs no task to follow. The run ends as any other (stop
// reason reply) and every front-end gives the answer as it gives any; A2A
// answers a SendMessage that started the run with a Message rather than a
// Task (section 3.1.1: an agent MAY answer a simple exchange so). It is not
// always on: an agent offers it by naming it (a2a.server.tool_names), and
// its model decides when an answer is that simple. The loop recognises it
// by name, as final_response.
type replyTool struct{}

var _ Tool = replyTool{}

func (replyTool) Spec() ToolSpec { return replyToolSpec }

var replyToolSpec = ToolSpec{
	Name: ReplyTool,
	Description: "Answer directly and end the task, for a quick answer that needs nothing to follow up: " +
		"an agent calling you gets a message instead of a task. Call it once, instead of final_response.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string","description":"The answer, in Markdown."}},"required":["content"]}`),
	Source:      "builtin",
	ReadOnly:    true,
	RunOnly:     true, // it ends a run: nothing to call outside one
}

func (replyTool) Call(_ context.Context, inv *ToolInvocation) (*ToolResult, error) {
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
