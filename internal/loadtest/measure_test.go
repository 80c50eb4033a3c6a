package loadtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

const ms = time.Millisecond

// A step's summary: runs/s counts the runs that succeeded over the wall
// time; latencies and percentiles are of successful runs only, the first
// output's of the runs that streamed some; the first error is the first
// sample's that failed. Figures are rounded to two decimals.
func TestSummarize(t *testing.T) {
	samples := []loadtest.Sample{
		{Total: 30 * ms, First: 3 * ms},
		{Err: errors.New("first failure")},
		{Total: 10 * ms, First: 1 * ms, FirstOutput: 5 * ms},
		{Err: errors.New("second failure"), Total: time.Hour},
		{Total: 20 * ms, First: 2 * ms},
	}
	got := loadtest.Summarize(4, samples, 2*time.Second)
	want := loadtest.Step{Concurrency: 4, Runs: 5, Successes: 3, Errors: 2, ElapsedS: 2, RunsPerSec: 1.5,
		AvgMS: 20, P50MS: 20, P95MS: 30, P99MS: 30, FirstP50MS: 2, FirstP95MS: 3, FirstP99MS: 3,
		FirstOutputP50MS: 5, FirstOutputP95MS: 5, FirstError: "first failure"}
	if got != want {
		t.Errorf("Summarize =\n%+v\nwant\n%+v", got, want)
	}

	for _, tc := range []struct {
		name    string
		samples []loadtest.Sample
		wall    time.Duration
		want    loadtest.Step
	}{
		{"nothing ran", nil, time.Second, loadtest.Step{Concurrency: 1, ElapsedS: 1}},
		{"every run failed", []loadtest.Sample{{Err: errors.New("503"), Total: ms}}, time.Second,
			loadtest.Step{Concurrency: 1, Runs: 1, Errors: 1, ElapsedS: 1, FirstError: "503"}},
		{"no wall time", []loadtest.Sample{{Total: ms, First: ms}}, 0,
			loadtest.Step{Concurrency: 1, Runs: 1, Successes: 1, AvgMS: 1, P50MS: 1, P95MS: 1, P99MS: 1, FirstP50MS: 1, FirstP95MS: 1, FirstP99MS: 1}},
		{"rounding", []loadtest.Sample{{Total: 1234567 * time.Nanosecond, First: 999 * time.Microsecond}}, 3 * time.Second,
			loadtest.Step{Concurrency: 1, Runs: 1, Successes: 1, ElapsedS: 3, RunsPerSec: 0.33, AvgMS: 1.23, P50MS: 1.23, P95MS: 1.23, P99MS: 1.23,
				FirstP50MS: 1, FirstP95MS: 1, FirstP99MS: 1}},
	} {
		if got := loadtest.Summarize(1, tc.samples, tc.wall); got != tc.want {
			t.Errorf("%s: Summarize =\n%+v\nwant\n%+v", tc.name, got, tc.want)
		}
	}
}

// A step's JSON has the field names of the original wunder's report
// (docs/evaluation.md); the first-output figures are left out when no run
// streamed output.
func TestStepJSON(t *testing.T) {
	b, err := json.Marshal(loadtest.Summarize(2, []loadtest.Sample{{Total: ms, First: ms}}, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"avg_latency_ms", "concurrency", "elapsed_s", "error_requests", "first_event_p50_ms", "first_event_p95_ms",
		"first_event_p99_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "rps", "success_requests", "total_requests"}
	if !slices.Equal(keys, want) {
		t.Errorf("step JSON keys = %q, want %q", keys, want)
	}
}

// Nearest rank, on the smallest sets too; the input is sorted in place.
func TestPercentileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		d    []time.Duration
		p    int
		want time.Duration
	}{
		{[]time.Duration{7}, 50, 7},
		{[]time.Duration{7}, 99, 7},
		{[]time.Duration{2, 1}, 50, 1},
		{[]time.Duration{2, 1}, 51, 2},
		{[]time.Duration{3, 1, 2}, 0, 1},
		{[]time.Duration{3, 1, 2}, 34, 2},
		{[]time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10},
		{[]time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
	} {
		d := slices.Clone(tc.d)
		if got := loadtest.Percentile(d, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %d) = %v, want %v", tc.d, tc.p, got, tc.want)
		}
		if !slices.IsSorted(d) {
			t.Errorf("Percentile left %v unsorted", d)
		}
	}
}

