package storage

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// CreateRun implements [orchestrator.Store]. A zero CreatedAt is set to now
// and written back to r.
func (s *Store) CreateRun(ctx context.Context, r *orchestrator.Run) error {
	if r == nil || r.ID == "" || r.SessionID == "" {
		return invalid("run id and session id are required")
	}
	r.CreatedAt = stamp(r.CreatedAt)
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.db.NewInsert().Model(toRunRow(r)).Exec(ctx)
	if constraintOf(err) == foreignKeyViolation {
		return dbErr(err, "create run", "session "+r.SessionID)
	}
	return dbErr(err, "create run", "run "+r.ID)
}

// runMutable lists the columns UpdateRun writes; the others are fixed at
// creation.
var runMutable = []string{"state", "stop_reason", "answer", "error", "input_tokens", "output_tokens",
	"total_tokens", "last_seq", "started_at", "finished_at"}

// UpdateRun implements [orchestrator.Store].
func (s *Store) UpdateRun(ctx context.Context, r *orchestrator.Run) error {
	if r == nil {
		return invalid("run is nil")
	}
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	res, err := s.db.NewUpdate().Model(toRunRow(r)).Column(runMutable...).WherePK().Exec(ctx)
	return affected(res, err, "update run", "run "+r.ID)
}

// GetRun implements [orchestrator.Store].
func (s *Store) GetRun(ctx context.Context, id string) (*orchestrator.Run, error) {
	row := new(runRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get run", "run "+id)
	}
	return fromRunRow(row), nil
}

// ListRuns implements [orchestrator.Store].
func (s *Store) ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error) {
	var rows []runRow
	q := whereRuns(s.db.NewSelect().Model(&rows).OrderExpr("created_at DESC, id DESC"), f)
	if err := paged(q, f.Page).Scan(ctx); err != nil {
		return nil, dbErr(err, "list runs", "")
	}
	out := make([]*orchestrator.Run, len(rows))
	for i := range rows {
		out[i] = fromRunRow(&rows[i])
	}
	return out, nil
}

// whereRuns adds a RunFilter's conditions (not its page) to q.
func whereRuns(q *bun.SelectQuery, f orchestrator.RunFilter) *bun.SelectQuery {
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		q = q.Where("state IN (?)", bun.List(states))
	}
	return q
}

// AppendToolLog implements [orchestrator.Store]. A zero CreatedAt is set to
// now and written back to l. The run and session need not exist.
func (s *Store) AppendToolLog(ctx context.Context, l *orchestrator.ToolLog) error {
	if l == nil {
		return invalid("tool log is nil")
	}
	l.CreatedAt = stamp(l.CreatedAt)
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.db.NewInsert().Model(toToolLogRow(l)).Exec(ctx)
	return dbErr(err, "append tool log", "of run "+l.RunID)
}
