package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// ErrFault is the error of the "#500" fault.
var ErrFault = errors.New("fault: internal error")

// Directive decides a call's turn from its conversation: a small fixed
// scenario chosen by the question ([Conversation]).
//
//   - "call <tool-wire-name> <json-object>" calls that tool with that
//     object as arguments, then answers with the tool's result, verbatim
//     (the generic scenario: any tool, e.g. "call a2a__peer
//     {\"message\":\"hi\"}"); it is checked first, and a question
//     without such a directive behaves as below;
//   - "follow the skill <name>" loads the skill (load_skill), then obeys
//     the first "call" directive of that skill's instructions as the
//     system prompt carries them (under "### Loaded skill: <name>"), then
//     answers with the tool's result: a model that learns what to do from
//     a loaded skill only;
//   - "write" calls write_file (path notes.txt, content "hello from
//     fakellm"), then read_file on the same path, then answers with what
//     read_file returned;
//   - "run:" calls execute_command with the rest of the question as the
//     command, then answers with the result;
//   - a last user message containing "#attachments" is answered with
//     "images=<n>" (its image attachments) and its whole text, so a test
//     sees what the model got of a question's attachments;
//   - any other question is answered with "echo: <question>".
//
// Faults, chosen by a marker in the question's last paragraph (of user
// turns merged into one, the newest):
//
//   - "#hang": [Turn.Hang];
//   - "#500": [Turn.Err] [ErrFault];
//   - "#cut": [Turn.Cut].
//
// In function_call mode (the request offers tools) a call is a tool call
// with id call_1; in tool_call mode the text is "I will call <tool>."
// and the <tool_call> block. The usage counts words: the prompt's, and the
// answer's plus one.
func Directive(req *orchestrator.ModelRequest) Turn {
	functionMode := len(req.Tools) > 0
	last := lastParagraph(req.Messages)
	switch {
	case strings.Contains(last, "#500"):
		return Turn{Err: ErrFault}
	case strings.Contains(last, "#hang"):
		return Turn{Hang: true}
	}
	t := scenario(req.Messages, functionMode)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == orchestrator.RoleUser {
			if strings.Contains(m.Content, "#attachments") {
				t = Turn{Content: fmt.Sprintf("images=%d\n%s", images(m), m.Content)}
			}
			break
		}
	}
	t.Cut = strings.Contains(last, "#cut")
	t, _ = render(t, functionMode)
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	completion := len(strings.Fields(t.Content)) + 1
	t.Usage = &orchestrator.Usage{InputTokens: int64(prompt), OutputTokens: int64(completion), TotalTokens: int64(prompt + completion)}
	return t
}

func images(m orchestrator.Message) int {
	n := 0
	for _, a := range m.Attachments {
		if a.Type == orchestrator.AttachmentImage {
			n++
		}
	}
	return n
}

// toolResponsePrefix starts the user messages that carry tool results in
// tool_call mode, one "tool_response: {json}" line per result.
const toolResponsePrefix = "tool_response: "

// Conversation returns the question of req, the last user message that
// carries no tool results, and the results of the tools called since: the
// tool messages (function_call mode) or the content of each
// "tool_response: " line (tool_call mode).
func Conversation(req *orchestrator.ModelRequest) (question string, results []string) {
	for _, m := range req.Messages {
		switch {
		case m.Role == orchestrator.RoleTool:
			results = append(results, m.Content)
		case m.Role == orchestrator.RoleUser && strings.HasPrefix(m.Content, toolResponsePrefix):
			for _, line := range strings.Split(m.Content, "\n") {
				var r struct{ Content string }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, toolResponsePrefix)), &r) == nil {
					results = append(results, r.Content)
				}
			}
		case m.Role == orchestrator.RoleUser:
			question, results = m.Content, nil
		}
	}
	return question, results
}

