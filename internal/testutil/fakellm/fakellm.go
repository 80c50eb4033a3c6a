// Package fakellm is the HTTP face of wunder's fake model
// (internal/testutil/fakemodel): an OpenAI-compatible chat completions
// server for tests, demos and benchmarks. It speaks the real wire format
// (streamed chunks with tool-call arguments split across several chunks,
// include_usage, plain JSON), so wunder's LLM adapter is exercised exactly
// as against a provider, and it answers what the model's engine decides:
// the directives of the question ([fakemodel.Directive]) unless the
// Server is given a model of its own (a script, a reply function).
//
// With tools in the request the answer uses tool_calls (function_call
// mode); without, it writes <tool_call> blocks into the text (tool_call
// mode). The faults of a [fakemodel.Turn] travel as a provider's would:
// Err is a 500, Hang a stream that stops after its first chunk (or no
// answer at all), Cut a connection closed without [DONE], Retries failed
// attempts the client retries.
package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// Server is an http.Handler for POST /v1/chat/completions (and
// /chat/completions).
type Server struct {
	// Model decides the answers and records the requests. Default: the
	// directives ([fakemodel.Directives]), with no request log, so a
	// long-running server does not grow.
	Model *fakemodel.Model
	// Chunks splits each answer's text into about this many deltas.
	// Default (0): one.
	Chunks int
	// ChunkDelay is waited between streamed chunks. Default 0.
	ChunkDelay time.Duration
	// FirstDelay is waited before an answer's first byte (a model's time
	// to its first token). Default 0.
	FirstDelay time.Duration
	// Requests counts the requests served, Streamed those that asked
	// for a stream.
	Requests, Streamed atomic.Int64

	once     sync.Once
	fallback *fakemodel.Model
}

func (s *Server) model() *fakemodel.Model {
	if s.Model != nil {
		return s.Model
	}
	s.once.Do(func() { s.fallback = fakemodel.Directives().NoLog() })
	return s.fallback
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
	m := s.model()
	a := m.Next(req.modelRequest())
	if m.Await(r.Context(), a) != nil {
		return
	}
	switch {
	case a.Err != nil:
		http.Error(w, errorBody(a.Err.Error(), "server_error"), http.StatusInternalServerError)
		return
	case a.Hang && !req.Stream:
		<-r.Context().Done()
		return
	case a.Retries > 0:
		rest := a.Turn
		rest.Retries, rest.Started, rest.Wait = rest.Retries-1, nil, nil
		m.Replay(rest)
		s.failAttempt(w, req)
		return
	}
	if !req.Stream {
		whole(w, req, a)
		return
	}
	s.stream(w, r, req, a)
}

func errorBody(message, typ string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": message, "type": typ}})
	return string(b)
}

// failAttempt fails one attempt of an answer with retries: a stream is cut
// after a delta "void ", a whole answer is a 503.
func (s *Server) failAttempt(w http.ResponseWriter, req chatRequest) {
	if !req.Stream {
		http.Error(w, errorBody("fault: try again", "server_error"), http.StatusServiceUnavailable)
		return
	}
	sw := sse.NewDeferredWriter(w)
	rc := http.NewResponseController(w)
	for _, delta := range []map[string]any{{"role": "assistant", "content": ""}, {"content": "void "}} {
		b, _ := json.Marshal(chunk(req.Model, delta, nil))
		_ = sw.Buffer(sse.Event{Data: b})
	}
	_ = sw.Flush()
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close()
	}
}

// wireCalls are an answer's tool calls as the wire carries them; a call
// without an id gets call_<n>.
func wireCalls(calls []orchestrator.ToolCall) []any {
	out := make([]any, 0, len(calls))
	for i, c := range calls {
		out = append(out, map[string]any{"id": callID(c, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": fakemodel.Arguments(c.Arguments)}})
	}
	return out
}

func callID(c orchestrator.ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d", i+1)
}

func wireUsage(u *orchestrator.Usage) map[string]int64 {
	return map[string]int64{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
}

// whole answers with one JSON completion.
func whole(w http.ResponseWriter, req chatRequest, a fakemodel.Answer) {
	msg := map[string]any{"role": "assistant", "content": a.Content}
	if a.Reasoning != "" {
		msg["reasoning_content"] = a.Reasoning
	}
	if len(a.ToolCalls) > 0 {
		msg["tool_calls"] = wireCalls(a.ToolCalls)
	}
	body := map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.FinishReason}},
	}
	if a.Usage != nil {
		body["usage"] = wireUsage(a.Usage)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func chunk(model string, delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// stream answers with server-sent chunks: the role, the reasoning and the
// content in about Chunks parts each, each tool call's arguments in four
// pieces, the finish reason, the usage when asked for, and [DONE].
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req chatRequest, a fakemodel.Answer) {
	sw := sse.NewDeferredWriter(w) // the headers go with the first chunk, after FirstDelay
	rc := http.NewResponseController(w)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_ = sw.Send(sse.Event{Data: b})
		if s.ChunkDelay > 0 {
			time.Sleep(s.ChunkDelay)
		}
	}
	if s.FirstDelay > 0 {
		select {
		case <-time.After(s.FirstDelay):
		case <-r.Context().Done():
			return
		}
	}
	send(chunk(req.Model, map[string]any{"role": "assistant", "content": ""}, nil))
	if a.Hang {
		if a.Content != "" {
			send(chunk(req.Model, map[string]any{"content": a.Content}, nil))
		}
		<-r.Context().Done()
		return
	}
	for _, part := range split(a.Reasoning, s.Chunks) {
		send(chunk(req.Model, map[string]any{"reasoning_content": part}, nil))
	}
	for _, part := range split(a.Content, s.Chunks) {
		send(chunk(req.Model, map[string]any{"content": part}, nil))
		if a.Cut {
			if conn, _, err := rc.Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
	}
	// The arguments arrive in pieces, as real servers send them.
	for i, c := range a.ToolCalls {
		for j, part := range split(fakemodel.Arguments(c.Arguments), 4) {
			call := map[string]any{"index": i, "function": map[string]any{"arguments": part}}
			if j == 0 {
				call["id"] = callID(c, i)
				call["type"] = "function"
				call["function"].(map[string]any)["name"] = c.Name
			}
			send(chunk(req.Model, map[string]any{"tool_calls": []any{call}}, nil))
		}
	}
	send(chunk(req.Model, map[string]any{}, a.FinishReason))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && a.Usage != nil {
		send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": []any{}, "usage": wireUsage(a.Usage)})
	}
	_ = sw.Send(sse.Event{Data: []byte("[DONE]")})
}

// split cuts s into about n parts (at least one), on rune boundaries.
func split(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	n = max(1, n)
	size := max(1, (len(r)+n-1)/n)
	var out []string
	for len(r) > 0 {
		k := min(size, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
