package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestStreamText(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(text("Hel"), text("lo, "), text("world"), finish("stop")))
	r := collect(t, context.Background(), fs.client(t), question("hi"))
	if r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	if diff := cmp.Diff([]string{"Hel", "lo, ", "world"}, r.Deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	want := &orchestrator.ModelResponse{Content: "Hello, world", FinishReason: "stop"}
	if diff := cmp.Diff(want, r.Resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	req := fs.requests()[0]
	if req.Body["stream"] != true {
		t.Errorf("stream = %v, want true", req.Body["stream"])
	}
	if _, ok := req.Body["stream_options"]; ok {
		t.Errorf("local preset sent stream_options: %v", req.Body["stream_options"])
	}
	if got := req.Header.Get("Accept"); got != "text/event-stream" {
		t.Errorf("Accept = %q, want text/event-stream", got)
	}
}

func TestStreamReasoning(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(
		deltaChunk(map[string]any{"role": "assistant", "content": nil}, ""),
		reasoning("Think "), reasoning("hard."),
		// vLLM and Ollama call the field "reasoning".
		deltaChunk(map[string]any{"reasoning": " Done."}, ""),
		text("42"), finish("stop")))
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	if diff := cmp.Diff([]string{"Think ", "hard.", " Done."}, r.Reasoning); diff != "" {
		t.Errorf("reasoning deltas (-want +got):\n%s", diff)
	}
	if r.Resp.ReasoningContent != "Think hard. Done." || r.Resp.Content != "42" {
		t.Errorf("response = %+v, want reasoning %q and content %q", r.Resp, "Think hard. Done.", "42")
	}
}

func TestStreamToolCallsInterleaved(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(
		toolFrag(0, "call_a", "read_file", ""),
		toolFrag(1, "call_b", "server__search", `{"qu`),
		toolFrag(0, "", "", `{"pa`),
		toolFrag(0, "", "", `th": "a`),
		toolFrag(1, "", "", `ery": "x y",`),
		toolFrag(0, "", "", `.go"}`),
		toolFrag(1, "", "", ` "n": 3}`),
		toolFrag(2, "call_c", "now", ""),
		finish("tool_calls")))
	tools := []orchestrator.ToolSpec{{Name: "read_file"}, {Name: "server__search"}, {Name: "now"}}
	req := question("q")
	req.Tools = tools
	r := collect(t, context.Background(), fs.client(t), req)
	if r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	want := []orchestrator.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.go"}`)},
		{ID: "call_b", Name: "server__search", Arguments: json.RawMessage(`{"query": "x y", "n": 3}`)},
		{ID: "call_c", Name: "now", Arguments: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(want, r.Resp.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if r.Resp.FinishReason != "tool_calls" || len(r.Deltas) != 0 {
		t.Errorf("finish = %q, deltas = %q; want tool_calls and none", r.Resp.FinishReason, r.Deltas)
	}
}

func TestStreamUsage(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(text("ok"), finish("stop"), usageChunk(11, 2, 13)))
	c := fs.client(t, func(c *llm.Config) { c.Provider, c.APIKey = llm.ProviderOpenAI, "sk-test" })
	r := collect(t, context.Background(), c, question("q"))
	if r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	if diff := cmp.Diff(&orchestrator.Usage{InputTokens: 11, OutputTokens: 2, TotalTokens: 13}, r.Resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	want := map[string]any{"include_usage": true}
	if diff := cmp.Diff(want, fs.requests()[0].Body["stream_options"]); diff != "" {
		t.Errorf("stream_options (-want +got):\n%s", diff)
	}
}

func TestIncludeUsageFallback(t *testing.T) {
	t.Parallel()
	fs := newServer(t,
		status(http.StatusBadRequest, `{"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]","code":400}`),
		streamOf(text("ok"), finish("stop")))
	usage := true
	c := fs.client(t, func(c *llm.Config) { c.StreamIncludeUsage = &usage })
	for i := range 2 {
		r := collect(t, context.Background(), c, question("q"))
		if r.Err != nil || r.Resp.Content != "ok" {
			t.Fatalf("call %d: response %+v, error %v; want ok", i, r.Resp, r.Err)
		}
		if len(r.Retries) != 0 {
			t.Errorf("call %d: retry events %+v for a parameter fallback", i, r.Retries)
		}
	}
	reqs := fs.requests()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want 3 (rejected, retried, second call)", len(reqs))
	}
	for i, want := range []bool{true, false, false} {
		if _, got := reqs[i].Body["stream_options"]; got != want {
			t.Errorf("request %d has stream_options = %v, want %v", i, got, want)
		}
	}
}

