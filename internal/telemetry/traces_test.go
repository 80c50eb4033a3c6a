package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/orchestrator"
)

// collector is an in-process OTLP/HTTP collector: it keeps the spans of
// every export and the path and headers each export came with.
type collector struct {
	url string
	// mu guards the fields below.
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string
	paths   []string
	headers []http.Header
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			c.service = append(c.service, attrOf(rs.GetResource().GetAttributes(), "service.name"))
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.paths = append(c.paths, r.URL.Path)
		c.headers = append(c.headers, r.Header.Clone())
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// span is the one span named name the collector received.
func (c *collector) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var found *tracepb.Span
	for _, s := range c.spans {
		if s.Name == name {
			if found != nil {
				t.Fatalf("two spans named %q", name)
			}
			found = s
		}
	}
	if found == nil {
		var names []string
		for _, s := range c.spans {
			names = append(names, s.Name)
		}
		t.Fatalf("no span named %q; got %q", name, names)
	}
	return found
}

// names lists the names of the spans received.
func (c *collector) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.spans {
		out = append(out, s.Name)
	}
	return out
}

// attrOf is an attribute's value as text ("" when absent).
func attrOf(attrs []*commonpb.KeyValue, key string) string {
	for _, a := range attrs {
		if a.Key != key {
			continue
		}
		switch v := a.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			if v.BoolValue {
				return "true"
			}
			return "false"
		case *commonpb.AnyValue_ArrayValue:
			var parts []string
			for _, e := range v.ArrayValue.Values {
				parts = append(parts, e.GetStringValue())
			}
			return strings.Join(parts, ",")
		}
	}
	return ""
}

