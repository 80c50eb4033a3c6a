package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/wunder/wunder/internal/config"
)

// traceUpstream is a go-sdk MCP server whose tool echo records the
// traceparent each call's _meta carried.
type traceUpstream struct {
	url string
	mu  sync.Mutex
	// seen are the traceparents of the calls, in order ("" for none).
	seen []string
}

func newTraceUpstream(t *testing.T) *traceUpstream {
	t.Helper()
	u := &traceUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "echoes", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tp, _ := req.Params.GetMeta()["traceparent"].(string)
			u.mu.Lock()
			u.seen = append(u.seen, tp)
			u.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echoed"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	u.url = ts.URL
	return u
}

// last is the traceparent of the latest call, split into trace and span.
func (u *traceUpstream) last(t *testing.T) (traceID, spanID string) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		t.Fatal("the upstream saw no call")
	}
	parts := strings.Split(u.seen[len(u.seen)-1], "-")
	if len(parts) != 4 {
		t.Fatalf("the upstream's last call carried traceparent %q in _meta", u.seen[len(u.seen)-1])
	}
	return parts[1], parts[2]
}

// headerTP adds a traceparent header to every request.
type headerTP struct{ tp, key string }

func (h headerTP) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.key)
	if h.tp != "" {
		r.Header.Set("traceparent", h.tp)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func spanNamed(spans []*tracepb.Span, name, traceID string) *tracepb.Span {
	for _, s := range spans {
		if s.Name == name && hex.EncodeToString(s.TraceId) == traceID {
			return s
		}
	}
	return nil
}

// descends reports whether s has anc among its ancestors (or is it).
func descends(spans []*tracepb.Span, s, anc *tracepb.Span) bool {
	byID := map[string]*tracepb.Span{}
	for _, x := range spans {
		byID[hex.EncodeToString(x.SpanId)] = x
	}
	for ; s != nil; s = byID[hex.EncodeToString(s.ParentSpanId)] {
		if bytes.Equal(s.SpanId, anc.SpanId) {
			return true
		}
	}
	return false
}

// Trace context in _meta (SEP-414), with real spans exported to an
// in-process OTLP collector and a go-sdk upstream that records what it
// was sent:
//   - a wunder@run call whose _meta carries a traceparent joins that trace:
//     /wunder/mcp's server span is the caller's span's child, the run span
//     descends from it, and the upstream tool the run calls sees the run's
//     execute_tool span as its parent in _meta;
//   - a catalog call does the same, the upstream seeing the server span;
//   - the pass-through writes the gateway's span (the child of the HTTP
//     traceparent) into the _meta it forwards, and leaves a client's own
//     _meta traceparent as it came.
func TestMCPTraceContextInMeta(t *testing.T) {
	col := newCollector(t)
	up := newTraceUpstream(t)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.MCP.Server.ExposeCatalog = true
		c.Observability.OTLP = config.OTLP{Endpoint: col.url, Protocol: config.OTLPHTTP}
		c.MCP.Servers = []config.MCPServer{{Name: "up", Transport: config.MCPStreamableHTTP, URL: up.url, Enabled: true}}
	})
	refreshMCP(t, s.url, "up", "k")
	cs := connectMCP(t, s.url+"/wunder/mcp")

	// wunder@run.
	const runTrace, runParent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run",
		Meta:      mcp.Meta{"traceparent": "00-" + runTrace + "-" + runParent + "-01", "tracestate": "caller=1"},
		Arguments: map[string]any{"task": `call up__echo {"text":"x"}`, "tool_names": []string{"up@echo"}}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	upTrace, upParent := up.last(t)
	flush(t, s)
	spans := col.received()
	server := spanNamed(spans, "tools/call wunder__run", runTrace)
	run := spanNamed(spans, "run", runTrace)
	tool := spanNamed(spans, "execute_tool up@echo", runTrace)
	if server == nil || run == nil || tool == nil {
		t.Fatalf("in trace %s: server span %v, run %v, execute_tool %v (of %d spans)", runTrace, server != nil, run != nil, tool != nil, len(spans))
	}
	if got := hex.EncodeToString(server.ParentSpanId); got != runParent {
		t.Errorf("the server span's parent = %s, want the caller's %s", got, runParent)
	}
	// A 2026-07-28 client (go-sdk's default) has no session: the span
	// names one only when there is one.
	if attr(server, "mcp.method.name") != "tools/call" || attr(server, "gen_ai.tool.name") != "wunder__run" || attr(server, "mcp.session.id") != cs.ID() {
		t.Errorf("server span attributes: %v", server.Attributes)
	}
	if !descends(spans, run, server) || !descends(spans, tool, run) {
		t.Errorf("the run does not descend from the server span, or its tool call from the run")
	}
	if upTrace != runTrace || upParent != hex.EncodeToString(tool.SpanId) {
		t.Errorf("the upstream saw traceparent %s-%s, want %s-%x (the execute_tool span)", upTrace, upParent, runTrace, tool.SpanId)
	}

	// A catalog call.
	const catTrace, catParent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + catTrace + "-" + catParent + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("up__echo: %v %+v", err, res)
	}
	upTrace, upParent = up.last(t)
	flush(t, s)
	catSpan := spanNamed(col.received(), "tools/call up__echo", catTrace)
	if catSpan == nil || hex.EncodeToString(catSpan.ParentSpanId) != catParent {
		t.Fatalf("catalog call: server span %v in trace %s, want it under %s", catSpan, catTrace, catParent)
	}
	if upTrace != catTrace || upParent != hex.EncodeToString(catSpan.SpanId) {
		t.Errorf("the upstream saw traceparent %s-%s, want %s-%x (the server span)", upTrace, upParent, catTrace, catSpan.SpanId)
	}

	// The pass-through: the HTTP traceparent's trace goes on in _meta.
	const passTrace, passParent = "11111111111111111111111111111111", "2222222222222222"
	pcs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp/up",
			HTTPClient: &http.Client{Transport: headerTP{tp: "00-" + passTrace + "-" + passParent + "-01", key: "k"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pcs.Close()
	if _, err := pcs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	upTrace, upParent = up.last(t)
	flush(t, s)
	var gateway *tracepb.Span
	for _, sp := range col.received() {
		if hex.EncodeToString(sp.SpanId) == upParent {
			gateway = sp
		}
	}
	if upTrace != passTrace || gateway == nil || hex.EncodeToString(gateway.ParentSpanId) != passParent {
		t.Errorf("through the pass-through the upstream saw %s-%s; want trace %s under a wunder span whose parent is %s (found %v)",
			upTrace, upParent, passTrace, passParent, gateway)
	}
	// A client's own _meta traceparent passes as it came.
	const own = "00-33333333333333333333333333333333-4444444444444444-01"
	if _, err := pcs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}, Meta: mcp.Meta{"traceparent": own}}); err != nil {
		t.Fatal(err)
	}
	if upTrace, upParent = up.last(t); "00-"+upTrace+"-"+upParent+"-01" != own {
		t.Errorf("the client's own traceparent became %s-%s", upTrace, upParent)
	}
}
