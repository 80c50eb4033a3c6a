package orchestratortest

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The audit and the usage meter of the in-memory store: the same answers
// as storage's SQL (storesuite_audit.go holds both to them).

func (m *memStore) ListToolLogs(_ context.Context, f orchestrator.AuditFilter) ([]*orchestrator.ToolLog, error) {
	var after *orchestrator.PageKey
	var afterID int64
	if f.Page.After != nil {
		id, err := strconv.ParseInt(f.Page.After.ID, 10, 64)
		if err != nil {
			return nil, orchestrator.ErrInvalidArgument
		}
		after, afterID = f.Page.After, id
	}
	user, tool := txt(f.UserID), txt(f.Tool)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*orchestrator.ToolLog
	for i := range m.toolLogs {
		l := m.toolLogs[i]
		switch {
		case user != "" && l.UserID != user, tool != "" && l.Tool != tool,
			f.Outcome != "" && l.Outcome != f.Outcome, f.Via != "" && l.Via != f.Via,
			!f.Since.IsZero() && l.CreatedAt.Before(stamp(f.Since)):
			continue
		case after != nil && (l.CreatedAt.After(after.At) || l.CreatedAt.Equal(after.At) && l.ID >= afterID):
			continue
		}
		out = append(out, &l)
	}
	slices.SortFunc(out, func(a, b *orchestrator.ToolLog) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	limit := f.Page.Limit
	if limit <= 0 {
		limit = 50
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (m *memStore) Usage(_ context.Context, f orchestrator.UsageFilter, now time.Time) ([]orchestrator.UserUsage, error) {
	user := txt(f.UserID)
	since := stamp(f.Since)
	m.mu.Lock()
	defer m.mu.Unlock()
	by := map[string]*orchestrator.UserUsage{}
	get := func(id string) *orchestrator.UserUsage {
		u := by[id]
		if u == nil {
			u = &orchestrator.UserUsage{UserID: id}
			by[id] = u
		}
		return u
	}
	for _, r := range m.runs {
		if (user != "" && r.UserID != user) || (!f.Since.IsZero() && r.CreatedAt.Before(since)) {
			continue
		}
		u := get(r.UserID)
		u.Runs++
		u.InputTokens += r.Usage.InputTokens
		u.OutputTokens += r.Usage.OutputTokens
		if r.StartedAt != nil {
			end := now
			if r.FinishedAt != nil {
				end = *r.FinishedAt
			}
			u.RunSeconds += end.Sub(*r.StartedAt).Seconds()
		}
	}
	for _, l := range m.toolLogs {
		if (user != "" && l.UserID != user) || (!f.Since.IsZero() && l.CreatedAt.Before(since)) {
			continue
		}
		if l.Outcome == orchestrator.OutcomeDenied {
			get(l.UserID).DeniedCalls++
		} else {
			get(l.UserID).ToolCalls++
		}
	}
	out := make([]orchestrator.UserUsage, 0, len(by))
	for _, u := range by {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b orchestrator.UserUsage) int {
		return cmp.Or(cmp.Compare(b.InputTokens+b.OutputTokens, a.InputTokens+a.OutputTokens), cmp.Compare(a.UserID, b.UserID))
	})
	return out, nil
}