// tracing is a Telemetry exporting to col over http/protobuf.
func tracing(t *testing.T, col *collector, opts telemetry.Options) *telemetry.Telemetry {
	t.Helper()
	if opts.OTLP.Endpoint == "" {
		opts.OTLP.Endpoint = col.url
	}
	opts.Getenv = noEnv
	tel, err := telemetry.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !tel.Tracing() {
		t.Fatal("traces are off with an endpoint configured")
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	return tel
}

func flush(t *testing.T, tel *telemetry.Telemetry) {
	t.Helper()
	if err := tel.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// remoteParent is a context holding a sampled span context from another
// process, as a request's traceparent gives it.
func remoteParent(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return trace.ContextWithRemoteSpanContext(t.Context(), sc), sc
}

// A run's span continues the trace of the request that started it (the
// parent context, not the run's own); model and tool calls are its
// children with the GenAI attributes of docs/observability.md, and a
// failure is the span's error status.
func TestRunSpanTree(t *testing.T) {
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{Version: "v1.2.3"})
	parent, psc := remoteParent(t)

	runCtx, endRun := tel.RunStarted(parent, context.Background(), orchestrator.RunInfo{ID: "run_1", SessionID: "sess_1",
		UserID: "alice", Frontend: orchestrator.FrontendA2A, Model: "gpt", Resumed: true})
	mctx, endModel := tel.ModelCall(runCtx, orchestrator.ModelCallInfo{RunID: "run_1", Model: "gpt", Round: 2, Mode: "function_call", Stream: true})
	if !trace.SpanFromContext(mctx).SpanContext().IsValid() {
		t.Fatal("ModelCall returned a context without its span")
	}
	endModel(orchestrator.ModelCallEnd{Response: &orchestrator.ModelResponse{Model: "gpt-fallback", FinishReason: "tool_calls",
		Usage: &orchestrator.Usage{InputTokens: 11, OutputTokens: 7}}})
	_, endFailing := tel.ModelCall(runCtx, orchestrator.ModelCallInfo{RunID: "run_1", Model: "ds"})
	endFailing(orchestrator.ModelCallEnd{Err: errors.New("502 from upstream")})
	_, endTool := tel.ToolCall(runCtx, orchestrator.ToolCallInfo{RunID: "run_1", CallID: "call_9", Tool: "alice@search", Source: "user", Owner: "alice"})
	endTool(orchestrator.ToolCallEnd{IsError: true})
	endRun(orchestrator.RunEnd{State: orchestrator.RunFailed, StopReason: "error", Error: "boom", Usage: orchestrator.Usage{InputTokens: 11, OutputTokens: 7}})
	flush(t, tel)

	run := col.span(t, "run")
	if hex.EncodeToString(run.TraceId) != psc.TraceID().String() || hex.EncodeToString(run.ParentSpanId) != psc.SpanID().String() {
		t.Errorf("run span in trace %x under %x; want the request's trace %s under %s", run.TraceId, run.ParentSpanId, psc.TraceID(), psc.SpanID())
	}
	for k, want := range map[string]string{
		"wunder.run_id": "run_1", "wunder.session_id": "sess_1", "wunder.user_id": "alice", "wunder.frontend": "a2a",
		"gen_ai.request.model": "gpt", "wunder.resumed": "true", "wunder.state": "failed", "wunder.stop_reason": "error",
		"gen_ai.usage.input_tokens": "11", "gen_ai.usage.output_tokens": "7",
	} {
		if got := attrOf(run.Attributes, k); got != want {
			t.Errorf("run span %s = %q, want %q", k, got, want)
		}
	}
	if run.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || run.Status.GetMessage() != "boom" {
		t.Errorf("failed run's span status = %v, want error \"boom\"", run.Status)
	}

	chat := col.span(t, "chat gpt")
	if string(chat.ParentSpanId) != string(run.SpanId) || chat.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("chat span: parent %x kind %v; want a client span under the run %x", chat.ParentSpanId, chat.Kind, run.SpanId)
	}
	for k, want := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt", "gen_ai.response.model": "gpt-fallback",
		"gen_ai.response.finish_reasons": "tool_calls", "gen_ai.usage.input_tokens": "11", "gen_ai.usage.output_tokens": "7",
		"wunder.round": "2", "wunder.tool_call_mode": "function_call", "wunder.stream": "true", "wunder.run_id": "run_1",
	} {
		if got := attrOf(chat.Attributes, k); got != want {
			t.Errorf("chat span %s = %q, want %q", k, got, want)
		}
	}
	if chat.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a successful model call's span has status %v", chat.Status)
	}
	failed := col.span(t, "chat ds")
	if failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || attrOf(failed.Attributes, "error.type") != "error" {
		t.Errorf("failed model call: status %v, error.type %q; want error", failed.Status, attrOf(failed.Attributes, "error.type"))
	}

	tool := col.span(t, "execute_tool alice@search")
	if string(tool.ParentSpanId) != string(run.SpanId) {
		t.Errorf("tool span's parent %x, want the run %x", tool.ParentSpanId, run.SpanId)
	}
	for k, want := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "alice@search", "gen_ai.tool.call.id": "call_9",
		"wunder.tool_source": "user", "error.type": "error",
	} {
		if got := attrOf(tool.Attributes, k); got != want {
			t.Errorf("tool span %s = %q, want %q", k, got, want)
		}
	}
	if tool.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("a tool call with an error result: span status %v, want error", tool.Status)
	}
}

// A run that was never admitted ends its span with state not_admitted and
// an error status; a run without a traced parent starts a trace of its
// own; a finished run's span is not an error.
func TestRunSpanStates(t *testing.T) {
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{})
	_, end := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_refused"})
	end(orchestrator.RunEnd{Error: "queue full"})
	flush(t, tel)
	refused := col.span(t, "run")
	if attrOf(refused.Attributes, "wunder.state") != "not_admitted" || refused.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("refused run: state %q status %v, want not_admitted and an error", attrOf(refused.Attributes, "wunder.state"), refused.Status)
	}
	if len(refused.ParentSpanId) != 0 {
		t.Errorf("a run without a traced request has parent %x, want a root span", refused.ParentSpanId)
	}

	col2 := newCollector(t)
	tel2 := tracing(t, col2, telemetry.Options{})
	_, end = tel2.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_ok"})
	end(orchestrator.RunEnd{State: orchestrator.RunFinished})
	flush(t, tel2)
	if ok := col2.span(t, "run"); ok.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("finished run's span status %v", ok.Status)
	}
}

