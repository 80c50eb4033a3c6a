// Package fakellm is an OpenAI-compatible chat completions server for tests,
// demos and benchmarks: it speaks the real wire format (streamed chunks with
// tool-call arguments split across several chunks, include_usage, plain
// JSON), so wunder's LLM adapter is exercised exactly as against a provider.
//
// Its behaviour is a small fixed scenario, chosen from the conversation:
//
//   - a question containing "call <tool-wire-name> <json-object>" makes it
//     call that tool with that object as arguments, then answer with the
//     tool's result, verbatim (the generic scenario: any tool, e.g.
//     "call a2a__peer {\"message\":\"hi\"}"); it is checked first, and
//     a question without such a directive behaves as below;
//   - a question containing "follow the skill <name>" makes it load the
//     skill (load_skill), then obey the first "call <tool-wire-name>
//     <json-object>" directive of that skill's instructions as the system
//     prompt carries them (under "### Loaded skill: <name>"), then answer
//     with the tool's result: a model that learns what to do from a
//     loaded skill only;
//   - a question containing "write" makes it call write_file (path
//     notes.txt, content "hello from fakellm"), then read_file on the same
//     path, then answer with what read_file returned;
//   - a question containing "run:" makes it call execute_command with the
//     rest of the question as the command, then answer with the result;
//   - a user message containing "#attachments" is answered with
//     "images=<n>" (its image_url content parts) and its whole text, so a
//     test sees what the model got of a question's attachments;
//   - any other question is answered with "echo: <question>".
//
// Faults, for the fault tests, chosen by a marker in the question:
//
//   - "#hang": a streamed call sends its first chunk and then waits until
//     the client goes away (a non-streamed call just waits);
//   - "#500": every call answers HTTP 500;
//   - "#cut": a streamed call stops after its first content chunk and the
//     connection is closed without [DONE].
//
// With tools in the request it uses tool_calls (function_call mode);
// without, it writes <tool_call> blocks into the text (tool_call mode).
package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

