package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestRequestBody(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(text("ok"), finish("stop")))
	temp := 0.3
	c := fs.client(t, func(c *llm.Config) {
		c.Provider, c.APIKey = llm.ProviderDeepSeek, "sk-secret"
		c.MaxOutput = 1000
		c.Temperature = &temp
		c.Headers = map[string]string{"X-Tenant": "acme"}
		c.Stream = true
		off := false
		c.StreamIncludeUsage = &off
	})
	req := &orchestrator.ModelRequest{
		Messages: []orchestrator.Message{
			{Role: orchestrator.RoleSystem, Content: "be brief"},
			{Role: orchestrator.RoleUser, Content: "first"},
			{Role: orchestrator.RoleAssistant, Content: "answer one", ReasoningContent: "old thoughts"},
			{Role: orchestrator.RoleUser, Content: "second"},
			{Role: orchestrator.RoleAssistant, ReasoningContent: "need a file", ToolCalls: []orchestrator.ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
				{ID: "call_2", Name: "list"},
			}},
			{Role: orchestrator.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "contents"},
			{Role: orchestrator.RoleTool, ToolCallID: "call_2", Name: "list", Content: "a b"},
		},
		Tools: []orchestrator.ToolSpec{
			{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list", Description: "List files"},
		},
		MaxOutput: 0, // the config's 1000
		Stop:      []string{"</answer>"},
	}
	if r := collect(t, context.Background(), c, req); r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	got := fs.requests()[0]
	if h := got.Header.Get("Authorization"); h != "Bearer sk-secret" {
		t.Errorf("Authorization = %q, want Bearer sk-secret", h)
	}
	if h := got.Header.Get("X-Tenant"); h != "acme" {
		t.Errorf("X-Tenant = %q, want acme", h)
	}
	if h := got.Header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q", h)
	}
	want := map[string]any{
		"model": "test-model",
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "first"},
			// Reasoning of an earlier turn is not sent back.
			map[string]any{"role": "assistant", "content": "answer one"},
			map[string]any{"role": "user", "content": "second"},
			map[string]any{"role": "assistant", "content": "", "reasoning_content": "need a file", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"a"}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "list", "arguments": `{}`}},
			}},
			map[string]any{"role": "tool", "content": "contents", "tool_call_id": "call_1"},
			map[string]any{"role": "tool", "content": "a b", "tool_call_id": "call_2"},
		},
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{
				"name": "read_file", "description": "Read a file",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
			}},
			map[string]any{"type": "function", "function": map[string]any{
				"name": "list", "description": "List files",
				"parameters": map[string]any{"type": "object", "properties": map[string]any{}},
			}},
		},
		"max_tokens":  1000.0,
		"temperature": 0.3,
		"stop":        []any{"</answer>"},
		"stream":      true,
	}
	if diff := cmp.Diff(want, got.Body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

// The request's own MaxOutput and Temperature win over the config's.
func TestRequestOverridesConfig(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusOK, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`))
	cfgTemp, reqTemp := 1.0, 0.0
	c := fs.client(t, func(c *llm.Config) { c.MaxOutput, c.Temperature = 10, &cfgTemp })
	req := question("q")
	req.Stream, req.MaxOutput, req.Temperature = false, 20, &reqTemp
	if r := collect(t, context.Background(), c, req); r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	body := fs.requests()[0].Body
	if body["max_tokens"] != 20.0 || body["temperature"] != 0.0 {
		t.Errorf("max_tokens = %v, temperature = %v; want 20 and 0", body["max_tokens"], body["temperature"])
	}
	if h := fs.requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q without an API key", h)
	}
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	released := make(chan struct{})
	fs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, text("first"))
		<-r.Context().Done() // until the client hangs up
		close(released)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var gotErr error
	var deltas []string
	for ev, err := range fs.client(t).Generate(ctx, question("q")) {
		if err != nil {
			gotErr = err
			break
		}
		deltas = append(deltas, ev.Delta)
		cancel()
	}
	if !errors.Is(gotErr, context.Canceled) {
		t.Errorf("error = %v, want one wrapping context.Canceled", gotErr)
	}
	if len(deltas) != 1 || deltas[0] != "first" {
		t.Errorf("deltas = %q, want [first]", deltas)
	}
	within(t, released, "the server to see the request end")
	if n := len(fs.requests()); n != 1 {
		t.Errorf("%d requests after cancellation, want 1", n)
	}
}

func TestCancelBeforeHeaders(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	fs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	r := collect(t, ctx, fs.client(t), question("q"))
	if !errors.Is(r.Err, context.Canceled) || len(r.Retries) != 0 {
		t.Errorf("error = %v, retries = %+v; want context.Canceled and no retry", r.Err, r.Retries)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusInternalServerError, `{"error":{"message":"boom"}}`))
	c := fs.client(t, func(c *llm.Config) { c.Retry.InitialBackoff, c.Retry.MaxBackoff = time.Hour, time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var gotErr error
	retries := 0
	for ev, err := range c.Generate(ctx, question("q")) {
		if err != nil {
			gotErr = err
			break
		}
		if ev.Retry != nil {
			retries++
			cancel() // the client now waits about an hour, unless cancelled
		}
	}
	if !errors.Is(gotErr, context.Canceled) || retries != 1 {
		t.Errorf("error = %v after %d retries; want context.Canceled after 1", gotErr, retries)
	}
}

// Breaking out of the loop ends the request.
func TestConsumerBreak(t *testing.T) {
	t.Parallel()
	released := make(chan struct{})
	fs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, text("one"))
		<-r.Context().Done()
		close(released)
	})
	for range fs.client(t).Generate(context.Background(), question("q")) {
		break
	}
	within(t, released, "the server to see the request end")
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	fs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, text("stalled"))
		<-r.Context().Done() // silent until the client gives up
	}, streamOf(text("fresh"), finish("stop")))
	// A loaded machine may be slow to answer the second request too, and
	// that is also an idle timeout: allow for it.
	c := fs.client(t, func(c *llm.Config) { c.IdleTimeout, c.Retry.MaxAttempts = 100*time.Millisecond, 10 })
	r := collect(t, context.Background(), c, question("q"))
	if r.Err != nil || r.Resp.Content != "fresh" {
		t.Fatalf("got %+v, %v; want fresh", r.Resp, r.Err)
	}
	if len(r.Retries) == 0 {
		t.Errorf("no retry after the stream stalled")
	}
	for _, rt := range r.Retries {
		if !strings.Contains(rt.Reason, "idle timeout") {
			t.Errorf("retry %+v is not for the idle timeout", rt)
		}
	}
}

func TestTimeoutExhausted(t *testing.T) {
	t.Parallel()
	fs := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := fs.client(t, func(c *llm.Config) { c.Timeout, c.Retry.MaxAttempts = 20*time.Millisecond, 2 })
	req := question("q")
	req.Stream = false
	r := collect(t, context.Background(), c, req)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "timed out") || !strings.Contains(r.Err.Error(), "after 2 attempts") {
		t.Fatalf("error = %v, want a timeout after 2 attempts", r.Err)
	}
	if errors.Is(r.Err, context.DeadlineExceeded) || errors.Is(r.Err, context.Canceled) {
		t.Errorf("a client timeout reads as the caller's context: %v", r.Err)
	}
}

// Without a server, the connection error is retried and reported.
func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	c, err := llm.New(llm.Config{
		Provider: llm.ProviderLocal, BaseURL: "http://127.0.0.1:1/v1", Model: "m",
		Retry: llm.RetryConfig{MaxAttempts: 3, InitialBackoff: time.Microsecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := collect(t, context.Background(), c, question("q"))
	if r.Err == nil || len(r.Retries) != 2 || !errors.Is(r.Err, orchestrator.ErrUnavailable) {
		t.Fatalf("error = %v, retries = %d; want ErrUnavailable after 2 retries", r.Err, len(r.Retries))
	}
}

// pipeTransport answers with a body that knows nothing of contexts: only
// the client closing it ends a pending read.
type pipeTransport struct{ body io.ReadCloser }

func (p pipeTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK",
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   p.body,
	}, nil
}

func TestCancelClosesBody(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	generated := make(chan error, 1)
	writerDone := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, "data: "+text("first")+"\n\n")
		if err == nil {
			// Nothing more until Generate has returned, which it can only
			// do by closing the body under its pending read.
			gotErr := <-generated
			generated <- gotErr
			_, err = io.WriteString(pw, "data: "+text("late")+"\n\n")
		}
		writerDone <- err
	}()
	c, err := llm.New(llm.Config{Provider: llm.ProviderLocal, Model: "m", HTTPClient: &http.Client{Transport: pipeTransport{pr}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var gotErr error
		for ev, err := range c.Generate(ctx, question("q")) {
			if err != nil {
				gotErr = err
				break
			}
			if ev.Delta == "first" {
				cancel()
			}
		}
		generated <- gotErr
	}()
	if err := within(t, writerDone, "the body to be closed"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("server write error = %v, want io.ErrClosedPipe", err)
	}
	if gotErr := <-generated; !errors.Is(gotErr, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", gotErr)
	}
}
