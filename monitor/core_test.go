package monitor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The monitor over the real core: a run calling a tool shows it, the
// admission counters count it, and once it ended its call is in the
// usage at once (the core stores the logs still waiting for their batch
// first).
func TestMonitorOverTheCore(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := orchestratortest.NewTool("slow", true, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		close(started)
		select {
		case <-release:
			return &orchestrator.ToolResult{Content: "done"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	model := orchestratortest.NewScriptedModel(
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{{ID: "c1", Name: "slow", Arguments: []byte(`{}`)}}},
		orchestratortest.Turn{Content: "finished"})
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "t", List: []orchestrator.Tool{slow}})
	o := orchestrator.New(orchestratortest.NewMemStore(),
		orchestratortest.Models{Model: model, Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}},
		reg, &orchestrator.Options{MaxActiveRuns: 3, QueueSize: 5})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = o.Close(ctx)
	})
	m := monitor.New(o)
	ctx := t.Context()

	run, err := o.Start(ctx, orchestrator.RunRequest{UserID: "alice", Question: "q", ToolNames: []string{"slow"}})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	views, err := m.Runs(ctx, monitor.Filter{UserID: "alice"})
	if err != nil || len(views) != 1 {
		t.Fatalf("Runs = %+v, %v", views, err)
	}
	if v := views[0]; v.ID != run.ID || v.State != orchestrator.RunRunning || v.CurrentTool != "slow" || v.StartedAt == nil || v.DurationMS < 0 {
		t.Errorf("the running run = %+v; want running, calling slow", v)
	}
	if s := m.Stats(); s.Active != 1 || s.Queued != 0 || s.MaxActiveRuns != 3 || s.QueueSize != 5 {
		t.Errorf("Stats = %+v; want one active of 3, queue of 5", s)
	}
	if others, err := m.Runs(ctx, monitor.Filter{UserID: "bob"}); err != nil || len(others) != 0 {
		t.Errorf("bob's runs = %+v, %v; want none", others, err)
	}

	close(release)
	for _, err := range o.Events(ctx, "", run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
	}
	views, err = m.Runs(ctx, monitor.Filter{States: []orchestrator.RunState{orchestrator.RunFinished}})
	if err != nil || len(views) != 1 || views[0].CurrentTool != "" || views[0].FinishedAt == nil {
		t.Fatalf("finished runs = %+v, %v", views, err)
	}
	if s := m.Stats(); s.Active != 0 {
		t.Errorf("Stats after the run = %+v; want none active", s)
	}
	usage, err := m.ToolUsage(ctx, monitor.ToolUsageFilter{Group: "user"})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage) != 1 || usage[0].Tool != "slow" || usage[0].Calls != 1 || usage[0].Users != 1 || usage[0].Errors != 0 ||
		len(usage[0].Buckets) != 1 || usage[0].Buckets[0].Key != "alice" {
		t.Errorf("ToolUsage = %+v; want alice's one call of slow", usage)
	}
	if none, err := m.ToolUsage(ctx, monitor.ToolUsageFilter{UserID: "bob"}); err != nil || len(none) != 0 {
		t.Errorf("bob's tool usage = %+v, %v; want none", none, err)
	}
}

// failingCore is a Core whose reads fail.
type failingCore struct{ core }

var errDown = errors.New("store down")

func (*failingCore) ListRuns(context.Context, orchestrator.RunFilter) ([]*orchestrator.Run, error) {
	return nil, errDown
}

func (*failingCore) ToolCallStats(context.Context, orchestrator.ToolLogFilter) ([]orchestrator.ToolCallStat, error) {
	return nil, errDown
}

// A core that cannot answer fails the monitor's answer with its error,
// never a partial view.
func TestMonitorPassesOnCoreErrors(t *testing.T) {
	m := monitor.New(&failingCore{})
	if v, err := m.Runs(t.Context(), monitor.Filter{}); !errors.Is(err, errDown) || v != nil {
		t.Errorf("Runs = %+v, %v; want the core's error", v, err)
	}
	if u, err := m.ToolUsage(t.Context(), monitor.ToolUsageFilter{}); !errors.Is(err, errDown) || u != nil {
		t.Errorf("ToolUsage = %+v, %v; want the core's error", u, err)
	}
}

// Nearest-rank percentiles of one call, two calls and a hundred, and the
// order of tools called alike (by name).
func TestToolUsagePercentilesAndOrder(t *testing.T) {
	at := time.Now()
	stat := func(tool string, ms int64) orchestrator.ToolCallStat {
		return orchestrator.ToolCallStat{Tool: tool, UserID: "u", DurationMS: ms, CreatedAt: at}
	}
	c := &core{calls: []orchestrator.ToolCallStat{stat("one", 7), stat("two", 10), stat("two", 20)}}
	for i := range 100 {
		c.calls = append(c.calls, stat("hundred", int64(100-i))) // 100 down to 1
	}
	c.calls = append(c.calls, stat("also_one", 3))
	got, err := monitor.New(c).ToolUsage(t.Context(), monitor.ToolUsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		tool     string
		p50, p95 int64
	}{{"hundred", 50, 95}, {"two", 10, 20}, {"also_one", 3, 3}, {"one", 7, 7}}
	if len(got) != len(want) {
		t.Fatalf("ToolUsage = %+v", got)
	}
	for i, w := range want {
		if g := got[i]; g.Tool != w.tool || g.P50MS != w.p50 || g.P95MS != w.p95 || g.Buckets != nil {
			t.Errorf("row %d = %+v; want %s with p50 %d, p95 %d and no buckets", i, g, w.tool, w.p50, w.p95)
		}
	}
	since := at.Add(-time.Hour)
	if _, err := monitor.New(c).ToolUsage(t.Context(), monitor.ToolUsageFilter{Since: since}); err != nil {
		t.Fatal(err)
	}
	if f := c.asked[len(c.asked)-1]; !f.Since.Equal(since) {
		t.Errorf("the window asked = %v; want the filter's %v", f.Since, since)
	}
}
