package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Idle keep-alive connections of clients whose server is gone
		// close on their own, a little later.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	)
}

// recorded is one request the fake server received.
type recorded struct {
	Header http.Header
	Path   string
	Body   map[string]any
}

// fakeServer speaks the OpenAI wire format: request i is answered by
// handlers[i], the last handler answering all further requests.
type fakeServer struct {
	*httptest.Server
	handlers []http.HandlerFunc

	// mu guards reqs.
	mu   sync.Mutex
	reqs []recorded
}

func newServer(t testing.TB, handlers ...http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{handlers: handlers}
	fs.Server = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}
	fs.mu.Lock()
	n := len(fs.reqs)
	fs.reqs = append(fs.reqs, recorded{Header: r.Header.Clone(), Path: r.URL.Path, Body: body})
	fs.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	fs.handlers[min(n, len(fs.handlers)-1)](w, r)
}

func (fs *fakeServer) requests() []recorded {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]recorded(nil), fs.reqs...)
}

// config is a client config for fs with tiny backoffs.
func (fs *fakeServer) config() llm.Config {
	return llm.Config{
		Name:     "test",
		Provider: llm.ProviderLocal,
		BaseURL:  fs.URL + "/v1",
		Model:    "test-model",
		Retry:    llm.RetryConfig{MaxAttempts: 3, InitialBackoff: time.Microsecond, MaxBackoff: time.Millisecond},
	}
}

func (fs *fakeServer) client(t testing.TB, edit ...func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := fs.config()
	for _, e := range edit {
		e(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	return c
}

// sse writes server-sent events, flushing after each.
func sse(w http.ResponseWriter, events ...string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

// streamOf is a handler sending events and [DONE].
func streamOf(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { sse(w, append(events, "[DONE]")...) }
}

func status(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func deltaChunk(delta map[string]any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	return mustJSON(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{choice}})
}

func text(s string) string      { return deltaChunk(map[string]any{"content": s}, "") }
func reasoning(s string) string { return deltaChunk(map[string]any{"reasoning_content": s}, "") }
func finish(r string) string    { return deltaChunk(map[string]any{}, r) }

func toolFrag(index int, id, name, args string) string {
	call := map[string]any{"index": index, "function": map[string]any{"arguments": args}}
	if id != "" {
		call["id"] = id
		call["type"] = "function"
		call["function"].(map[string]any)["name"] = name
	}
	return deltaChunk(map[string]any{"tool_calls": []any{call}}, "")
}

func usageChunk(p, c, total int) string {
	return mustJSON(map[string]any{"choices": []any{}, "usage": map[string]any{
		"prompt_tokens": p, "completion_tokens": c, "total_tokens": total}})
}

// result is everything a Generate call yielded.
type result struct {
	Deltas    []string
	Reasoning []string
	Retries   []orchestrator.ModelRetry
	Resp      *orchestrator.ModelResponse
	Err       error
}

func (r result) text() string { return strings.Join(r.Deltas, "") }

// collect drains m.Generate and checks the contract: deltas and retries,
// then exactly one Response or one error, which is last.
func collect(t testing.TB, ctx context.Context, m orchestrator.Model, req *orchestrator.ModelRequest) result {
	t.Helper()
	var r result
	for ev, err := range m.Generate(ctx, req) {
		if r.Resp != nil || r.Err != nil {
			t.Fatalf("event after the end: %+v, %v", ev, err)
		}
		switch {
		case err != nil:
			r.Err = err
		case ev.Response != nil:
			r.Resp = ev.Response
		case ev.Retry != nil:
			r.Retries = append(r.Retries, *ev.Retry)
			r.Deltas, r.Reasoning = nil, nil
		default:
			if ev.Delta == "" && ev.ReasoningDelta == "" {
				t.Fatalf("empty event")
			}
			if ev.Delta != "" {
				r.Deltas = append(r.Deltas, ev.Delta)
			}
			if ev.ReasoningDelta != "" {
				r.Reasoning = append(r.Reasoning, ev.ReasoningDelta)
			}
		}
	}
	if r.Resp == nil && r.Err == nil {
		t.Fatalf("Generate ended without a response or an error")
	}
	return r
}

func question(q string) *orchestrator.ModelRequest {
	return &orchestrator.ModelRequest{
		Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: q}},
		Stream:   true,
	}
}

// within fails the test if ch does not deliver in a generous time: a guard
// against hangs, not a timing assertion.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
