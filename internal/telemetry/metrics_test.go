package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/orchestrator"
)

// noEnv is an environment without any OTEL_* variable.
func noEnv(string) string { return "" }

// newTel is a Telemetry without traces, with at most maxUsers users of
// their own in the per-user series.
func newTel(t *testing.T, maxUsers int) *telemetry.Telemetry {
	t.Helper()
	tel, err := telemetry.New(t.Context(), telemetry.Options{Getenv: noEnv, MaxUsers: maxUsers})
	if err != nil {
		t.Fatal(err)
	}
	return tel
}

// exposition is one scrape of /metrics: the TYPE of every family and the
// value of every sample.
type exposition struct {
	types   map[string]string
	samples map[string][]sample
}

type sample struct {
	labels map[string]string
	value  float64
}

var (
	typeLine   = regexp.MustCompile(`^# TYPE (\S+) (\S+)$`)
	sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$`)
	labelPair  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

// scrape reads the metrics handler over HTTP, as Prometheus does.
func scrape(t *testing.T, tel *telemetry.Telemetry) exposition {
	t.Helper()
	srv := httptest.NewServer(tel.MetricsHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics = %d %s, want 200 in the text format", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	e := exposition{types: map[string]string{}, samples: map[string][]sample{}}
	for _, line := range strings.Split(string(body), "\n") {
		if m := typeLine.FindStringSubmatch(line); m != nil {
			e.types[m[1]] = m[2]
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		s := sample{labels: map[string]string{}, value: v}
		for _, p := range labelPair.FindAllStringSubmatch(m[2], -1) {
			s.labels[p[1]] = p[2]
		}
		e.samples[m[1]] = append(e.samples[m[1]], s)
	}
	return e
}

// value is the sample of name with exactly these labels (k, v, k, v...),
// and whether there is one.
func (e exposition) value(name string, kv ...string) (float64, bool) {
	want := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		want[kv[i]] = kv[i+1]
	}
	for _, s := range e.samples[name] {
		if maps.Equal(s.labels, want) {
			return s.value, true
		}
	}
	return 0, false
}

// get is value, 0 when absent.
func (e exposition) get(name string, kv ...string) float64 {
	v, _ := e.value(name, kv...)
	return v
}

// labelValues lists the values label takes in the samples of name.
func (e exposition) labelValues(name, label string) []string {
	var out []string
	for _, s := range e.samples[name] {
		if v, ok := s.labels[label]; ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// A run is counted once, when it ends, under its terminal state and a
// bounded front-end label; a run that pauses for approvals or a question
// is not counted at the pause, and one never admitted is not counted at
// all.
func TestRunsCountedByTerminalStateAndFrontend(t *testing.T) {
	tel := newTel(t, 0)
	ends := []struct {
		frontend string
		state    orchestrator.RunState
	}{
		{orchestrator.FrontendREST, orchestrator.RunFinished},
		{orchestrator.FrontendREST, orchestrator.RunFinished},
		{orchestrator.FrontendA2A, orchestrator.RunFailed},
		{orchestrator.FrontendMCP, orchestrator.RunCancelled},
		{orchestrator.FrontendConnect, orchestrator.RunFinished},
		{"", orchestrator.RunFinished},                              // started from Go
		{"carrier-pigeon", orchestrator.RunFinished},                // anything else is "other"
		{orchestrator.FrontendA2A, orchestrator.RunWaitingApproval}, // paused: counted when it ends
		{orchestrator.FrontendA2A, orchestrator.RunWaitingInput},
		{orchestrator.FrontendREST, ""}, // never admitted
	}
	for i, e := range ends {
		_, end := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: fmt.Sprint("run_", i), Frontend: e.frontend})
		end(orchestrator.RunEnd{State: e.state})
	}
	m := scrape(t, tel)
	for _, c := range []struct {
		state, frontend string
		want            float64
	}{
		{"finished", "rest", 2}, {"failed", "a2a", 1}, {"cancelled", "mcp", 1}, {"finished", "connect", 1},
		{"finished", "internal", 1}, {"finished", "other", 1},
	} {
		if got := m.get("wunder_runs_total", "state", c.state, "frontend", c.frontend); got != c.want {
			t.Errorf(`wunder_runs_total{state=%q,frontend=%q} = %v, want %v`, c.state, c.frontend, got, c.want)
		}
	}
	if got := m.labelValues("wunder_runs_total", "state"); !slices.Equal(got, []string{"cancelled", "failed", "finished"}) {
		t.Errorf("states counted = %q; a pause or a run never admitted must not be counted", got)
	}
	if got := m.labelValues("wunder_runs_total", "frontend"); !slices.Equal(got, []string{"a2a", "connect", "internal", "mcp", "other", "rest"}) {
		t.Errorf("frontend label values = %q, want only the bounded set", got)
	}
	if got := m.get("wunder_run_duration_seconds_count"); got != 7 {
		t.Errorf("wunder_run_duration_seconds_count = %v, want the 7 runs that ended", got)
	}
}

// A model call is counted under its configured model with its outcome: a
// cancelled or timed-out context is "cancelled" (wrapped or not), any
// other error "error". Tokens are added when the model reported usage.
func TestModelCallOutcomesAndTokens(t *testing.T) {
	tel := newTel(t, 0)
	usage := &orchestrator.Usage{InputTokens: 120, OutputTokens: 30}
	for _, c := range []struct {
		model string
		end   orchestrator.ModelCallEnd
	}{
		{"gpt", orchestrator.ModelCallEnd{Response: &orchestrator.ModelResponse{Content: "a", Usage: usage}}},
		{"gpt", orchestrator.ModelCallEnd{Response: &orchestrator.ModelResponse{Content: "b", Usage: usage}}},
		{"gpt", orchestrator.ModelCallEnd{Response: &orchestrator.ModelResponse{Content: "no usage"}}},
		{"gpt", orchestrator.ModelCallEnd{Err: fmt.Errorf("llm: %w", context.Canceled)}},
		{"gpt", orchestrator.ModelCallEnd{Err: context.DeadlineExceeded}},
		{"gpt", orchestrator.ModelCallEnd{Err: errors.New("502 bad gateway")}},
		{"ds", orchestrator.ModelCallEnd{Err: errors.New("401 unauthorized")}},
	} {
		_, end := tel.ModelCall(t.Context(), orchestrator.ModelCallInfo{RunID: "run_1", Model: c.model})
		end(c.end)
	}
	m := scrape(t, tel)
	for _, c := range []struct {
		series string
		kv     []string
		want   float64
	}{
		{"wunder_model_calls_total", []string{"model", "gpt", "outcome", "ok"}, 3},
		{"wunder_model_calls_total", []string{"model", "gpt", "outcome", "cancelled"}, 2},
		{"wunder_model_calls_total", []string{"model", "gpt", "outcome", "error"}, 1},
		{"wunder_model_calls_total", []string{"model", "ds", "outcome", "error"}, 1},
		{"wunder_model_tokens_total", []string{"model", "gpt", "kind", "input"}, 240},
		{"wunder_model_tokens_total", []string{"model", "gpt", "kind", "output"}, 60},
		{"wunder_model_call_duration_seconds_count", []string{"model", "gpt"}, 6},
		{"wunder_model_call_duration_seconds_count", []string{"model", "ds"}, 1},
	} {
		if got, ok := m.value(c.series, c.kv...); !ok || got != c.want {
			t.Errorf("%s%q = %v (present %v), want %v", c.series, c.kv, got, ok, c.want)
		}
	}
	if _, ok := m.value("wunder_model_tokens_total", "model", "ds", "kind", "input"); ok {
		t.Error("a failed call without usage made a token series")
	}
}

// A tool call is counted by its canonical name and outcome; a cancelled
// call is "cancelled" even when its result is an error; a user's own tool
// (its name carries the user id) is counted as user_tool, while an MCP
// tool's server@tool name is kept.
func TestToolCallOutcomesAndLabels(t *testing.T) {
	tel := newTel(t, 0)
	for _, c := range []struct {
		info orchestrator.ToolCallInfo
		end  orchestrator.ToolCallEnd
	}{
		{orchestrator.ToolCallInfo{Tool: "write_file"}, orchestrator.ToolCallEnd{}},
		{orchestrator.ToolCallInfo{Tool: "write_file"}, orchestrator.ToolCallEnd{IsError: true}},
		{orchestrator.ToolCallInfo{Tool: "write_file"}, orchestrator.ToolCallEnd{IsError: true, Cancelled: true}},
		{orchestrator.ToolCallInfo{Tool: "fs@read", Source: "mcp"}, orchestrator.ToolCallEnd{}},
		{orchestrator.ToolCallInfo{Tool: "alice@search", Owner: "alice"}, orchestrator.ToolCallEnd{}},
		{orchestrator.ToolCallInfo{Tool: "bob@fs@read", Owner: "bob"}, orchestrator.ToolCallEnd{}},
	} {
		_, end := tel.ToolCall(t.Context(), c.info)
		end(c.end)
	}
	m := scrape(t, tel)
	for _, c := range []struct {
		tool, outcome string
		want          float64
	}{
		{"write_file", "ok", 1}, {"write_file", "error", 1}, {"write_file", "cancelled", 1},
		{"fs@read", "ok", 1}, {"user_tool", "ok", 2},
	} {
		if got := m.get("wunder_tool_calls_total", "tool", c.tool, "outcome", c.outcome); got != c.want {
			t.Errorf("wunder_tool_calls_total{tool=%q,outcome=%q} = %v, want %v", c.tool, c.outcome, got, c.want)
		}
	}
	if got := m.labelValues("wunder_tool_call_duration_seconds_count", "tool"); !slices.Equal(got, []string{"fs@read", "user_tool", "write_file"}) {
		t.Errorf("tool label values = %q; a user id must never be a label", got)
	}
}

// Past metrics_max_users distinct users, the others are counted together
// as user="_other"; a user seen before the bound keeps its own series.
// A paused run adds its execution time but is not a run yet; a run never
// admitted counts nothing.
func TestPerUserSeriesAreBounded(t *testing.T) {
	tel := newTel(t, 2)
	run := func(user string, state orchestrator.RunState, in, out int64) {
		_, end := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_" + user, UserID: user})
		end(orchestrator.RunEnd{State: state, Usage: orchestrator.Usage{InputTokens: in, OutputTokens: out}})
	}
	run("alice", orchestrator.RunFinished, 10, 1)
	run("bob", orchestrator.RunWaitingApproval, 100, 100) // paused: time only
	run("carol", orchestrator.RunFinished, 20, 2)         // third user: _other
	run("dave", orchestrator.RunFailed, 30, 3)            // fourth: _other too
	run("alice", orchestrator.RunCancelled, 5, 5)         // seen before the bound
	run("erin", "", 1000, 1000)                           // never admitted
	tel.ToolDecision(&orchestrator.ToolLog{UserID: "alice", Outcome: orchestrator.OutcomeAllowed, Via: orchestrator.ViaRun, FrontEnd: orchestrator.FrontendREST})
	tel.ToolDecision(&orchestrator.ToolLog{UserID: "carol", Outcome: orchestrator.OutcomeDenied, Via: orchestrator.ViaCatalog, FrontEnd: orchestrator.FrontendMCP})

	m := scrape(t, tel)
	for _, c := range []struct {
		series string
		kv     []string
		want   float64
	}{
		{"wunder_user_runs_total", []string{"user", "alice"}, 2},
		{"wunder_user_runs_total", []string{"user", "_other"}, 2},
		{"wunder_user_tokens_total", []string{"user", "alice", "kind", "input"}, 15},
		{"wunder_user_tokens_total", []string{"user", "alice", "kind", "output"}, 6},
		{"wunder_user_tokens_total", []string{"user", "_other", "kind", "input"}, 50},
		{"wunder_user_tool_calls_total", []string{"user", "alice", "outcome", "allowed"}, 1},
		{"wunder_user_tool_calls_total", []string{"user", "_other", "outcome", "denied"}, 1},
		{"wunder_tool_decisions_total", []string{"outcome", "allowed", "via", "run", "frontend", "rest"}, 1},
		{"wunder_tool_decisions_total", []string{"outcome", "denied", "via", "catalog", "frontend", "mcp"}, 1},
	} {
		if got, ok := m.value(c.series, c.kv...); !ok || got != c.want {
			t.Errorf("%s%q = %v (present %v), want %v", c.series, c.kv, got, ok, c.want)
		}
	}
	if got := m.labelValues("wunder_user_run_seconds_total", "user"); !slices.Equal(got, []string{"_other", "alice", "bob"}) {
		t.Errorf("users with run seconds = %q, want alice, bob (paused) and _other", got)
	}
	if _, ok := m.value("wunder_user_runs_total", "user", "bob"); ok {
		t.Error("a paused run was counted as a run of its user")
	}
	for _, series := range []string{"wunder_user_runs_total", "wunder_user_tokens_total", "wunder_user_tool_calls_total"} {
		for _, u := range m.labelValues(series, "user") {
			if u != "alice" && u != "bob" && u != "_other" {
				t.Errorf("%s has a series of its own for %q, past the bound of 2 users", series, u)
			}
		}
	}
}

// With metrics_max_users 0 there is no per-user series at all; the
// policy's decisions are still counted.
func TestPerUserSeriesOff(t *testing.T) {
	tel := newTel(t, 0)
	_, end := tel.RunStarted(t.Context(), t.Context(), orchestrator.RunInfo{ID: "run_1", UserID: "alice"})
	end(orchestrator.RunEnd{State: orchestrator.RunFinished, Usage: orchestrator.Usage{InputTokens: 1}})
	tel.ToolDecision(&orchestrator.ToolLog{UserID: "alice", Outcome: orchestrator.OutcomeError, Via: orchestrator.ViaPassthrough, FrontEnd: "smoke-signal"})
	m := scrape(t, tel)
	for name := range m.samples {
		if strings.HasPrefix(name, "wunder_user_") {
			t.Errorf("per-user series %s with metrics_max_users 0", name)
		}
	}
	if got := m.get("wunder_tool_decisions_total", "outcome", "error", "via", "passthrough", "frontend", "other"); got != 1 {
		t.Errorf("decision with an unknown front-end = %v, want 1 under frontend=\"other\"", got)
	}
}

// However many users arrive at once, no more than the bound get series
// of their own.
func TestPerUserBoundHoldsUnderConcurrency(t *testing.T) {
	const bound, users = 5, 64
	tel := newTel(t, bound)
	var wg sync.WaitGroup
	for i := range users {
		wg.Go(func() {
			tel.ToolDecision(&orchestrator.ToolLog{UserID: fmt.Sprint("u", i), Outcome: orchestrator.OutcomeAllowed, Via: orchestrator.ViaRun})
		})
	}
	wg.Wait()
	m := scrape(t, tel)
	own, total := 0, 0.0
	for _, s := range m.samples["wunder_user_tool_calls_total"] {
		total += s.value
		if s.labels["user"] != "_other" {
			own++
		}
	}
	if own != bound || total != users {
		t.Errorf("%d users with series of their own and %v calls counted, want %d and %d", own, total, bound, users)
	}
}

// The gauges are read when /metrics is scraped, not when they are set;
// one left nil is not exposed.
func TestGaugesReadAtScrapeTime(t *testing.T) {
	tel := newTel(t, 0)
	var mu sync.Mutex
	queued := 3.0
	tel.SetGauges(telemetry.Gauges{
		QueueDepth: func() float64 { mu.Lock(); defer mu.Unlock(); return queued },
		ActiveRuns: func() float64 { return 7 },
	})
	m := scrape(t, tel)
	if m.get("wunder_queue_depth") != 3 || m.get("wunder_active_runs") != 7 {
		t.Errorf("queue depth %v, active runs %v; want 3 and 7", m.get("wunder_queue_depth"), m.get("wunder_active_runs"))
	}
	if _, ok := m.value("wunder_open_streams"); ok {
		t.Error("wunder_open_streams exposed without a function to read it")
	}
	mu.Lock()
	queued = 0
	mu.Unlock()
	if got := scrape(t, tel).get("wunder_queue_depth"); got != 0 {
		t.Errorf("queue depth after it drained = %v, want 0", got)
	}
}

// Every store operation is in the histogram under its op, whatever its
// duration, and the buckets reach below a millisecond.
func TestStoreOpHistogram(t *testing.T) {
	tel := newTel(t, 0)
	now := time.Now()
	tel.StoreOp(t.Context(), "select_runs", now.Add(-200*time.Microsecond), nil)
	tel.StoreOp(t.Context(), "select_runs", now.Add(-2*time.Second), errors.New("busy"))
	tel.StoreOp(t.Context(), "write", now.Add(-3*time.Millisecond), nil)
	m := scrape(t, tel)
	if got := m.get("wunder_store_op_duration_seconds_count", "op", "select_runs"); got != 2 {
		t.Errorf("select_runs count = %v, want 2", got)
	}
	if got := m.get("wunder_store_op_duration_seconds_bucket", "op", "select_runs", "le", "0.0005"); got != 1 {
		t.Errorf("select_runs under 0.5 ms = %v, want 1 (the fast one)", got)
	}
	if got := m.get("wunder_store_op_duration_seconds_bucket", "op", "write", "le", "0.0025"); got != 0 {
		t.Errorf("write under 2.5 ms = %v, want 0", got)
	}
	if got := m.get("wunder_store_op_duration_seconds_bucket", "op", "write", "le", "0.005"); got != 1 {
		t.Errorf("write under 5 ms = %v, want 1", got)
	}
}
