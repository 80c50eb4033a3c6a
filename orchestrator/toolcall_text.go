package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The tool_call text protocol: the model writes
//
//	<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>
//
// once per call, anywhere in its text. Results come back as a user message
// whose lines start with "tool_response: ".

const (
	toolCallOpen     = "<tool_call>"
	toolCallClose    = "</tool_call>"
	toolResponseHead = "tool_response: "
)

var (
	thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>`)
	codeFence  = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*(.*?)\\s*```$")
)

// textCall is one parsed block: a call, or the reason it could not be read.
type textCall struct {
	call ToolCall
	err  string
}

// parseTextToolCalls extracts <tool_call> blocks from content. An unclosed
// block at the end (the model stopped early) is read to the end of the text.
// It returns the calls and the content with the blocks removed.
func parseTextToolCalls(content string) ([]textCall, string) {
	var calls []textCall
	var rest strings.Builder
	s := content
	for {
		i := strings.Index(s, toolCallOpen)
		if i < 0 {
			rest.WriteString(s)
			break
		}
		rest.WriteString(s[:i])
		s = s[i+len(toolCallOpen):]
		body := s
		if j := strings.Index(s, toolCallClose); j >= 0 {
			body, s = s[:j], s[j+len(toolCallClose):]
		} else {
			s = ""
		}
		calls = append(calls, parseTextCall(body))
	}
	return calls, strings.TrimSpace(rest.String())
}

func parseTextCall(body string) textCall {
	body = strings.TrimSpace(body)
	if m := codeFence.FindStringSubmatch(body); m != nil {
		body = m[1]
	}
	var raw struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return textCall{err: fmt.Sprintf("malformed tool call %q: %v; write {\"name\": ..., \"arguments\": {...}} inside <tool_call></tool_call>", clip(body, 200), err)}
	}
	if raw.Name == "" {
		return textCall{err: fmt.Sprintf("tool call without a name: %q", clip(body, 200))}
	}
	args := raw.Arguments
	if len(args) == 0 {
		args = raw.Parameters
	}
	args, err := normalizeArgs(args)
	if err != nil {
		return textCall{call: ToolCall{Name: raw.Name}, err: err.Error()}
	}
	return textCall{call: ToolCall{Name: raw.Name, Arguments: args}}
}

// normalizeArgs turns arguments into a JSON object: absent means {}, a
// JSON string holding an object is unwrapped (models do both).
func normalizeArgs(args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if args[0] == '"' {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return json.RawMessage(`{}`), nil
		}
		args = json.RawMessage(s)
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", clip(string(args), 200))
	}
	return args, nil
}

// renderTextCall writes a call in the text protocol.
func renderTextCall(c ToolCall) string {
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	b, _ := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{c.Name, args})
	return toolCallOpen + string(b) + toolCallClose
}

// renderTextResult writes one result line of a tool_response message.
func renderTextResult(name string, res *ToolResult) string {
	b, _ := json.Marshal(struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Content string `json:"content"`
	}{name, !res.IsError, res.Content})
	return toolResponseHead + string(b)
}

// CleanAnswer removes the reasoning blocks some models put in their
// content, as the core does with an answer.
func CleanAnswer(s string) string { return cleanAnswer(s) }

// TextHistory is a session's stored history as a model without tools
// reads it: from its newest compaction summary on (the summary stands for
// what came before), tool calls and their results written as the text of
// tool_call mode, attachments as text, consecutive user turns merged.
// Package memory summarises sessions from it.
func TextHistory(history []Message) []Message {
	return renderMessages(fromLastSummary(history), ModeToolCall, nil, false)
}

// cleanAnswer is [CleanAnswer].
func cleanAnswer(s string) string {
	return strings.TrimSpace(thinkBlock.ReplaceAllString(s, ""))
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