// Store operations at least the threshold slow get a "store {op}" client
// span, starting when the operation started, under the caller's span;
// faster ones get none, and a negative threshold turns them off.
func TestStoreSpansPastTheThreshold(t *testing.T) {
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{StoreSpanThreshold: 10 * time.Millisecond})
	ctx, endRun := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_1"})
	now := time.Now()
	slowStart := now.Add(-50 * time.Millisecond)
	tel.StoreOp(ctx, "insert_events", slowStart, errors.New("database is locked"))
	tel.StoreOp(ctx, "select_runs", now.Add(-time.Millisecond), nil)
	endRun(orchestrator.RunEnd{State: orchestrator.RunFinished})
	flush(t, tel)

	s := col.span(t, "store insert_events")
	run := col.span(t, "run")
	if string(s.ParentSpanId) != string(run.SpanId) || s.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("store span: parent %x kind %v; want a client span under the run", s.ParentSpanId, s.Kind)
	}
	if got := int64(s.StartTimeUnixNano); got != slowStart.UnixNano() {
		t.Errorf("store span starts at %v, want the operation's start %v", time.Unix(0, got), slowStart)
	}
	if d := time.Duration(s.EndTimeUnixNano - s.StartTimeUnixNano); d < 50*time.Millisecond {
		t.Errorf("store span lasts %v, want at least the 50ms the operation took", d)
	}
	if attrOf(s.Attributes, "db.operation.name") != "insert_events" || s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR ||
		s.Status.GetMessage() != "database is locked" {
		t.Errorf("store span attributes %v status %v", s.Attributes, s.Status)
	}
	for _, n := range col.names() {
		if n == "store select_runs" {
			t.Error("an operation under the threshold got a span")
		}
	}

	col2 := newCollector(t)
	off := tracing(t, col2, telemetry.Options{StoreSpanThreshold: -1})
	off.StoreOp(t.Context(), "insert_events", now.Add(-time.Hour), nil)
	_, end := off.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_2"})
	end(orchestrator.RunEnd{State: orchestrator.RunFinished})
	flush(t, off)
	if names := col2.names(); len(names) != 1 || names[0] != "run" {
		t.Errorf("spans with store spans off = %q, want only the run", names)
	}
}

// An http/protobuf endpoint gets /v1/traces appended to its path (once),
// and the configured headers go with every export; service.name defaults
// to wunder.
func TestOTLPEndpointPathAndHeaders(t *testing.T) {
	for _, c := range []struct{ suffix, wantPath string }{
		{"", "/v1/traces"},
		{"/", "/v1/traces"},
		{"/otel", "/otel/v1/traces"},
		{"/otel/v1/traces", "/otel/v1/traces"},
	} {
		t.Run("endpoint"+c.suffix, func(t *testing.T) {
			col := newCollector(t)
			tel := tracing(t, col, telemetry.Options{OTLP: telemetry.OTLP{Endpoint: col.url + c.suffix,
				Headers: map[string]string{"X-Api-Key": "collector-secret"}}})
			_, end := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_1"})
			end(orchestrator.RunEnd{State: orchestrator.RunFinished})
			flush(t, tel)
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.paths) == 0 {
				t.Fatal("nothing exported")
			}
			if col.paths[0] != c.wantPath || col.headers[0].Get("X-Api-Key") != "collector-secret" {
				t.Errorf("export to %s with key %q; want %s with the configured header", col.paths[0], col.headers[0].Get("X-Api-Key"), c.wantPath)
			}
			if col.service[0] != "wunder" {
				t.Errorf("service.name = %q, want wunder", col.service[0])
			}
		})
	}
}

