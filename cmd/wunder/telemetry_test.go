package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wunder/wunder/internal/config"
)

// collector is an in-process OTLP/HTTP collector: it accepts
// POST /v1/traces in protobuf and keeps the spans.
type collector struct {
	url string
	mu  sync.Mutex
	// spans are every span received, with the headers of its export.
	spans   []*tracepb.Span
	headers []http.Header
}

func newCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.Error(w, "not an OTLP traces export", http.StatusNotFound)
			return
		}
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
			t.Errorf("collector: not an ExportTraceServiceRequest: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
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

// received returns the spans received so far.
func (c *collector) received() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// attr is a span attribute's value as text ("" when absent).
func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_IntValue:
			return strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_BoolValue:
			return strconv.FormatBool(v.BoolValue)
		default:
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// postWunder runs a question through POST /wunder without streaming,
// with extra headers, and returns the run id.
func postWunder(t *testing.T, base string, hdr map[string]string, body map[string]any) string {
	t.Helper()
	body["stream"] = false
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/wunder", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		RunID  string `json:"run_id"`
		Answer string `json:"answer"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.RunID == "" {
		t.Fatalf("POST /wunder = %d %s", resp.StatusCode, raw)
	}
	return out.RunID
}

func flush(t *testing.T, s *server) {
	t.Helper()
	if err := s.app.tel.ForceFlush(t.Context()); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
}

// A run on B that delegates to A through a2a@A produces one trace: the
// caller's traceparent is the parent of B's request span, B's run span is
// under it, with a model-call span carrying the GenAI attributes and a
// tool-call span under the run; B's call to A carries the traceparent, so
// A's run continues the same trace. Both export to one in-process OTLP
// collector, over HTTP protobuf as configured in observability.otlp.
func TestTelemetryTraceOfARunAcrossA2A(t *testing.T) {
	col := newCollector(t)
	otlp := func(c *config.Config) {
		c.Observability.OTLP = config.OTLP{Endpoint: col.url, Protocol: config.OTLPHTTP, Headers: map[string]string{"X-Collector-Key": "k1"}}
	}
	a := startServer(t, otlp)
	b := startServer(t, func(c *config.Config) {
		otlp(c)
		c.A2A.Services = []config.A2AService{{Name: "A", Endpoint: a.url, Enabled: true, MaxDepth: 3, Description: "wunder A"}}
	})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	const parentSpan = "00f067aa0ba902b7"
	runID := postWunder(t, b.url, map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-01"},
		map[string]any{"user_id": "u-trace", "question": callQuestion(t, "a2a__A", "hello A"), "tool_names": []string{"a2a@A"},
			"tool_call_mode": "function_call"})
	// Every span below has ended before the answer came back (a run's span
	// ends before its final event): flushing exports them all.
	flush(t, b)
	flush(t, a)

	byID := map[string]*tracepb.Span{}
	var runB, runA, chat, tool, reqB *tracepb.Span
	for _, s := range col.received() {
		byID[hex.EncodeToString(s.SpanId)] = s
		switch {
		case s.Name == "run" && attr(s, "wunder.run_id") == runID:
			runB = s
		case s.Name == "run" && attr(s, "wunder.frontend") == "a2a":
			runA = s
		case s.Name == "chat fake" && attr(s, "wunder.run_id") == runID && chat == nil:
			chat = s
		case s.Name == "execute_tool a2a@A":
			tool = s
		case hex.EncodeToString(s.ParentSpanId) == parentSpan:
			reqB = s
		}
	}
	if runB == nil || runA == nil || chat == nil || tool == nil || reqB == nil {
		names := []string{}
		for _, s := range col.received() {
			names = append(names, s.Name)
		}
		t.Fatalf("spans missing: run on B %v, run on A %v, chat %v, execute_tool %v, B's request %v; received %q",
			runB != nil, runA != nil, chat != nil, tool != nil, reqB != nil, names)
	}
	for name, s := range map[string]*tracepb.Span{"B's request": reqB, "B's run": runB, "chat": chat, "execute_tool": tool, "A's run": runA} {
		if got := hex.EncodeToString(s.TraceId); got != traceID {
			t.Errorf("%s span: trace id %s, want the caller's %s", name, got, traceID)
		}
	}
	if got := hex.EncodeToString(runB.ParentSpanId); got != hex.EncodeToString(reqB.SpanId) {
		t.Errorf("B's run span's parent = %s, want B's request span %s", got, hex.EncodeToString(reqB.SpanId))
	}
	for name, s := range map[string]*tracepb.Span{"chat": chat, "execute_tool": tool} {
		if !bytes.Equal(s.ParentSpanId, runB.SpanId) {
			t.Errorf("%s span's parent = %x, want B's run span %x", name, s.ParentSpanId, runB.SpanId)
		}
	}
	for key, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "fake"} {
		if got := attr(chat, key); got != want {
			t.Errorf("chat span %s = %q, want %q", key, got, want)
		}
	}
	for _, key := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		if n, err := strconv.Atoi(attr(chat, key)); err != nil || n <= 0 {
			t.Errorf("chat span %s = %q, want a positive count", key, attr(chat, key))
		}
	}
	if got := attr(tool, "gen_ai.tool.name"); got != "a2a@A" {
		t.Errorf("execute_tool span gen_ai.tool.name = %q", got)
	}
	// A's run descends from B's tool call: walk up from A's run to it.
	found := false
	for s := runA; s != nil; s = byID[hex.EncodeToString(s.ParentSpanId)] {
		if bytes.Equal(s.SpanId, tool.SpanId) {
			found = true
			break
		}
	}
	if !found {
		t.Errorf("A's run span does not descend from B's execute_tool span (its parent %x)", runA.ParentSpanId)
	}
	col.mu.Lock()
	if len(col.headers) == 0 || col.headers[0].Get("X-Collector-Key") != "k1" {
		t.Errorf("exports without observability.otlp.headers: %v", col.headers)
	}
	col.mu.Unlock()
}

// seriesRE matches a sample line of the Prometheus text format.
var seriesRE = regexp.MustCompile(`^([a-z0-9_]+)(\{[^}]*\})? (\S+)$`)

// scrape reads /metrics and returns each sample, keyed by name and labels
// as written.
func scrape(t *testing.T, base string, hdr map[string]string) (int, map[string]float64) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := seriesRE.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseFloat(m[3], 64)
			if err == nil {
				out[m[1]+m[2]] = v
			}
		}
	}
	return resp.StatusCode, out
}

// has reports whether a series of that name was scraped.
func has(samples map[string]float64, name string) bool {
	for k := range samples {
		if k == name || strings.HasPrefix(k, name+"{") {
			return true
		}
	}
	return false
}

// /metrics exposes every series of the contract, with counts that match
// the runs made; it needs an admin credential unless metrics_public.
func TestMetricsAfterRunsWithAToolCall(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key" })
	admin := map[string]string{"X-API-Key": "admin-key"}
	if code, _ := scrape(t, s.url, nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without credentials = %d, want 401", code)
	}
	const runs = 3
	for i := range runs {
		postWunder(t, s.url, admin, map[string]any{"user_id": "u" + strconv.Itoa(i),
			"question":   `please call write_file {"path":"m.txt","content":"hi"}`,
			"tool_names": []string{"write_file"}, "tool_call_mode": "function_call"})
	}
	code, m := scrape(t, s.url, admin)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics as admin = %d", code)
	}
	for _, name := range []string{"wunder_runs_total", "wunder_run_duration_seconds_count", "wunder_first_event_seconds_count",
		"wunder_model_calls_total", "wunder_model_call_duration_seconds_count", "wunder_model_tokens_total",
		"wunder_tool_calls_total", "wunder_tool_call_duration_seconds_count", "wunder_queue_depth", "wunder_open_streams",
		"wunder_store_op_duration_seconds_count", "wunder_active_runs", "go_goroutines", "process_cpu_seconds_total"} {
		if !has(m, name) {
			t.Errorf("/metrics has no %s", name)
		}
	}
	for series, want := range map[string]float64{
		`wunder_runs_total{frontend="rest",state="finished"}`:        runs,
		`wunder_run_duration_seconds_count`:                          runs,
		`wunder_first_event_seconds_count`:                           runs,
		`wunder_tool_calls_total{outcome="ok",tool="write_file"}`:    runs,
		`wunder_tool_call_duration_seconds_count{tool="write_file"}`: runs,
		// One call asks for the tool, one answers with its result.
		`wunder_model_calls_total{model="fake",outcome="ok"}`:    2 * runs,
		`wunder_model_call_duration_seconds_count{model="fake"}`: 2 * runs,
		`wunder_queue_depth`: 0,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	// Each run's start and end are a write of the store's writer at least.
	if got, series := m[`wunder_store_op_duration_seconds_count{op="write"}`], `wunder_store_op_duration_seconds_count{op="write"}`; got < 2*runs {
		t.Errorf("%s = %v, want at least %d", series, got, 2*runs)
	}
	for _, kind := range []string{"input", "output"} {
		if got := m[`wunder_model_tokens_total{kind="`+kind+`",model="fake"}`]; got <= 0 {
			t.Errorf("wunder_model_tokens_total kind %s = %v, want > 0", kind, got)
		}
	}
	// Run ids never become labels; user ids only in the per-user series,
	// which observability.metrics_max_users bounds (audit_test.go).
	for k := range m {
		name, labels, _ := strings.Cut(k, "{")
		if strings.Contains(labels, `"run_`) || (strings.Contains(labels, `"u0"`) && !strings.HasPrefix(name, "wunder_user_")) {
			t.Errorf("a user or run id in a label: %s", k)
		}
	}

	pub := startServer(t, func(c *config.Config) { c.Security.APIKey = "admin-key"; c.Observability.MetricsPublic = true })
	if code, m := scrape(t, pub.url, nil); code != http.StatusOK || !has(m, "wunder_queue_depth") {
		t.Errorf("GET /metrics without credentials with metrics_public = %d (queue depth present %v), want 200", code, has(m, "wunder_queue_depth"))
	}
}

// A2A push notifications carry a traceparent that continues the trace of
// the request that set the push config.
func TestTelemetryPushNotificationsCarryTheTrace(t *testing.T) {
	col := newCollector(t)
	s := startServer(t, func(c *config.Config) {
		c.Observability.OTLP = config.OTLP{Endpoint: col.url, Protocol: config.OTLPHTTP}
		c.A2A.Push.Enabled = true
		c.A2A.Push.AllowPrivate = true
	})
	got := make(chan string, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Get("Traceparent")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(hook.Close)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hello"}]},` +
		`"configuration":{"blocking":false,"pushNotificationConfig":{"url":"` + hook.URL + `","token":"t"}}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "0.3")
	req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(raw), `"error"`) {
		t.Fatalf("message/send with a push config: %d %s", resp.StatusCode, raw)
	}
	select {
	case tp := <-got:
		if !strings.HasPrefix(tp, "00-"+traceID+"-") {
			t.Errorf("the push notification's traceparent is %q, want one of trace %s", tp, traceID)
		}
	case <-t.Context().Done():
		t.Fatal("no push notification arrived")
	}
}
