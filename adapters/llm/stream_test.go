package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestSSEFraming(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"lf":   "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"crlf": "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
		"cr":   "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\rdata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\r\rdata: [DONE]\r\r",
		// Comments and keep-alives, event and id fields, no space after the colon.
		"comments": ": keep-alive\n\n: OPENROUTER PROCESSING\nid: 1\nevent: message\ndata:{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n" +
			"retry: 100\n\n:\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]",
		// One JSON object over several data lines.
		"multiline": "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":\ndata: {\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n",
		// Usage in a chunk of its own, without choices, after finish_reason.
		"usage": "data: {\"choices\":[{\"delta\":{\"content\":\"ab\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n" +
			"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n",
	}
	for name, body := range cases {
		events, resp, err := llm.DecodeStream(strings.NewReader(body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if resp.Content != "ab" || resp.FinishReason != "stop" || len(events) == 0 {
			t.Errorf("%s: response %+v after %d events, want ab/stop", name, resp, len(events))
		}
		if name == "usage" && (resp.Usage == nil || *resp.Usage != orchestrator.Usage{InputTokens: 3, OutputTokens: 1, TotalTokens: 4}) {
			t.Errorf("usage: %+v", resp.Usage)
		}
	}
}

func TestSSEErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"truncated":     "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
		"unterminated":  "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}",
		"malformed":     "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}\n\n",
		"error field":   "data: {\"error\":{\"message\":\"overloaded\"}}\n\n",
		"error event":   "event: error\ndata: {\"message\":\"bad\"}\n\n",
		"empty":         "",
		"only comments": ": ping\n\n: ping\n\n",
		"json error":    `{"error":{"message":"nope"}}`,
		"json choices":  `{"choices":[]}`,
		"json broken":   `{"choices":[`,
	}
	for name, body := range cases {
		if _, resp, err := llm.DecodeStream(strings.NewReader(body)); err == nil {
			t.Errorf("%s: no error, response %+v", name, resp)
		}
	}
}

// recordedStream is a typical streamed answer of n content chunks with a
// tool call split across chunks, and usage.
func recordedStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString(": keep-alive\n\n")
	b.WriteString("data: " + deltaChunk(map[string]any{"role": "assistant", "content": ""}, "") + "\n\n")
	for i := range n {
		if i%10 == 0 {
			b.WriteString("data: " + reasoning("thinking ") + "\n\n")
		}
		b.WriteString("data: " + text(fmt.Sprintf("word%d ", i)) + "\n\n")
	}
	b.WriteString("data: " + toolFrag(0, "call_1", "read_file", `{"path":`) + "\n\n")
	b.WriteString("data: " + toolFrag(0, "", "", `"a.go"}`) + "\n\n")
	b.WriteString("data: " + finish("tool_calls") + "\n\n")
	b.WriteString("data: " + usageChunk(100, n, 100+n) + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

func FuzzStreamDecode(f *testing.F) {
	f.Add(recordedStream(3))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":{\"a\":1}}}]},\"finish_reason\":\"stop\"}]}\n\n"))
	f.Add([]byte("data: {\"choices\":\ndata: []}\n\n: c\n\ndata: [DONE]"))
	f.Add([]byte(`{"choices":[{"message":{"content":"x","tool_calls":[{"function":{"name":"f","arguments":"{"}}]}}]}`))
	f.Add([]byte("event: error\ndata: x\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		events, resp, err := llm.DecodeStream(bytes.NewReader(body))
		if err != nil {
			if resp != nil {
				t.Fatalf("both a response and an error: %v", err)
			}
		} else {
			if resp == nil {
				t.Fatal("neither a response nor an error")
			}
			var content, reasoning strings.Builder
			for _, ev := range events {
				content.WriteString(ev.Delta)
				reasoning.WriteString(ev.ReasoningDelta)
			}
			// Deltas add up to the response (a JSON body yields none).
			if len(events) > 0 && (content.String() != resp.Content || reasoning.String() != resp.ReasoningContent) {
				t.Fatalf("deltas %q/%q do not add up to %q/%q", content.String(), reasoning.String(), resp.Content, resp.ReasoningContent)
			}
			for _, c := range resp.ToolCalls {
				if !json.Valid(c.Arguments) || c.ID == "" {
					t.Fatalf("tool call %+v has invalid arguments or no id", c)
				}
			}
		}
		// LF and CRLF framing decode the same.
		if bytes.IndexByte(body, '\r') >= 0 {
			return
		}
		events2, resp2, err2 := llm.DecodeStream(bytes.NewReader(bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))))
		if (err == nil) != (err2 == nil) {
			t.Fatalf("LF error %v, CRLF error %v", err, err2)
		}
		ignoreIDs := cmpopts.IgnoreFields(orchestrator.ToolCall{}, "ID")
		if diff := cmp.Diff(events, events2); diff != "" {
			t.Fatalf("CRLF events differ (-lf +crlf):\n%s", diff)
		}
		if diff := cmp.Diff(resp, resp2, ignoreIDs); diff != "" {
			t.Fatalf("CRLF response differs (-lf +crlf):\n%s", diff)
		}
	})
}

func BenchmarkStreamDecode(b *testing.B) {
	data := recordedStream(500)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := llm.DecodeStream(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGenerateStream(b *testing.B) {
	data := recordedStream(200)
	fs := newServer(b, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(data)
	})
	c := fs.client(b)
	req := question("q")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, err := range c.Generate(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
