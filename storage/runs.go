package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
	row := toRunRow(r)
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		if _, ok, err := s.execPrepared(ctx, db, insertRunSQL, runArgs(row)); ok {
			return err
		}
		_, err := db.NewInsert().Model(row).Exec(ctx)
		return err
	})
	if constraintOf(err) == foreignKeyViolation {
		return dbErr(err, "create run", "session "+r.SessionID)
	}
	return dbErr(err, "create run", "run "+r.ID)
}

// runMutable lists the columns UpdateRun writes; the others are fixed at
// creation.
var runMutable = []string{"state", "stop_reason", "answer", "error", "input_tokens", "output_tokens",
	"total_tokens", "last_seq", "started_at", "finished_at", "pending"}

// UpdateRun implements [orchestrator.Store]: one UPDATE fenced by the
// owner; when it changes nothing, a second look tells a missing run
// (ErrNotFound) from one another instance owns (ErrConflict).
func (s *Store) UpdateRun(ctx context.Context, r *orchestrator.Run) error {
	if r == nil {
		return invalid("run is nil")
	}
	row := toRunRow(r)
	if s.pgw != nil {
		st, err := boundPGStmt(updateRunSQL, runUpdateArgs(row))
		if err != nil {
			return err
		}
		return s.pgFenced(ctx, "update run", r, st)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, ok, err := s.execPrepared(ctx, db, updateRunSQL, runUpdateArgs(row))
		if !ok {
			res, err = db.NewUpdate().Model(row).Column(runMutable...).WherePK().
				Where("owner = ?", r.Owner).Exec(ctx)
		}
		if err := affected(res, err, "update run", "run "+r.ID); !errors.Is(err, orchestrator.ErrNotFound) {
			return err
		}
		return ownerConflict(ctx, db, r.ID, r.Owner)
	})
}

// ownerConflict explains why a run fenced by owner matched no row.
func ownerConflict(ctx context.Context, db bun.IDB, id, owner string) error {
	var cur runRow
	err := db.NewSelect().Model(&cur).Column("owner", "state").Where("id = ?", id).Scan(ctx)
	if err != nil {
		return dbErr(err, "update run", "run "+id)
	}
	return fmt.Errorf("%w: run %s is %s and owned by %q, not %q", orchestrator.ErrConflict, id, cur.State, cur.Owner, owner)
}

// activeStates are the states a run can still leave.
var activeStates = statesOf(orchestrator.ActiveStates())

// cancellable and waitingStates are the states RequestCancel and
// ClaimWaiting move a run from, as the lifecycle's table says.
var (
	cancellable   = statesOf(orchestrator.Sources(orchestrator.RunCancelling))
	waitingStates = statesOf([]orchestrator.RunState{orchestrator.RunWaitingApproval, orchestrator.RunWaitingInput})
)

func statesOf(states []orchestrator.RunState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}

// ClaimRun implements [orchestrator.Store] with one conditional UPDATE, so
// of several reapers exactly one wins.
func (s *Store) ClaimRun(ctx context.Context, runID, from, to string) error {
	if runID == "" || to == "" {
		return invalid("claim needs a run id and a new owner")
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*runRow)(nil)).Set("owner = ?", to).
			Where("id = ?", runID).Where("owner = ?", from).Where("state IN (?)", bun.List(activeStates)).Exec(ctx)
		if err := affected(res, err, "claim run", "run "+runID); !errors.Is(err, orchestrator.ErrNotFound) {
			return err
		}
		return ownerConflict(ctx, db, runID, from)
	})
}

// RequestCancel implements [orchestrator.Store]: the state changes only
// from a state a cancel can interrupt, in the same statement that checks it,
// and that statement returns the run as it left it. Read again afterwards,
// the run could already be ended by the owner the notification woke (on
// another replica, within milliseconds), and the cancel that ended it would
// look refused: "already cancelled".
func (s *Store) RequestCancel(ctx context.Context, runID string) (*orchestrator.Run, error) {
	var flagged *runRow
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		flagged = nil // a group commit may run this again
		row := new(runRow)
		err := db.NewUpdate().Model(row).Set("state = ?", string(orchestrator.RunCancelling)).
			Where("id = ?", runID).Where("state IN (?)", bun.List(cancellable)).Returning("*").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // not there, or in a state a cancel does not change
		}
		if err != nil {
			return err
		}
		flagged = row
		s.notify(ctx, db, 'c', []string{runID})
		return nil
	})
	if err != nil {
		return nil, dbErr(err, "cancel run", "run "+runID)
	}
	if flagged != nil {
		return fromRunRow(flagged), nil
	}
	return s.GetRun(ctx, runID)
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
	if err := paged(newestFirst(q, "created_at", f.Page), f.Page).Scan(ctx); err != nil {
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
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", stamp(f.Since))
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
	row := toToolLogRow(l)
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, ok, err := s.execPrepared(ctx, db, insertToolLogSQL, toolLogArgs(row))
		if !ok {
			_, err = db.NewInsert().Model(row).Exec(ctx)
		}
		return err
	})
	return dbErr(err, "append tool log", "of run "+l.RunID)
}

// AppendToolLogs stores logs in one write: the orchestrator writes its
// tool logs in batches (orchestrator's toollog.go), a statement of up to
// maxPreparedRows rows each. A zero CreatedAt is set to now; a nil log is
// an error wrapping ErrInvalidArgument and nothing is stored.
func (s *Store) AppendToolLogs(ctx context.Context, logs []*orchestrator.ToolLog) error {
	rows := make([]toolLogRow, len(logs))
	for i, l := range logs {
		if l == nil {
			return invalid("tool log is nil")
		}
		l.CreatedAt = stamp(l.CreatedAt)
		rows[i] = *toToolLogRow(l)
	}
	if len(rows) == 0 {
		return nil
	}
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		for from := 0; from < len(rows); from += maxPreparedRows {
			chunk := rows[from:min(from+maxPreparedRows, len(rows))]
			args := make([]any, 0, len(toolLogCols)*len(chunk))
			for i := range chunk {
				args = append(args, toolLogArgs(&chunk[i])...)
			}
			_, ok, err := s.execPrepared(ctx, db, insertToolLogs.of(len(chunk)), args)
			if !ok {
				_, err = db.NewInsert().Model(&chunk).Exec(ctx)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return dbErr(err, "append tool logs", fmt.Sprintf("(%d)", len(logs)))
}

// ToolCallStats implements [orchestrator.Store]: the columns the usage
// aggregation needs, newest first (tool_logs_created_idx, or
// tool_logs_tool_created_idx with a tool).
func (s *Store) ToolCallStats(ctx context.Context, f orchestrator.ToolLogFilter) ([]orchestrator.ToolCallStat, error) {
	var rows []toolLogRow
	q := s.db.NewSelect().Model(&rows).Column("tool", "user_id", "is_error", "duration_ms", "created_at").OrderExpr("created_at DESC")
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", stamp(f.Since))
	}
	if f.Tool != "" {
		q = q.Where("tool = ?", f.Tool)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	if err := q.Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, dbErr(err, "tool call stats", "")
	}
	out := make([]orchestrator.ToolCallStat, len(rows))
	for i, r := range rows {
		out[i] = orchestrator.ToolCallStat{Tool: r.Tool, UserID: r.UserID, IsError: r.IsError, DurationMS: r.DurationMS, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}