// lastParagraph is the question's last paragraph: of consecutive user
// turns merged into one (a run that never got an answer leaves its
// question behind), the newest.
func lastParagraph(msgs []orchestrator.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == orchestrator.RoleUser && !strings.HasPrefix(m.Content, toolResponsePrefix) {
			parts := strings.Split(m.Content, "\n\n")
			return parts[len(parts)-1]
		}
	}
	return ""
}

// call is a turn that calls one tool; in tool_call mode it says so first.
func call(name, args string, functionMode bool) Turn {
	t := Turn{ToolCalls: []orchestrator.ToolCall{{ID: "call_1", Name: name, Arguments: json.RawMessage(args)}}}
	if !functionMode {
		t.Content = "I will call " + name + "."
	}
	return t
}

// scenario decides the next turn from the conversation since the last
// real question.
func scenario(msgs []orchestrator.Message, functionMode bool) Turn {
	question, results := Conversation(&orchestrator.ModelRequest{Messages: msgs})
	if skill, ok := followDirective(question); ok {
		return followSkill(msgs, skill, results, functionMode)
	}
	if name, args, ok := callDirective(question); ok {
		if len(results) == 0 {
			return call(name, args, functionMode)
		}
		return Turn{Content: results[len(results)-1]}
	}
	if i := strings.Index(question, "run:"); i >= 0 {
		if len(results) == 0 {
			args, _ := json.Marshal(map[string]string{"command": strings.TrimSpace(question[i+4:])})
			return call("execute_command", string(args), functionMode)
		}
		return Turn{Content: "ran: " + results[len(results)-1]}
	}
	if !strings.Contains(strings.ToLower(question), "write") {
		return Turn{Content: "echo: " + question}
	}
	switch len(results) {
	case 0:
		return call("write_file", `{"path":"notes.txt","content":"hello from fakellm"}`, functionMode)
	case 1:
		return call("read_file", `{"path":"notes.txt"}`, functionMode)
	default:
		return Turn{Content: "notes.txt contains: " + results[len(results)-1]}
	}
}

// followDirective finds "follow the skill <name>" in q.
func followDirective(q string) (string, bool) {
	_, rest, ok := strings.Cut(q, "follow the skill ")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	return strings.TrimRight(name, ".,;:!?"), name != ""
}

// followSkill loads the skill, then does what its loaded instructions in
// the system prompt say, then answers with the last result.
func followSkill(msgs []orchestrator.Message, skill string, results []string, functionMode bool) Turn {
	switch len(results) {
	case 0:
		args, _ := json.Marshal(map[string]string{"name": skill})
		return call("load_skill", string(args), functionMode)
	case 1:
		system := ""
		if len(msgs) > 0 && msgs[0].Role == orchestrator.RoleSystem {
			system = msgs[0].Content
		}
		_, body, ok := strings.Cut(system, "### Loaded skill: "+skill+"\n")
		if !ok {
			return Turn{Content: "the skill " + skill + " is not in my system prompt: " + results[0]}
		}
		body, _, _ = strings.Cut(body, "### Loaded skill: ")
		if name, args, ok := callDirective(body); ok {
			return call(name, args, functionMode)
		}
		return Turn{Content: "the skill " + skill + " asks for no call"}
	}
	return Turn{Content: results[len(results)-1]}
}

// callDirective finds "call <name> <json-object>" in q: name of letters,
// digits, _ and -, then one space, then a JSON object (text after it is
// ignored). args is the object, compacted.
func callDirective(q string) (name, args string, ok bool) {
	for rest := q; ; {
		i := strings.Index(rest, "call ")
		if i < 0 {
			return "", "", false
		}
		rest = rest[i+len("call "):]
		n := 0
		for n < len(rest) && isNameByte(rest[n]) {
			n++
		}
		if n == 0 || n+1 >= len(rest) || rest[n] != ' ' || rest[n+1] != '{' {
			continue
		}
		var raw json.RawMessage
		if err := json.NewDecoder(strings.NewReader(rest[n+1:])).Decode(&raw); err != nil {
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			continue
		}
		return rest[:n], b.String(), true
	}
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
