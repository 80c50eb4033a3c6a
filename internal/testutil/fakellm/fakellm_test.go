package fakellm

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestScenarioCallDirective(t *testing.T) {
	q := `please call a2a__peer {"message": "hi there"} and report`
	a := scenario([]chatMessage{{Role: "user", Content: q}})
	if a.toolName != "a2a__peer" || a.toolArgs != `{"message":"hi there"}` || a.text != "" {
		t.Fatalf("first turn: %+v", a)
	}
	a = scenario([]chatMessage{{Role: "user", Content: q}, {Role: "assistant"}, {Role: "tool", Content: "echo: hi there"}})
	if a.toolName != "" || a.text != "echo: hi there" {
		t.Fatalf("after the result (function_call mode): %+v", a)
	}
	a = scenario([]chatMessage{{Role: "user", Content: q}, {Role: "assistant"}, {Role: "user", Content: `tool_response: {"name":"a2a__peer","content":"from peer"}`}})
	if a.toolName != "" || a.text != "from peer" {
		t.Fatalf("after the result (tool_call mode): %+v", a)
	}
}

// The older scenarios answer as before, including questions that say
// "call" without a directive.
func TestScenarioUnchanged(t *testing.T) {
	for q, want := range map[string]answer{
		"hello":                  {text: "echo: hello"},
		"call me later":          {text: "echo: call me later"},
		"call x {not json":       {text: "echo: call x {not json"},
		"run: echo hi":           {toolName: "execute_command", toolArgs: `{"command":"echo hi"}`},
		"write a note":           {toolName: "write_file", toolArgs: `{"path":"notes.txt","content":"hello from fakellm"}`},
		"call {\"a\":1} no name": {text: "echo: call {\"a\":1} no name"},
	} {
		if got := scenario([]chatMessage{{Role: "user", Content: q}}); got != want {
			t.Errorf("%q: %+v, want %+v", q, got, want)
		}
	}
}

// Without tools in the request the directive becomes a <tool_call> block.
func TestCallDirectiveToolCallMode(t *testing.T) {
	srv := httptest.NewServer(&Server{})
	defer srv.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"call read_file {\"path\":\"a.txt\"}"}]}`
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("decode: %v %+v", err, out)
	}
	if got := out.Choices[0].Message.Content; !strings.Contains(got, `<tool_call>{"name":"read_file","arguments":{"path":"a.txt"}}</tool_call>`) {
		t.Fatalf("content %q", got)
	}
}
