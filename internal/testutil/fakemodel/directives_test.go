package fakemodel

import (
	"reflect"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

func user(q string) orchestrator.Message {
	return orchestrator.Message{Role: orchestrator.RoleUser, Content: q}
}

// functionMode offers a tool, which puts a request in function_call mode.
var functionMode = []orchestrator.ToolSpec{{Name: "any"}}

func TestDirectiveCall(t *testing.T) {
	q := `please call a2a__peer {"message": "hi there"} and report`
	a := Directive(&orchestrator.ModelRequest{Messages: []orchestrator.Message{user(q)}, Tools: functionMode})
	if len(a.ToolCalls) != 1 || a.ToolCalls[0].Name != "a2a__peer" || string(a.ToolCalls[0].Arguments) != `{"message":"hi there"}` || a.Content != "" {
		t.Fatalf("first turn: %+v", a)
	}
	a = Directive(&orchestrator.ModelRequest{Messages: []orchestrator.Message{user(q), {Role: "assistant"}, {Role: "tool", Content: "echo: hi there"}}, Tools: functionMode})
	if len(a.ToolCalls) != 0 || a.Content != "echo: hi there" {
		t.Fatalf("after the result (function_call mode): %+v", a)
	}
	a = Directive(&orchestrator.ModelRequest{Messages: []orchestrator.Message{user(q), {Role: "assistant"}, user(`tool_response: {"name":"a2a__peer","content":"from peer"}`)}})
	if len(a.ToolCalls) != 0 || a.Content != "from peer" {
		t.Fatalf("after the result (tool_call mode): %+v", a)
	}
}

// The older scenarios answer as before, including questions that say
// "call" without a directive.
func TestDirectiveScenarios(t *testing.T) {
	call := func(name, args string) []orchestrator.ToolCall {
		return []orchestrator.ToolCall{{ID: "call_1", Name: name, Arguments: []byte(args)}}
	}
	for q, want := range map[string]Turn{
		"hello":                  {Content: "echo: hello"},
		"call me later":          {Content: "echo: call me later"},
		"call x {not json":       {Content: "echo: call x {not json"},
		"run: echo hi":           {ToolCalls: call("execute_command", `{"command":"echo hi"}`)},
		"write a note":           {ToolCalls: call("write_file", `{"path":"notes.txt","content":"hello from fakellm"}`)},
		"call {\"a\":1} no name": {Content: "echo: call {\"a\":1} no name"},
		"hi #cut":                {Content: "echo: hi #cut", Cut: true},
		"hi #hang":               {Hang: true},
		"hi #500":                {Err: ErrFault},
	} {
		got := Directive(&orchestrator.ModelRequest{Messages: []orchestrator.Message{user(q)}, Tools: functionMode})
		got.Usage = nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, want %+v", q, got, want)
		}
	}
}

// Without tools in the request a directive becomes a <tool_call> block,
// and the usage counts the words of the prompt and of the answer plus one.
func TestDirectiveToolCallMode(t *testing.T) {
	got := Directive(&orchestrator.ModelRequest{Messages: []orchestrator.Message{user(`call read_file {"path":"a.txt"}`)}})
	want := "I will call read_file.\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}</tool_call>"
	if got.Content != want || got.ToolCalls != nil {
		t.Fatalf("turn %+v, want content %q", got, want)
	}
	if u := got.Usage; u == nil || *u != (orchestrator.Usage{InputTokens: 3, OutputTokens: 6, TotalTokens: 9}) {
		t.Fatalf("usage %+v", u)
	}
}
