package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

const (
	testTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	testSpanID      = "00f067aa0ba902b7"
	testTraceparent = "00-" + testTraceID + "-" + testSpanID + "-01"
)

// spanCtx is a context under the span testSpanID of trace testTraceID,
// with a tracestate.
func spanCtx(t testing.TB) context.Context {
	t.Helper()
	tid, _ := trace.TraceIDFromHex(testTraceID)
	sid, _ := trace.SpanIDFromHex(testSpanID)
	ts, err := trace.ParseTraceState("wunder=1")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

// The trace context is spliced into params._meta wherever the request
// leaves room for it, and every other byte keeps its meaning.
func TestWithTraceContextSplices(t *testing.T) {
	ctx := spanCtx(t)
	for _, tc := range []struct{ name, in string }{
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`},
		{"empty params", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`},
		{"spaced empty params", "{ \"jsonrpc\" : \"2.0\" , \"id\" : \"a\" , \"method\" : \"tools/list\" , \"params\" : { \n } }"},
		{"params without meta", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"_meta":{"x":"}{"},"s":"\"params\":{"}}}`},
		{"null meta", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":null,"name":"echo"}}`},
		{"meta with a token", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7},"arguments":[1,{"a":[2]}]}}`},
		{"empty meta", `{"params":{"name":"echo","_meta":{ }},"jsonrpc":"2.0","id":2,"method":"tools/call"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := withTraceContext(ctx, []byte(tc.in))
			var got, want map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not JSON: %s (%v)", out, err)
			}
			_ = json.Unmarshal([]byte(tc.in), &want)
			params, _ := got["params"].(map[string]any)
			meta, _ := params["_meta"].(map[string]any)
			if meta["traceparent"] != testTraceparent || meta["tracestate"] != "wunder=1" {
				t.Fatalf("_meta = %v in %s", meta, out)
			}
			// Take the added keys out again: the rest is what came in.
			delete(meta, "traceparent")
			delete(meta, "tracestate")
			wp, _ := want["params"].(map[string]any)
			if wm, ok := wp["_meta"].(map[string]any); ok || len(meta) > 0 {
				if !reflect.DeepEqual(wm, meta) {
					t.Errorf("_meta's other keys = %v, want %v", meta, wm)
				}
			}
			delete(params, "_meta")
			if wp != nil {
				delete(wp, "_meta")
			}
			if len(params) == 0 && len(wp) == 0 {
				delete(got, "params")
				delete(want, "params")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("message changed beyond _meta:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// A request that carries a traceparent already, or has params that are
// no object, goes as it came; so does every request without a span.
func TestWithTraceContextLeavesAlone(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":"text"}}`,
	} {
		if out := withTraceContext(spanCtx(t), []byte(in)); string(out) != in {
			t.Errorf("%s became %s", in, out)
		}
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	if out := withTraceContext(context.Background(), []byte(in)); string(out) != in {
		t.Errorf("without a span, %s became %s", in, out)
	}
}

// Whatever valid JSON-RPC request comes in, what goes out is valid JSON
// with the same id and method.
func FuzzWithTraceContext(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{}}}`)
	f.Add(`{"jsonrpc":"2.0","id":"x","method":"m","params":{"a":"\\\"}{"}}`)
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	ctx := spanCtx(f)
	f.Fuzz(func(t *testing.T, in string) {
		m, err := readMessage([]byte(in))
		if err != nil || m.kind() != kindRequest {
			return
		}
		out := withTraceContext(ctx, []byte(in))
		m2, err := readMessage(out)
		if err != nil {
			t.Fatalf("%s became %s: %v", in, out, err)
		}
		if string(m2.ID) != string(m.ID) || m2.Method != m.Method {
			t.Fatalf("%s became %s", in, out)
		}
	})
}

// What the splice costs a forwarded tools/call, with traces off (no span:
// the message goes untouched) and on.
//
//	go test -run '^$' -bench WithTraceContext ./mcpserver/
func BenchmarkWithTraceContext(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("x", 512) + `"},"_meta":{"progressToken":7}}}`)
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"off", context.Background()}, {"on", spanCtx(b)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = withTraceContext(bc.ctx, body)
			}
		})
	}
}