func TestNonStream(t *testing.T) {
	t.Parallel()
	body := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,
		"reasoning_content":"why","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
		{"id":"c2","type":"function","function":{"name":"g","arguments":{"b":2}}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`
	fs := newServer(t, status(http.StatusOK, body))
	req := question("q")
	req.Stream = false
	r := collect(t, context.Background(), fs.client(t), req)
	if r.Err != nil {
		t.Fatalf("Generate: %v", r.Err)
	}
	want := &orchestrator.ModelResponse{
		ReasoningContent: "why",
		ToolCalls: []orchestrator.ToolCall{
			{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)},
			{ID: "c2", Name: "g", Arguments: json.RawMessage(`{"b":2}`)},
		},
		Usage:        &orchestrator.Usage{InputTokens: 5, OutputTokens: 7, TotalTokens: 12},
		FinishReason: "tool_calls",
	}
	if diff := cmp.Diff(want, r.Resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if _, ok := fs.requests()[0].Body["stream"]; ok {
		t.Errorf("non-streamed request has a stream field")
	}
}

func TestStreamAnsweredWithJSON(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusOK,
		`{"choices":[{"message":{"content":"plain"},"finish_reason":"stop"}]}`))
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err != nil || r.Resp.Content != "plain" {
		t.Fatalf("got %+v, %v; want content plain", r.Resp, r.Err)
	}
}

func TestNotRetried(t *testing.T) {
	t.Parallel()
	for _, code := range []int{400, 401, 403, 404} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			t.Parallel()
			fs := newServer(t, status(code, `{"error":{"message":"Incorrect API key provided: sk-***","type":"invalid_request_error"}}`,
				"X-Should-Retry", "true"))
			r := collect(t, context.Background(), fs.client(t), question("q"))
			if r.Err == nil {
				t.Fatalf("no error for status %d", code)
			}
			if n := len(fs.requests()); n != 1 || len(r.Retries) != 0 {
				t.Errorf("%d requests and %d retries, want 1 and 0", n, len(r.Retries))
			}
			for _, want := range []string{`"test"`, "/v1/chat/completions", "status " + strconv.Itoa(code), "Incorrect API key provided"} {
				if !strings.Contains(r.Err.Error(), want) {
					t.Errorf("error %q does not mention %q", r.Err, want)
				}
			}
			if errors.Is(r.Err, orchestrator.ErrUnavailable) {
				t.Errorf("error %q wraps ErrUnavailable", r.Err)
			}
		})
	}
}

func TestServerErrorExhausted(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusBadGateway, "<html><body>upstream\n  connect error</body></html>"))
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err == nil {
		t.Fatal("no error after 502s")
	}
	if n := len(fs.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if len(r.Retries) != 2 || r.Retries[0].Attempt != 2 || r.Retries[1].Attempt != 3 {
		t.Errorf("retries = %+v, want attempts 2 and 3", r.Retries)
	}
	for _, want := range []string{"502", "after 3 attempts", "<html><body>upstream connect error</body></html>"} {
		if !strings.Contains(r.Err.Error(), want) {
			t.Errorf("error %q does not mention %q", r.Err, want)
		}
	}
	if !errors.Is(r.Err, orchestrator.ErrUnavailable) {
		t.Errorf("error %q does not wrap ErrUnavailable", r.Err)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	fs := newServer(t,
		status(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`, "Retry-After", "1"),
		status(http.StatusServiceUnavailable, `{"error":{"message":"busy"}}`, "Retry-After-Ms", "3"),
		streamOf(text("ok"), finish("stop")))
	r := collect(t, context.Background(), fs.client(t, func(c *llm.Config) { c.Retry.MaxAttempts = 5 }), question("q"))
	if r.Err != nil || r.Resp.Content != "ok" {
		t.Fatalf("got %+v, %v; want ok", r.Resp, r.Err)
	}
	if len(r.Retries) != 2 {
		t.Fatalf("retries = %+v, want 2", r.Retries)
	}
	if got := r.Retries[0]; got.Attempt != 2 || got.Delay.String() != "1s" || !strings.Contains(got.Reason, "429") || !strings.Contains(got.Reason, "slow down") {
		t.Errorf("first retry = %+v, want attempt 2 after 1s for the 429", got)
	}
	if got := r.Retries[1]; got.Attempt != 3 || got.Delay.String() != "3ms" || !strings.Contains(got.Reason, "503") {
		t.Errorf("second retry = %+v, want attempt 3 after 3ms for the 503", got)
	}
}

func TestRetryAfterTooLong(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusTooManyRequests, `{"error":{"message":"quota"}}`, "Retry-After", "600"))
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err == nil || len(r.Retries) != 0 {
		t.Fatalf("got %+v, %d retries; want an error at once", r.Resp, len(r.Retries))
	}
	if d, ok := orchestrator.RetryAfter(r.Err); !ok || d.String() != "10m0s" {
		t.Errorf("RetryAfter(err) = %v, %v; want 10m0s", d, ok)
	}
	if !errors.Is(r.Err, orchestrator.ErrUnavailable) {
		t.Errorf("error %q does not wrap ErrUnavailable", r.Err)
	}
}

