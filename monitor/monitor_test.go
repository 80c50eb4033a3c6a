package monitor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
)

// core is a Core with fixed answers, recording the filters it was asked.
type core struct {
	runs    []*orchestrator.Run
	current map[string]string
	calls   []orchestrator.ToolCallStat
	asked   []orchestrator.ToolLogFilter
}

func (c *core) ListRuns(context.Context, orchestrator.RunFilter) ([]*orchestrator.Run, error) {
	return c.runs, nil
}

func (c *core) CurrentTool(runID string) string { return c.current[runID] }

func (c *core) ToolCallStats(_ context.Context, f orchestrator.ToolLogFilter) ([]orchestrator.ToolCallStat, error) {
	c.asked = append(c.asked, f)
	return c.calls, nil
}

func (c *core) Stats() orchestrator.Stats { return orchestrator.Stats{Active: 1} }

// Each tool's calls: counts, errors, nearest-rank percentiles and distinct
// users, the most called first, with hour or user buckets on request.
func TestToolUsageAggregates(t *testing.T) {
	h := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := &core{}
	for i, ms := range []int64{40, 10, 30, 20, 100, 50, 60, 70, 80, 90} {
		c.calls = append(c.calls, orchestrator.ToolCallStat{Tool: "read_file", UserID: []string{"alice", "bob"}[i%2],
			DurationMS: ms, IsError: i == 3, CreatedAt: h.Add(time.Duration(i) * 10 * time.Minute)})
	}
	c.calls = append(c.calls, orchestrator.ToolCallStat{Tool: "write_file", UserID: "alice", DurationMS: 5, CreatedAt: h})
	m := monitor.New(c)
	got, err := m.ToolUsage(t.Context(), monitor.ToolUsageFilter{Group: "hour"})
	if err != nil {
		t.Fatal(err)
	}
	want := []monitor.ToolUsage{
		{Tool: "read_file", Calls: 10, Errors: 1, P50MS: 50, P95MS: 100, Users: 2, Buckets: []monitor.UsageBucket{
			{Key: "2026-12-01T10:00:00Z", Calls: 6, Errors: 1}, {Key: "2026-12-01T11:00:00Z", Calls: 4}}},
		{Tool: "write_file", Calls: 1, P50MS: 5, P95MS: 5, Users: 1, Buckets: []monitor.UsageBucket{{Key: "2026-12-01T10:00:00Z", Calls: 1}}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ToolUsage(group hour) mismatch (-want +got):\n%s", d)
	}
	byUser, err := m.ToolUsage(t.Context(), monitor.ToolUsageFilter{Group: "user", Tool: "read_file"})
	if err != nil {
		t.Fatal(err)
	}
	if b := byUser[0].Buckets; len(b) != 2 || b[0] != (monitor.UsageBucket{Key: "alice", Calls: 5}) || b[1] != (monitor.UsageBucket{Key: "bob", Calls: 5, Errors: 1}) {
		t.Errorf("ToolUsage(group user) buckets = %+v", b)
	}
	// The window defaults to the last day; the filter reaches the core.
	if f := c.asked[0]; time.Since(f.Since) < 23*time.Hour || time.Since(f.Since) > 25*time.Hour || f.Limit <= 0 {
		t.Errorf("first read asked %+v; want the last 24 hours, bounded", f)
	}
	if f := c.asked[1]; f.Tool != "read_file" {
		t.Errorf("second read asked %+v; want the tool passed on", f)
	}
	if _, err := m.ToolUsage(t.Context(), monitor.ToolUsageFilter{Group: "day"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("ToolUsage(group day) = %v; want ErrInvalidArgument", err)
	}
}

// A run shows its current tool and its duration: to its end, or to now
// while it runs; a run never started has none.
func TestRunsShowToolAndDuration(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	end := start.Add(1500 * time.Millisecond)
	c := &core{runs: []*orchestrator.Run{
		{ID: "run_live", State: orchestrator.RunRunning, StartedAt: &start},
		{ID: "run_done", State: orchestrator.RunFinished, StartedAt: &start, FinishedAt: &end},
		{ID: "run_queued", State: orchestrator.RunQueued},
	}, current: map[string]string{"run_live": "slow"}}
	views, err := monitor.New(c).Runs(t.Context(), monitor.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if v := views[0]; v.CurrentTool != "slow" || v.DurationMS < 60_000 {
		t.Errorf("live run = tool %q, %d ms; want slow, at least a minute", v.CurrentTool, v.DurationMS)
	}
	if v := views[1]; v.CurrentTool != "" || v.DurationMS != 1500 {
		t.Errorf("ended run = tool %q, %d ms; want none, 1500", v.CurrentTool, v.DurationMS)
	}
	if v := views[2]; v.DurationMS != 0 {
		t.Errorf("queued run = %d ms; want 0", v.DurationMS)
	}
	if _, err := monitor.New(c).Runs(t.Context(), monitor.Filter{UserID: "a/b"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("Runs(user a/b) = %v; want ErrInvalidArgument", err)
	}
}