// Server is an http.Handler for POST /v1/chat/completions (and
// /chat/completions).
type Server struct {
	// Chunks splits each answer's text into about this many deltas.
	// Default 8.
	Chunks int
	// ChunkDelay is waited between streamed chunks. Default 0.
	ChunkDelay time.Duration
	// FirstDelay is waited before an answer's first byte (a model's time
	// to its first token). Default 0.
	FirstDelay time.Duration
	// Requests counts the requests served, Streamed those that asked
	// for a stream.
	Requests, Streamed atomic.Int64
}

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role       string `json:"role"`
	Content    string `json:"-"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// images counts the image_url parts of a multimodal content.
	images int
}

// UnmarshalJSON reads content as a string or as OpenAI content parts
// (text parts joined, image_url parts counted).
func (m *chatMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = chatMessage{Role: w.Role, ToolCallID: w.ToolCallID}
	if len(w.Content) == 0 || string(w.Content) == "null" {
		return nil
	}
	if w.Content[0] == '"' {
		return json.Unmarshal(w.Content, &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(w.Content, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	for _, p := range parts {
		switch {
		case p.Type == "text":
			m.Content += p.Text
		case p.Type == "image_url" && p.ImageURL != nil && strings.HasPrefix(p.ImageURL.URL, "data:image/"):
			m.images++
		default:
			return fmt.Errorf("content part of type %q", p.Type)
		}
	}
	return nil
}

// answer is what the scenario says next.
type answer struct {
	text     string
	toolName string
	toolArgs string
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	s.Requests.Add(1)
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
		return
	}
	if req.Stream {
		s.Streamed.Add(1)
	}
	question := lastQuestion(req.Messages)
	if strings.Contains(question, "#500") {
		http.Error(w, `{"error":{"message":"fault: internal error","type":"server_error"}}`, http.StatusInternalServerError)
		return
	}
	if strings.Contains(question, "#hang") && !req.Stream {
		<-r.Context().Done()
		return
	}
	a := scenario(req.Messages)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			if strings.Contains(m.Content, "#attachments") {
				a = answer{text: fmt.Sprintf("images=%d\n%s", m.images, m.Content)}
			}
			break
		}
	}
	functionMode := len(req.Tools) > 0
	if a.toolName != "" && !functionMode {
		a.text = fmt.Sprintf("I will call %s.\n<tool_call>{\"name\":%q,\"arguments\":%s}</tool_call>", a.toolName, a.toolName, a.toolArgs)
		a.toolName = ""
	}
	usage := map[string]int{"prompt_tokens": promptTokens(req.Messages), "completion_tokens": len(strings.Fields(a.text)) + 1}
	usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": a.text}
		finish := "stop"
		if a.toolName != "" {
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": a.toolName, "arguments": a.toolArgs}}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	s.stream(w, r, req, a, usage, question)
}

// lastQuestion is the last user message that is not a tool result; of
// consecutive user turns merged into one (a run that never got an answer
// leaves its question behind), the last part.
func lastQuestion(msgs []chatMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == "user" && !strings.HasPrefix(m.Content, "tool_response: ") {
			parts := strings.Split(m.Content, "\n\n")
			return parts[len(parts)-1]
		}
	}
	return ""
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req chatRequest, a answer, usage map[string]int, question string) {
	sw := sse.NewDeferredWriter(w) // the headers go with the first chunk, after FirstDelay
	rc := http.NewResponseController(w)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_ = sw.Send(sse.Event{Data: b})
		if s.ChunkDelay > 0 {
			time.Sleep(s.ChunkDelay)
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if s.FirstDelay > 0 {
		select {
		case <-time.After(s.FirstDelay):
		case <-r.Context().Done():
			return
		}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if strings.Contains(question, "#hang") {
		<-r.Context().Done()
		return
	}
	for _, part := range split(a.text, max(1, s.Chunks)) {
		send(chunk(map[string]any{"content": part}, nil))
		if strings.Contains(question, "#cut") {
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
	}
	finish := "stop"
	if a.toolName != "" {
		finish = "tool_calls"
		// The arguments arrive in pieces, as real servers send them.
		for i, part := range split(a.toolArgs, 4) {
			call := map[string]any{"index": 0, "function": map[string]any{"arguments": part}}
			if i == 0 {
				call["id"] = "call_1"
				call["type"] = "function"
				call["function"].(map[string]any)["name"] = a.toolName
			}
			send(chunk(map[string]any{"tool_calls": []any{call}}, nil))
		}
	}
	send(chunk(map[string]any{}, finish))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []any{}, "usage": usage})
	}
	_ = sw.Send(sse.Event{Data: []byte("[DONE]")})
}

// scenario decides the next answer from the conversation since the last
// real question.
func scenario(msgs []chatMessage) answer {
	question, results := "", []string{}
	for _, m := range msgs {
		switch {
		case m.Role == "tool":
			results = append(results, m.Content)
		case m.Role == "user" && strings.HasPrefix(m.Content, "tool_response: "):
			for _, line := range strings.Split(m.Content, "\n") {
				var r struct{ Content string }
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "tool_response: ")), &r) == nil {
					results = append(results, r.Content)
				}
			}
		case m.Role == "user":
			question, results = m.Content, nil
		}
	}
	if skill, ok := followDirective(question); ok {
		return followSkill(msgs, skill, results)
	}
	if name, args, ok := callDirective(question); ok {
		if len(results) == 0 {
			return answer{toolName: name, toolArgs: args}
		}
		return answer{text: results[len(results)-1]}
	}
	if i := strings.Index(question, "run:"); i >= 0 {
		if len(results) == 0 {
			args, _ := json.Marshal(map[string]string{"command": strings.TrimSpace(question[i+4:])})
			return answer{toolName: "execute_command", toolArgs: string(args)}
		}
		return answer{text: "ran: " + results[len(results)-1]}
	}
	if !strings.Contains(strings.ToLower(question), "write") {
		return answer{text: "echo: " + question}
	}
	switch len(results) {
	case 0:
		return answer{toolName: "write_file", toolArgs: `{"path":"notes.txt","content":"hello from fakellm"}`}
	case 1:
		return answer{toolName: "read_file", toolArgs: `{"path":"notes.txt"}`}
	default:
		return answer{text: "notes.txt contains: " + results[len(results)-1]}
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
func followSkill(msgs []chatMessage, skill string, results []string) answer {
	switch len(results) {
	case 0:
		args, _ := json.Marshal(map[string]string{"name": skill})
		return answer{toolName: "load_skill", toolArgs: string(args)}
	case 1:
		system := ""
		if len(msgs) > 0 && msgs[0].Role == "system" {
			system = msgs[0].Content
		}
		_, body, ok := strings.Cut(system, "### Loaded skill: "+skill+"\n")
		if !ok {
			return answer{text: "the skill " + skill + " is not in my system prompt: " + results[0]}
		}
		body, _, _ = strings.Cut(body, "### Loaded skill: ")
		if name, args, ok := callDirective(body); ok {
			return answer{toolName: name, toolArgs: args}
		}
		return answer{text: "the skill " + skill + " asks for no call"}
	}
	return answer{text: results[len(results)-1]}
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

func promptTokens(msgs []chatMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}

// split cuts s into about n parts, on rune boundaries.
func split(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	size := max(1, (len(r)+n-1)/n)
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
