package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Monitoring: what operators see of the runs and tools (the original
// wunder's /wunder/admin/monitor). Every function here is for admins: the
// front-end checks the principal; userID filters, it does not scope.

// RunView is a run as the monitor shows it: the run, what it is calling
// now, and how long it has run.
type RunView struct {
	Run
	// CurrentTool is the tool a running run is executing ("" between
	// calls); with parallel calls, the one started last.
	CurrentTool string `json:"current_tool"`
	// DurationMS is from start to end (or to now while it runs).
	DurationMS int64 `json:"duration_ms"`
}

// MonitorFilter selects the runs the monitor lists.
type MonitorFilter struct {
	UserID string
	States []RunState
	// Since keeps runs created at or after it (zero: any).
	Since time.Time
	Page  Page
}

// Monitor lists runs, newest first, live ones as this process sees them.
func (o *Orchestrator) Monitor(ctx context.Context, f MonitorFilter) ([]RunView, error) {
	if f.UserID != "" {
		if err := validUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	runs, err := o.store.ListRuns(ctx, RunFilter{UserID: f.UserID, States: f.States, Since: f.Since, Page: f.Page})
	if err != nil {
		return nil, err
	}
	now := o.opts.Now()
	out := make([]RunView, 0, len(runs))
	for _, r := range runs {
		v := RunView{Run: *r}
		if lr := o.liveRun(r.ID); lr != nil {
			v.Run = *lr.snapshot()
			v.CurrentTool = lr.currentTool()
		}
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

// Stats are the orchestrator's admission counters.
type Stats struct {
	// Active runs hold an execution slot; Queued wait for one.
	Active        int `json:"active"`
	Queued        int `json:"queued"`
	MaxActiveRuns int `json:"max_active_runs"`
	QueueSize     int `json:"queue_size"`
}

// Stats returns this process's admission counters.
func (o *Orchestrator) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Stats{Active: o.active, Queued: len(o.queue), MaxActiveRuns: o.opts.MaxActiveRuns, QueueSize: o.opts.QueueSize}
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

// ToolCallStat is one call as the usage aggregation reads it.
type ToolCallStat struct {
	Tool       string
	UserID     string
	IsError    bool
	DurationMS int64
	CreatedAt  time.Time
}

// ToolLogFilter selects tool calls from the store.
type ToolLogFilter struct {
	Since  time.Time
	Tool   string
	UserID string
	// Limit bounds the calls read (the newest first); 0 means the store's
	// default.
	Limit int
}

// maxUsageCalls bounds the calls one aggregation reads.
const maxUsageCalls = 200_000

// ToolUsage aggregates the tool calls of a window: calls, errors, p50 and
// p95 latency and distinct users per tool, most called first; with
// f.Group, per hour or per user too (the heatmap's data). At most the
// newest 200,000 calls of the window are read.
func (o *Orchestrator) ToolUsage(ctx context.Context, f ToolUsageFilter) ([]ToolUsage, error) {
	switch f.Group {
	case "", "hour", "user":
	default:
		return nil, invalidf("group must be \"hour\" or \"user\", got %q", f.Group)
	}
	if f.Since.IsZero() {
		f.Since = o.opts.Now().Add(-24 * time.Hour)
	}
	// The calls of runs that just ended count too: their logs may still
	// wait to be stored (toollog.go).
	if err := o.toolLogs.flush(ctx); err != nil {
		return nil, err
	}
	calls, err := o.store.ToolCallStats(ctx, ToolLogFilter{Since: f.Since, Tool: f.Tool, UserID: f.UserID, Limit: maxUsageCalls})
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

// UserStats is a user as the monitor knows them: seen through their
// sessions.
type UserStats struct {
	UserID     string    `json:"user_id"`
	Sessions   int       `json:"sessions"`
	Runs       int       `json:"runs"`
	LastActive time.Time `json:"last_active"`
}

// Users lists the users that have sessions, most recently active first.
func (o *Orchestrator) Users(ctx context.Context, page Page) ([]UserStats, error) {
	return o.store.ListUserStats(ctx, page)
}

// DeleteUserData deletes every session of a user with its history, runs,
// events, approvals and tool logs, those of runs that just ended
// included. It refuses (ErrConflict) while one of the user's runs is in
// progress: cancel it first.
func (o *Orchestrator) DeleteUserData(ctx context.Context, userID string) error {
	if err := validUserID(userID); err != nil {
		return err
	}
	o.mu.Lock()
	busy := slices.ContainsFunc(mapValues(o.live), func(lr *liveRun) bool {
		return lr.userID == userID && !lr.snapshot().State.Terminal()
	})
	o.mu.Unlock()
	if !busy {
		active, err := o.store.ListRuns(ctx, RunFilter{UserID: userID, States: activeStates, Page: Page{Limit: 1}})
		if err != nil {
			return err
		}
		busy = len(active) > 0
	}
	if busy {
		return fmt.Errorf("%w: user %s has a run in progress; cancel it first", ErrConflict, userID)
	}
	if o.memory != nil {
		defer o.memory.switches.forget(userID) // the user's switch goes with the data
	}
	// A run that just ended may have tool logs still waiting to be stored
	// (toollog.go): they go first, then with the rest.
	if err := o.toolLogs.flush(ctx); err != nil {
		return err
	}
	return o.store.DeleteUserData(ctx, userID)
}
