package storage

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// ListToolLogs implements [orchestrator.Store]: the audit, newest first,
// read a page at a time after a key (tool_logs_created_idx, or
// tool_logs_user_created_idx / tool_logs_tool_created_idx with a user or a
// tool).
func (s *Store) ListToolLogs(ctx context.Context, f orchestrator.AuditFilter) ([]*orchestrator.ToolLog, error) {
	var rows []toolLogRow
	q := s.db.NewSelect().Model(&rows).OrderExpr("created_at DESC, id DESC")
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.Tool != "" {
		q = q.Where("tool = ?", f.Tool)
	}
	if f.Outcome != "" {
		q = q.Where("outcome = ?", f.Outcome)
	}
	if f.Via != "" {
		q = q.Where("via = ?", f.Via)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", stamp(f.Since))
	}
	if k := f.Page.After; k != nil {
		id, err := strconv.ParseInt(k.ID, 10, 64)
		if err != nil {
			return nil, invalid("the cursor was not issued by the audit")
		}
		at := stamp(k.At)
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("created_at < ?", at).WhereOr("created_at = ? AND id < ?", at, id)
		})
	}
	limit := f.Page.Limit
	if limit <= 0 {
		limit = 50
	}
	q = q.Limit(int64(limit))
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list the audit", "")
	}
	out := make([]*orchestrator.ToolLog, len(rows))
	for i := range rows {
		l := fromToolLogRow(&rows[i])
		out[i] = &l
	}
	return out, nil
}

// Usage implements [orchestrator.Store]: two aggregations grouped by user,
// one over runs (runs_user_idx, runs_created_idx) and one over tool logs,
// joined here.
func (s *Store) Usage(ctx context.Context, f orchestrator.UsageFilter, now time.Time) ([]orchestrator.UserUsage, error) {
	// A run's execution time, in seconds, to now while it goes on.
	seconds := "(julianday(COALESCE(finished_at, ?)) - julianday(started_at)) * 86400.0"
	if s.backend == BackendPostgres {
		seconds = "EXTRACT(EPOCH FROM (COALESCE(finished_at, ?) - started_at))"
	}
	var runs []struct {
		UserID  string  `bun:"user_id"`
		Runs    int64   `bun:"runs"`
		In      int64   `bun:"input_tokens"`
		Out     int64   `bun:"output_tokens"`
		Seconds float64 `bun:"run_seconds"`
	}
	q := s.db.NewSelect().Table("runs").Column("user_id").
		ColumnExpr("COUNT(*) AS runs").
		ColumnExpr("COALESCE(SUM(input_tokens), 0) AS input_tokens").
		ColumnExpr("COALESCE(SUM(output_tokens), 0) AS output_tokens").
		ColumnExpr("COALESCE(SUM(CASE WHEN started_at IS NULL THEN 0.0 ELSE "+seconds+" END), 0.0) AS run_seconds", stamp(now)).
		Group("user_id")
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", stamp(f.Since))
	}
	if err := q.Scan(ctx, &runs); err != nil {
		return nil, dbErr(err, "usage of runs", "")
	}
	var calls []struct {
		UserID  string `bun:"user_id"`
		Allowed int64  `bun:"allowed"`
		Denied  int64  `bun:"denied"`
	}
	q = s.db.NewSelect().Table("tool_logs").Column("user_id").
		ColumnExpr("COALESCE(SUM(CASE WHEN outcome = ? THEN 0 ELSE 1 END), 0) AS allowed", orchestrator.OutcomeDenied).
		ColumnExpr("COALESCE(SUM(CASE WHEN outcome = ? THEN 1 ELSE 0 END), 0) AS denied", orchestrator.OutcomeDenied).
		Group("user_id")
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", stamp(f.Since))
	}
	if err := q.Scan(ctx, &calls); err != nil {
		return nil, dbErr(err, "usage of tool calls", "")
	}
	by := make(map[string]*orchestrator.UserUsage, len(runs))
	get := func(id string) *orchestrator.UserUsage {
		u := by[id]
		if u == nil {
			u = &orchestrator.UserUsage{UserID: id}
			by[id] = u
		}
		return u
	}
	for _, r := range runs {
		u := get(r.UserID)
		u.Runs, u.InputTokens, u.OutputTokens, u.RunSeconds = r.Runs, r.In, r.Out, r.Seconds
	}
	for _, c := range calls {
		u := get(c.UserID)
		u.ToolCalls, u.DeniedCalls = c.Allowed, c.Denied
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
