package orchestrator

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// What tool_call mode writes, it reads back: a call rendered as text
// parses to the same name and arguments, whatever they hold; a closing
// tag inside an argument string is escaped (\u003c) and does not cut the
// block.
func TestTextCallRoundTrip(t *testing.T) {
	calls := []ToolCall{
		{Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
		{Name: "fs@write", Arguments: json.RawMessage(`{"path":"b","content":"</tool_call> inside <tool_call> a string"}`)},
		{Name: "工具", Arguments: json.RawMessage(`{"q":"中文"}`)},
		{Name: "no_args"},
	}
	for _, c := range calls {
		text := renderTextCall(c)
		got, rest := parseTextToolCalls("before " + text + " after")
		if len(got) != 1 || got[0].err != "" {
			t.Fatalf("parse(render(%+v)) = %+v", c, got)
		}
		want := c.Arguments
		if len(want) == 0 {
			want = json.RawMessage("{}")
		}
		var a, b any
		if err := json.Unmarshal(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got[0].call.Arguments, &b); err != nil {
			t.Fatalf("parsed arguments %s: %v", got[0].call.Arguments, err)
		}
		if got[0].call.Name != c.Name || !reflect.DeepEqual(a, b) {
			t.Errorf("parse(render(%+v)) = %s %s", c, got[0].call.Name, got[0].call.Arguments)
		}
		if rest != "before  after" {
			t.Errorf("text around the call = %q", rest)
		}
	}
}

// normalizeArgs makes every accepted form an object and refuses the rest
// with a sentence the model can act on.
func TestNormalizeArgs(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"", "{}", false},
		{"  ", "{}", false},
		{"null", "{}", false},
		{`{"a":1}`, `{"a":1}`, false},
		{` {"a":1} `, `{"a":1}`, false},
		{`"{\"a\":1}"`, `{"a":1}`, false}, // an object inside a string
		{`""`, "{}", false},
		{`"  "`, "{}", false},
		{`[1,2]`, "", true},
		{`42`, "", true},
		{`"not json"`, "", true},
		{`"[1]"`, "", true},
		{`{"a":`, "", true},
		{`"unterminated`, "", true},
	}
	for _, c := range cases {
		got, err := normalizeArgs(json.RawMessage(c.in))
		if c.bad {
			if err == nil {
				t.Errorf("normalizeArgs(%s) = %s; want an error", c.in, got)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("normalizeArgs(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}

// A malformed block's error quotes it bounded, so a model that writes a
// huge broken call does not get it all back in the result.
func TestMalformedCallErrorIsBounded(t *testing.T) {
	huge := "<tool_call>{" + strings.Repeat("x", 10_000) + "</tool_call>"
	calls, _ := parseTextToolCalls(huge)
	if len(calls) != 1 || calls[0].err == "" {
		t.Fatalf("calls = %+v; want one error", calls)
	}
	if n := len(calls[0].err); n > 1000 {
		t.Errorf("the error is %d bytes long", n)
	}
	if !strings.Contains(calls[0].err, "<tool_call></tool_call>") {
		t.Errorf("the error does not say how to write a call: %q", calls[0].err)
	}
}

// CleanAnswer drops reasoning blocks, however many and wherever they are.
func TestCleanAnswer(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"<think>hmm</think>answer", "answer"},
		{"  <think>a\nb\n</think>\n\nanswer  ", "answer"},
		{"one<think>x</think> two<think>y</think>", "one two"},
		{"<think>unclosed answer", "<think>unclosed answer"},
		{"<think></think>", ""},
	}
	for _, c := range cases {
		if got := CleanAnswer(c.in); got != c.want {
			t.Errorf("CleanAnswer(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TextHistory is a session as a model without tools reads it: calls as
// tool_call text, results as tool_response lines (a failure marked not
// ok), consecutive user turns merged.
func TestTextHistory(t *testing.T) {
	history := []Message{
		{Role: RoleUser, Content: "first question, never answered", RunID: "r1"},
		{Role: RoleUser, Content: "read a.txt", RunID: "r2"},
		{Role: RoleAssistant, Content: "Reading.", RunID: "r2", ToolCalls: []ToolCall{{ID: "c1", Name: "fs@read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Role: RoleTool, Content: "hello", ToolCallID: "c1", Name: "fs@read", RunID: "r2"},
		{Role: RoleAssistant, Content: "", RunID: "r2", ToolCalls: []ToolCall{{ID: "c2", Name: "fs@read", Arguments: json.RawMessage(`{"path":"b.txt"}`)}}},
		{Role: RoleTool, Content: "Error: no such file", ToolCallID: "c2", Name: "fs@read", RunID: "r2"},
		{Role: RoleAssistant, Content: "a.txt says hello", RunID: "r2"},
	}
	got := TextHistory(history)
	var roles []string
	for _, m := range got {
		roles = append(roles, m.Role)
		if len(m.ToolCalls) > 0 || m.Role == RoleTool {
			t.Errorf("a model without tools gets %+v", m)
		}
	}
	if strings.Join(roles, ",") != "user,assistant,user,assistant,user,assistant" {
		t.Fatalf("roles = %v", roles)
	}
	if got[0].Content != "first question, never answered\n\nread a.txt" {
		t.Errorf("merged user turns = %q", got[0].Content)
	}
	calls, rest := parseTextToolCalls(got[1].Content)
	if rest != "Reading." || len(calls) != 1 || calls[0].call.Name != "fs@read" || string(calls[0].call.Arguments) != `{"path":"a.txt"}` {
		t.Errorf("rendered call = %q", got[1].Content)
	}
	var ok, failed struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[2].Content, toolResponseHead)), &ok); err != nil || !ok.OK || ok.Content != "hello" || ok.Name != "fs@read" {
		t.Errorf("result line = %q (%v)", got[2].Content, err)
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[4].Content, toolResponseHead)), &failed); err != nil || failed.OK || failed.Content != "no such file" {
		t.Errorf("failed result line = %q (%v)", got[4].Content, err)
	}
	// The input is not changed.
	if len(history[2].ToolCalls) != 1 || history[0].Content != "first question, never answered" {
		t.Error("TextHistory changed the history it was given")
	}
}