// The middleware names a request's span after the route pattern the mux
// matched (never an id), or after the first path segment when none did,
// and continues the caller's traceparent; without traces it is not there
// at all.
func TestMiddlewareSpans(t *testing.T) {
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /wunder/runs/{run_id}", func(w http.ResponseWriter, r *http.Request) {
		if !trace.SpanFromContext(r.Context()).SpanContext().IsValid() {
			t.Error("the handler's context carries no span")
		}
	})
	srv := httptest.NewServer(tel.Middleware(mux))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/wunder/runs/run_secret123", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = http.Post(srv.URL+"/a2a/extra/path", "application/json", bytes.NewReader([]byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	flush(t, tel)

	s := col.span(t, "GET /wunder/runs/{run_id}")
	if hex.EncodeToString(s.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(s.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("request span in trace %x under %x; want the caller's traceparent", s.TraceId, s.ParentSpanId)
	}
	col.span(t, "POST /a2a") // unmatched: the first segment only
	for _, n := range col.names() {
		if strings.Contains(n, "run_secret123") || strings.Contains(n, "extra") {
			t.Errorf("span name %q carries a path beyond the route", n)
		}
	}

	off, err := telemetry.New(t.Context(), telemetry.Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if h := off.Middleware(mux); h != http.Handler(mux) {
		t.Errorf("without traces the middleware wraps the handler (%T)", h)
	}
}

// Outgoing requests through Transport carry the caller's trace as
// traceparent; without traces Transport returns the base as it is.
func TestTransportCarriesTheTrace(t *testing.T) {
	var mu sync.Mutex
	var got string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Get("traceparent")
		mu.Unlock()
	}))
	defer peer.Close()
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{})
	parent, psc := remoteParent(t)
	ctx, end := tel.RunStarted(parent, context.Background(), orchestrator.RunInfo{ID: "run_1"})
	client := &http.Client{Transport: tel.Transport(nil)}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, peer.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	end(orchestrator.RunEnd{State: orchestrator.RunFinished})
	mu.Lock()
	tp := got
	mu.Unlock()
	if !strings.HasPrefix(tp, "00-"+psc.TraceID().String()+"-") {
		t.Errorf("traceparent sent = %q, want one in trace %s", tp, psc.TraceID())
	}

	off, err := telemetry.New(t.Context(), telemetry.Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	base := &http.Transport{}
	if rt := off.Transport(base); rt != http.RoundTripper(base) {
		t.Errorf("without traces Transport(base) = %T, want base itself", rt)
	}
	if rt := off.Transport(nil); rt != nil {
		t.Errorf("without traces Transport(nil) = %T, want nil (the component's default)", rt)
	}
}

// Carry moves the span context of a request to a context made later (a
// push notification after the request ended), as a remote parent; it
// changes nothing without traces, without a span, or on a nil Telemetry.
func TestCarry(t *testing.T) {
	col := newCollector(t)
	tel := tracing(t, col, telemetry.Options{})
	from, psc := remoteParent(t)
	later := tel.Carry(from)(context.Background())
	if sc := trace.SpanContextFromContext(later); sc.TraceID() != psc.TraceID() || sc.SpanID() != psc.SpanID() || !sc.IsRemote() {
		t.Errorf("carried span context = %v, want %v as a remote parent", sc, psc)
	}

	type key struct{}
	base := context.WithValue(context.Background(), key{}, "v")
	off, err := telemetry.New(t.Context(), telemetry.Options{Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	var nilTel *telemetry.Telemetry
	for name, carry := range map[string]func(context.Context) context.Context{
		"without traces": off.Carry(from),
		"without a span": tel.Carry(context.Background()),
		"nil Telemetry":  nilTel.Carry(from),
	} {
		if got := carry(base); got != base {
			t.Errorf("%s: Carry changed the context", name)
		}
	}
	if err := off.ForceFlush(t.Context()); err != nil {
		t.Errorf("ForceFlush without traces = %v", err)
	}
	if err := off.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown without traces = %v", err)
	}
}
