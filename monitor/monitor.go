// Package monitor is what operators see of the runs and tools (the
// original wunder's /wunder/admin/monitor): the runs with the tool each is
// calling now and how long it has run, and the tool calls of a window
// aggregated per tool (calls, errors, latency percentiles, users; per hour
// or per user for the heatmap). Every method is for admins: the front-end
// checks the principal; a user id filters, it does not scope.
//
// It reads the core through its public API ([Core], which
// *orchestrator.Orchestrator satisfies): runs as the core lists them
// (live ones as this process sees them), a live run's current tool, the
// admission counters, and the tool calls of a window with the logs still
// waiting for their batch stored first. What only the core knows stays
// there; the aggregation is here. The run loop's own observation hooks
// (orchestrator.Observer, for metrics and traces) stay in the core too:
// internal/telemetry implements them.
package monitor

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Core is what the monitor reads of the orchestrator.
type Core interface {
	// ListRuns lists runs, newest first, live ones as this process sees
	// them.
	ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error)
	// CurrentTool is the tool a run executing here is calling now.
	CurrentTool(runID string) string
	// ToolCallStats returns the tool calls of a window, newest first.
	ToolCallStats(ctx context.Context, f orchestrator.ToolLogFilter) ([]orchestrator.ToolCallStat, error)
	// Stats returns this process's admission counters.
	Stats() orchestrator.Stats
}

var _ Core = (*orchestrator.Orchestrator)(nil)

// Monitor answers the monitor's questions. It is safe for concurrent use.
type Monitor struct {
	core Core
	now  func() time.Time
}

// New returns a monitor over core.
func New(core Core) *Monitor { return &Monitor{core: core, now: time.Now} }

// RunView is a run as the monitor shows it: the run, what it is calling
// now, and how long it has run.
type RunView struct {
	orchestrator.Run
	// CurrentTool is the tool a running run is executing ("" between
	// calls); with parallel calls, the one started last.
	CurrentTool string `json:"current_tool"`
	// DurationMS is from start to end (or to now while it runs).
	DurationMS int64 `json:"duration_ms"`
}

// Filter selects the runs the monitor lists.
type Filter struct {
	UserID string
	States []orchestrator.RunState
	// Since keeps runs created at or after it (zero: any).
	Since time.Time
	Page  orchestrator.Page
}

// Runs lists runs, newest first, live ones as this process sees them.
func (m *Monitor) Runs(ctx context.Context, f Filter) ([]RunView, error) {
	if f.UserID != "" {
		if err := orchestrator.ValidateUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	runs, err := m.core.ListRuns(ctx, orchestrator.RunFilter{UserID: f.UserID, States: f.States, Since: f.Since, Page: f.Page})
	if err != nil {
		return nil, err
	}
	now := m.now()
	out := make([]RunView, 0, len(runs))
	for _, r := range runs {
		v := RunView{Run: *r, CurrentTool: m.core.CurrentTool(r.ID)}
		if v.StartedAt != nil {
			end := now
			if v.FinishedAt != nil {
				end = *v.FinishedAt
			}
			v.DurationMS = end.Sub(*v.StartedAt).Milliseconds()
		}
		out = append(out, v)
	}
	return out, nil
}

// ToolUsageFilter selects the tool calls ToolUsage aggregates.
type ToolUsageFilter struct {
	// Since is the start of the window (zero: the last 24 hours).
	Since  time.Time
	Tool   string
	UserID string
	// Group adds buckets per "hour" or per "user" to each tool ("": none).
	Group string
}

// ToolUsage is one tool's calls over a window.
type ToolUsage struct {
	Tool   string `json:"tool"`
	Calls  int    `json:"calls"`
	Errors int    `json:"errors"`
	P50MS  int64  `json:"p50_ms"`
	P95MS  int64  `json:"p95_ms"`
	// Users is how many users called it.
	Users   int           `json:"users"`
	Buckets []UsageBucket `json:"buckets,omitempty"`
}

// UsageBucket counts a tool's calls in one hour or by one user.
type UsageBucket struct {
	Key    string `json:"key"`
	Calls  int    `json:"calls"`
	Errors int    `json:"errors"`
}

// maxUsageCalls bounds the calls one aggregation reads.
const maxUsageCalls = 200_000

// ToolUsage aggregates the tool calls of a window: calls, errors, p50 and
// p95 latency and distinct users per tool, most called first; with
// f.Group, per hour or per user too (the heatmap's data). At most the
// newest 200,000 calls of the window are read.
func (m *Monitor) ToolUsage(ctx context.Context, f ToolUsageFilter) ([]ToolUsage, error) {
	switch f.Group {
	case "", "hour", "user":
	default:
		return nil, fmt.Errorf("%w: group must be \"hour\" or \"user\", got %q", orchestrator.ErrInvalidArgument, f.Group)
	}
	if f.Since.IsZero() {
		f.Since = m.now().Add(-24 * time.Hour)
	}
	// The calls of runs that just ended count too: the core stores their
	// logs, which may still wait for their batch, first.
	calls, err := m.core.ToolCallStats(ctx, orchestrator.ToolLogFilter{Since: f.Since, Tool: f.Tool, UserID: f.UserID, Limit: maxUsageCalls})
	if err != nil {
		return nil, err
	}
	type acc struct {
		u       ToolUsage
		ms      []int64
		users   map[string]bool
		buckets map[string]*UsageBucket
	}
	by := map[string]*acc{}
	for _, c := range calls {
		a := by[c.Tool]
		if a == nil {
			a = &acc{u: ToolUsage{Tool: c.Tool}, users: map[string]bool{}, buckets: map[string]*UsageBucket{}}
			by[c.Tool] = a
		}
		a.u.Calls++
		a.ms = append(a.ms, c.DurationMS)
		a.users[c.UserID] = true
		if c.IsError {
			a.u.Errors++
		}
		if f.Group != "" {
			key := c.UserID
			if f.Group == "hour" {
				key = c.CreatedAt.UTC().Truncate(time.Hour).Format(time.RFC3339)
			}
			b := a.buckets[key]
			if b == nil {
				b = &UsageBucket{Key: key}
				a.buckets[key] = b
			}
			b.Calls++
			if c.IsError {
				b.Errors++
			}
		}
	}
	out := make([]ToolUsage, 0, len(by))
	for _, a := range by {
		slices.Sort(a.ms)
		a.u.P50MS, a.u.P95MS = percentile(a.ms, 50), percentile(a.ms, 95)
		a.u.Users = len(a.users)
		for _, b := range a.buckets {
			a.u.Buckets = append(a.u.Buckets, *b)
		}
		sort.Slice(a.u.Buckets, func(i, j int) bool { return a.u.Buckets[i].Key < a.u.Buckets[j].Key })
		out = append(out, a.u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Tool < out[j].Tool
	})
	return out, nil
}

// percentile is the nearest-rank percentile p of sorted values.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank-1, 0)]
}

// Stats returns this process's admission counters (the core's).
func (m *Monitor) Stats() orchestrator.Stats { return m.core.Stats() }