func TestMalformedChunk(t *testing.T) {
	t.Parallel()
	bad := func(w http.ResponseWriter, _ *http.Request) {
		sse(w, text("partial"), `{"choices":[{"delta":{"content":"x"`)
	}
	t.Run("retried", func(t *testing.T) {
		t.Parallel()
		fs := newServer(t, bad, streamOf(text("good"), finish("stop")))
		r := collect(t, context.Background(), fs.client(t), question("q"))
		if r.Err != nil || r.Resp.Content != "good" || r.text() != "good" {
			t.Fatalf("got %+v (deltas %q), %v; want good", r.Resp, r.Deltas, r.Err)
		}
		if len(r.Retries) != 1 || !strings.Contains(r.Retries[0].Reason, "malformed chunk") {
			t.Errorf("retries = %+v, want one for the malformed chunk", r.Retries)
		}
	})
	t.Run("always", func(t *testing.T) {
		t.Parallel()
		fs := newServer(t, bad)
		r := collect(t, context.Background(), fs.client(t), question("q"))
		if r.Err == nil || !strings.Contains(r.Err.Error(), "malformed chunk") || !strings.Contains(r.Err.Error(), `"content":"x"`) {
			t.Fatalf("error = %v, want one about the malformed chunk quoting it", r.Err)
		}
	})
}

func TestErrorEvent(t *testing.T) {
	t.Parallel()
	fs := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		sse(w, text("a"), `{"error":{"message":"engine overloaded","code":503}}`)
	}, streamOf(text("b"), finish("stop")))
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err != nil || r.Resp.Content != "b" {
		t.Fatalf("got %+v, %v; want b", r.Resp, r.Err)
	}
	if len(r.Retries) != 1 || !strings.Contains(r.Retries[0].Reason, "engine overloaded") {
		t.Errorf("retries = %+v, want one quoting the error event", r.Retries)
	}
}

func TestTruncatedStream(t *testing.T) {
	t.Parallel()
	cases := map[string]http.HandlerFunc{
		// The response ends cleanly, but without [DONE] or finish_reason.
		"ended": func(w http.ResponseWriter, _ *http.Request) { sse(w, text("Hel"), text("lo")) },
		// The connection is dropped in the middle of the body.
		"dropped": func(w http.ResponseWriter, _ *http.Request) {
			sse(w, text("Hel"))
			panic(http.ErrAbortHandler)
		},
		// Nothing at all.
		"empty": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) },
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fs := newServer(t, h, streamOf(text("Hello"), finish("stop")))
			r := collect(t, context.Background(), fs.client(t), question("q"))
			if r.Err != nil || r.Resp.Content != "Hello" || r.text() != "Hello" {
				t.Fatalf("got %+v (deltas after the retry %q), %v; want Hello", r.Resp, r.Deltas, r.Err)
			}
			if len(r.Retries) != 1 || r.Retries[0].Attempt != 2 {
				t.Errorf("retries = %+v, want one, attempt 2", r.Retries)
			}
		})
	}
}

// A stream with a finish_reason but no [DONE] is complete.
func TestFinishWithoutDone(t *testing.T) {
	t.Parallel()
	fs := newServer(t, func(w http.ResponseWriter, _ *http.Request) { sse(w, text("ok"), finish("length")) })
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err != nil || r.Resp.Content != "ok" || r.Resp.FinishReason != "length" || len(r.Retries) != 0 {
		t.Fatalf("got %+v, %d retries, %v; want ok/length without retry", r.Resp, len(r.Retries), r.Err)
	}
}

func TestNotAStream(t *testing.T) {
	t.Parallel()
	fs := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>\n<p>captive portal</p>\n</html>")
	})
	r := collect(t, context.Background(), fs.client(t), question("q"))
	if r.Err == nil || !strings.Contains(r.Err.Error(), "<html> <p>captive portal</p> </html>") {
		t.Errorf("error = %v, want one quoting the body", r.Err)
	}
}

func TestErrorHidesPassword(t *testing.T) {
	t.Parallel()
	fs := newServer(t, status(http.StatusNotFound, `{"error":{"message":"model not found"}}`))
	c := fs.client(t, func(c *llm.Config) { c.BaseURL = strings.Replace(c.BaseURL, "http://", "http://user:hunter2@", 1) })
	r := collect(t, context.Background(), c, question("q"))
	if r.Err == nil || strings.Contains(r.Err.Error(), "hunter2") || !strings.Contains(r.Err.Error(), "check base_url and model") {
		t.Errorf("error = %v, want a 404 with a hint and without the password", r.Err)
	}
}

// A server that streams when asked not to is understood; no deltas are
// passed on for a request that did not ask for them.
func TestStreamWhenNotAsked(t *testing.T) {
	t.Parallel()
	fs := newServer(t, streamOf(text("a"), text("b"), finish("stop")))
	req := question("q")
	req.Stream = false
	r := collect(t, context.Background(), fs.client(t), req)
	if r.Err != nil || r.Resp.Content != "ab" || len(r.Deltas) != 0 {
		t.Fatalf("got %+v, deltas %q, %v; want ab and no deltas", r.Resp, r.Deltas, r.Err)
	}
}