// Drive stops starting runs when its context ends (a stop), the run in
// flight finishing and counted; with a duration the runs per worker do
// not bound it; no workers, no runs.
func TestDriveStopsWithItsContext(t *testing.T) {
	for _, plan := range []loadtest.Plan{{Workers: 1, Runs: 100}, {Workers: 3, Runs: 1, Duration: time.Hour}} {
		ctx, cancel := context.WithCancel(t.Context())
		var calls atomic.Int32
		samples, _ := loadtest.Drive(ctx, plan, func(ctx context.Context, _ int) loadtest.Sample {
			if calls.Add(1) == 10 {
				cancel() // this run still finishes and counts
			}
			return loadtest.Sample{Total: ms}
		})
		cancel()
		if int32(len(samples)) != calls.Load() || len(samples) < 10 || len(samples) > 10+plan.Workers-1 {
			t.Errorf("plan %+v: %d samples of %d calls, want the 10 before the stop (plus runs already started)", plan, len(samples), calls.Load())
		}
	}
	if samples, _ := loadtest.Drive(t.Context(), loadtest.Plan{Workers: 0, Runs: 5}, func(context.Context, int) loadtest.Sample {
		t.Error("a run without workers")
		return loadtest.Sample{}
	}); len(samples) != 0 {
		t.Errorf("%d samples without workers", len(samples))
	}
}

// newGateway is the URL of the real gateway (admin key "k") over a core
// with the scripted model.
func newGateway(t *testing.T, turns ...orchestratortest.Turn) string {
	t.Helper()
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(turns...),
		Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeToolCall, Stream: true}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, orchestrator.NewRegistry("", nil, orchestratortest.NewFiles().Toolset()), nil)
	srv := httptest.NewServer(gateway.New(o, &gateway.Options{APIKey: "k"}).Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = o.Close(context.Background())
	})
	return srv.URL
}

// Ask measures one run through POST /wunder: streamed, the first event
// comes first, then the first output, then the end; as JSON the first
// event is the answer. A run that does not end finished, and a request
// the server refuses, are errors.
func TestAskMeasuresARun(t *testing.T) {
	url := newGateway(t, orchestratortest.Turn{Content: "a streamed answer of some length"})
	c := client.New(url, "k", nil)
	req := client.RunRequest{UserID: "u", Question: "q"}
	s := loadtest.Ask(t.Context(), c, req, true)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if !(0 < s.First && s.First <= s.FirstOutput && s.FirstOutput <= s.Total) {
		t.Errorf("streamed: first %v, first output %v, total %v; want 0 < first <= first output <= total", s.First, s.FirstOutput, s.Total)
	}
	s = loadtest.Ask(t.Context(), c, req, false)
	if s.Err != nil || s.First != s.Total || s.Total <= 0 || s.FirstOutput != 0 {
		t.Errorf("JSON: %+v; want first = total and no first output", s)
	}

	failing := client.New(newGateway(t, orchestratortest.Turn{Err: errors.New("model down")}), "k", nil)
	for _, stream := range []bool{true, false} {
		if s := loadtest.Ask(t.Context(), failing, req, stream); s.Err == nil || !strings.HasPrefix(s.Err.Error(), "run failed: ") {
			t.Errorf("stream %v: a failed run measured as %+v, want the error run failed: ...", stream, s)
		}
	}
	for _, stream := range []bool{true, false} {
		s := loadtest.Ask(t.Context(), client.New(url, "wrong", nil), req, stream)
		var ce *client.Error
		if !errors.As(s.Err, &ce) || ce.Status != 401 {
			t.Errorf("stream %v with a wrong key: %v, want the 401", stream, s.Err)
		}
	}
}
