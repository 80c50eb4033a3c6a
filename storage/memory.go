package storage

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// Long-term memory ([memory.Store]): memory_settings,
// memory_records and memory_tasks (the queue). Every query of a user's
// memory names the user in its WHERE clause.
//
// The queue's clock is the caller's (the now ClaimMemoryTask is given),
// on both backends: a lease is long (the summary timeout plus slack), so
// replicas' clock skew matters little, and tests can drive it.

var _ memory.Store = (*Store)(nil)

type memorySettingRow struct {
	bun.BaseModel `bun:"table:memory_settings"`

	UserID    string    `bun:"user_id,pk"`
	Enabled   bool      `bun:"enabled,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

type memoryRecordRow struct {
	bun.BaseModel `bun:"table:memory_records"`

	ID        string    `bun:"id,pk"`
	UserID    string    `bun:"user_id,notnull"`
	SessionID string    `bun:"session_id,notnull"`
	Summary   string    `bun:"summary,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

type memoryTaskRow struct {
	bun.BaseModel `bun:"table:memory_tasks"`

	ID         string     `bun:"id,pk"`
	UserID     string     `bun:"user_id,notnull"`
	SessionID  string     `bun:"session_id,notnull"`
	RunID      string     `bun:"run_id,notnull"`
	Language   string     `bun:"language,notnull"`
	State      string     `bun:"state,notnull"`
	Error      string     `bun:"error,notnull"`
	Model      string     `bun:"model,notnull"`
	Attempts   int        `bun:"attempts,notnull"`
	Owner      string     `bun:"owner,notnull"`
	LeaseUntil *time.Time `bun:"lease_until"`
	QueuedAt   time.Time  `bun:"queued_at,notnull"`
	StartedAt  *time.Time `bun:"started_at"`
	FinishedAt *time.Time `bun:"finished_at"`
}

func fromMemoryRecordRow(r *memoryRecordRow) memory.Record {
	return memory.Record{ID: r.ID, UserID: r.UserID, SessionID: r.SessionID, Summary: r.Summary,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

func toMemoryTaskRow(t *memory.Task) *memoryTaskRow {
	return &memoryTaskRow{ID: t.ID, UserID: t.UserID, SessionID: t.SessionID, RunID: t.RunID, Language: t.Language,
		State: string(t.State), Error: t.Error, Model: t.Model, Attempts: t.Attempts, Owner: t.Owner,
		LeaseUntil: stampPtr(t.LeaseUntil), QueuedAt: stamp(t.QueuedAt), StartedAt: stampPtr(t.StartedAt), FinishedAt: stampPtr(t.FinishedAt)}
}

func fromMemoryTaskRow(r *memoryTaskRow) *memory.Task {
	return &memory.Task{ID: r.ID, UserID: r.UserID, SessionID: r.SessionID, RunID: r.RunID, Language: r.Language,
		State: memory.TaskState(r.State), Error: r.Error, Model: r.Model, Attempts: r.Attempts, Owner: r.Owner,
		LeaseUntil: stampPtr(r.LeaseUntil), QueuedAt: r.QueuedAt.UTC(), StartedAt: stampPtr(r.StartedAt), FinishedAt: stampPtr(r.FinishedAt)}
}

// inTx runs fn in a transaction of its own on PostgreSQL; on SQLite the
// writer's op is already one.
func (s *Store) inTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, db bun.IDB) error) error {
	if s.backend == BackendSQLite {
		return fn(ctx, db)
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
}

// MemoryEnabled implements [memory.Store].
func (s *Store) MemoryEnabled(ctx context.Context, userID string) (bool, error) {
	var on bool
	err := s.queryRow(ctx, "select_memory_settings", `SELECT "enabled" FROM "memory_settings" WHERE "user_id" = ?`, userID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, dbErr(err, "read memory switch", "user "+userID)
	}
	return on, nil
}

// SetMemoryEnabled implements [memory.Store].
func (s *Store) SetMemoryEnabled(ctx context.Context, userID string, enabled bool, at time.Time) error {
	row := &memorySettingRow{UserID: userID, Enabled: enabled, UpdatedAt: stamp(at)}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).On("CONFLICT (user_id) DO UPDATE").
			Set("enabled = EXCLUDED.enabled").Set("updated_at = EXCLUDED.updated_at").Exec(ctx)
		return dbErr(err, "write memory switch", "user "+userID)
	})
}

// ListMemoryUsers implements [memory.Store].
func (s *Store) ListMemoryUsers(ctx context.Context) ([]memory.User, error) {
	var settings []memorySettingRow
	if err := s.db.NewSelect().Model(&settings).Scan(ctx); err != nil {
		return nil, dbErr(err, "list memory users", "")
	}
	var counts []struct {
		UserID string    `bun:"user_id"`
		N      int       `bun:"n"`
		Last   time.Time `bun:"last"`
	}
	err := s.db.NewSelect().Model((*memoryRecordRow)(nil)).Column("user_id").
		ColumnExpr("count(*) AS n").ColumnExpr("max(updated_at) AS last").Group("user_id").Scan(ctx, &counts)
	if err != nil {
		return nil, dbErr(err, "count memory records", "")
	}
	users := map[string]*memory.User{}
	for _, r := range settings {
		users[r.UserID] = &memory.User{UserID: r.UserID, Enabled: r.Enabled}
	}
	for _, c := range counts {
		u := users[c.UserID]
		if u == nil {
			u = &memory.User{UserID: c.UserID}
			users[c.UserID] = u
		}
		last := stamp(c.Last)
		u.Records, u.LastUpdated = c.N, &last
	}
	out := make([]memory.User, 0, len(users))
	for _, u := range users {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b memory.User) int { return cmp.Compare(a.UserID, b.UserID) })
	return out, nil
}

// PutMemoryRecord implements [memory.Store]: replace, insert
// and trim in one transaction.
func (s *Store) PutMemoryRecord(ctx context.Context, r *memory.Record, maxRecords int) error {
	if r.ID == "" || r.UserID == "" || r.SessionID == "" {
		return invalid("memory record id, user id and session id are required")
	}
	r.CreatedAt, r.UpdatedAt = stamp(r.CreatedAt), stamp(cmp.Or(r.UpdatedAt, r.CreatedAt))
	row := &memoryRecordRow{ID: r.ID, UserID: r.UserID, SessionID: r.SessionID, Summary: orchestrator.StoredText(r.Summary),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return s.inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			if _, err := db.NewDelete().Model((*memoryRecordRow)(nil)).
				Where("user_id = ? AND session_id = ?", r.UserID, r.SessionID).Exec(ctx); err != nil {
				return dbErr(err, "replace memory record", "session "+r.SessionID)
			}
			if _, err := db.NewInsert().Model(row).Exec(ctx); err != nil {
				return dbErr(err, "insert memory record", "memory record "+r.ID)
			}
			if maxRecords <= 0 {
				return nil
			}
			keep := db.NewSelect().Model((*memoryRecordRow)(nil)).Column("id").Where("user_id = ?", r.UserID).
				OrderExpr("created_at DESC, id DESC").Limit(int64(maxRecords))
			_, err := db.NewDelete().Model((*memoryRecordRow)(nil)).
				Where("user_id = ?", r.UserID).Where("id NOT IN (?)", keep).Exec(ctx)
			return dbErr(err, "trim memory records", "user "+r.UserID)
		})
	})
}

// ListMemoryRecords implements [memory.Store].
func (s *Store) ListMemoryRecords(ctx context.Context, userID string) ([]memory.Record, error) {
	var rows []memoryRecordRow
	if err := s.db.NewSelect().Model(&rows).Where("user_id = ?", userID).OrderExpr("created_at DESC, id DESC").Scan(ctx); err != nil {
		return nil, dbErr(err, "list memory records", "user "+userID)
	}
	out := make([]memory.Record, len(rows))
	for i := range rows {
		out[i] = fromMemoryRecordRow(&rows[i])
	}
	return out, nil
}

// UpdateMemoryRecord implements [memory.Store].
func (s *Store) UpdateMemoryRecord(ctx context.Context, userID, sessionID, summary string, at time.Time) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*memoryRecordRow)(nil)).Set("summary = ?", orchestrator.StoredText(summary)).Set("updated_at = ?", stamp(at)).
			Where("user_id = ? AND session_id = ?", userID, sessionID).Exec(ctx)
		return affected(res, err, "update memory record", "memory record of session "+sessionID)
	})
}

// DeleteMemoryRecords implements [memory.Store].
func (s *Store) DeleteMemoryRecords(ctx context.Context, userID, sessionID string) (int, error) {
	var n int64
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		q := db.NewDelete().Model((*memoryRecordRow)(nil)).Where("user_id = ?", userID)
		if sessionID != "" {
			q = q.Where("session_id = ?", sessionID)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return dbErr(err, "delete memory records", "user "+userID)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// EnqueueMemoryTask implements [memory.Store]. On PostgreSQL
// two replicas queueing the same session at the same instant may both add
// a task; the second summary then replaces the first's record.
func (s *Store) EnqueueMemoryTask(ctx context.Context, t *memory.Task, maxQueued int) error {
	if t.ID == "" || t.UserID == "" || t.SessionID == "" {
		return invalid("memory task id, user id and session id are required")
	}
	full := false
	var existing *memoryTaskRow
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		full, existing = false, nil
		return s.inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			var rows []memoryTaskRow
			err := db.NewSelect().Model(&rows).Where("state = ? AND user_id = ? AND session_id = ?",
				string(memory.Queued), t.UserID, t.SessionID).Limit(1).Scan(ctx)
			if err != nil {
				return dbErr(err, "find queued memory task", "session "+t.SessionID)
			}
			if len(rows) > 0 {
				existing = &rows[0]
				return nil
			}
			queued, err := db.NewSelect().Model((*memoryTaskRow)(nil)).Where("state = ?", string(memory.Queued)).Count(ctx)
			if err != nil {
				return dbErr(err, "count queued memory tasks", "")
			}
			row := toMemoryTaskRow(t)
			row.State, row.Owner, row.LeaseUntil, row.Error = string(memory.Queued), "", nil, ""
			if maxQueued > 0 && queued >= int64(maxQueued) {
				full = true
				fin := row.QueuedAt
				row.State, row.Error, row.FinishedAt = string(memory.Failed), "queue full", &fin
			}
			_, err = db.NewInsert().Model(row).Exec(ctx)
			return dbErr(err, "queue memory task", "memory task "+t.ID)
		})
	})
	switch {
	case err != nil:
		return err
	case existing != nil:
		*t = *fromMemoryTaskRow(existing)
		return nil
	}
	t.QueuedAt, t.State, t.Owner, t.LeaseUntil = stamp(t.QueuedAt), memory.Queued, "", nil
	if full {
		fin := t.QueuedAt
		t.State, t.Error, t.FinishedAt = memory.Failed, "queue full", &fin
		return fmt.Errorf("%w: the memory queue is full (%d tasks)", orchestrator.ErrBusy, maxQueued)
	}
	return nil
}

// claimMemoryTask takes the oldest claimable task in one statement; on
// PostgreSQL concurrent claimants skip the row another one has locked.
const claimMemoryTask = `UPDATE memory_tasks SET state = 'running', owner = ?, lease_until = ?, started_at = ?, attempts = attempts + 1
WHERE id = (SELECT id FROM memory_tasks
    WHERE state = 'queued' OR (state = 'running' AND lease_until < ?)
    ORDER BY queued_at, id LIMIT 1%s)
RETURNING *`

// ClaimMemoryTask implements [memory.Store].
func (s *Store) ClaimMemoryTask(ctx context.Context, owner string, now time.Time, lease time.Duration) (*memory.Task, error) {
	if owner == "" || lease <= 0 {
		return nil, invalid("claim needs an owner and a positive lease")
	}
	lock := " FOR UPDATE SKIP LOCKED"
	if s.backend == BackendSQLite {
		lock = "" // one writer: the statement is atomic as it is
	}
	now = stamp(now)
	var row *memoryTaskRow
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var rows []memoryTaskRow
		row = nil
		err := db.NewRaw(fmt.Sprintf(claimMemoryTask, lock), owner, stamp(now.Add(lease)), now, now).Scan(ctx, &rows)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return dbErr(err, "claim memory task", "")
		}
		if len(rows) > 0 {
			row = &rows[0]
		}
		return nil
	})
	if err != nil || row == nil {
		return nil, err
	}
	return fromMemoryTaskRow(row), nil
}

// EndMemoryTask implements [memory.Store].
func (s *Store) EndMemoryTask(ctx context.Context, t *memory.Task) error {
	fin := stamp(time.Time{})
	if t.FinishedAt != nil {
		fin = stamp(*t.FinishedAt)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*memoryTaskRow)(nil)).
			Set("state = ?", string(t.State)).Set("error = ?", orchestrator.StoredText(t.Error)).Set("model = ?", t.Model).
			Set("finished_at = ?", fin).Set("lease_until = NULL").
			Where("id = ? AND state = ? AND owner = ?", t.ID, string(memory.Running), t.Owner).Exec(ctx)
		err = affected(res, err, "end memory task", "memory task "+t.ID)
		if errors.Is(err, orchestrator.ErrNotFound) {
			return fmt.Errorf("%w: memory task %s is not running under %s", orchestrator.ErrConflict, t.ID, t.Owner)
		}
		return err
	})
}

// ReleaseMemoryTask implements [memory.Store].
func (s *Store) ReleaseMemoryTask(ctx context.Context, id, owner string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*memoryTaskRow)(nil)).
			Set("state = ?", string(memory.Queued)).Set("owner = ''").Set("lease_until = NULL").
			Where("id = ? AND state = ? AND owner = ?", id, string(memory.Running), owner).Exec(ctx)
		return affected(res, err, "release memory task", "memory task "+id+" held by "+owner)
	})
}

// ListMemoryTasks implements [memory.Store].
func (s *Store) ListMemoryTasks(ctx context.Context, f memory.TaskFilter) ([]memory.Task, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var rows []memoryTaskRow
	q := s.db.NewSelect().Model(&rows).OrderExpr("queued_at DESC, id DESC").Limit(int64(limit))
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		q = q.Where("state IN (?)", bun.List(states))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list memory tasks", "")
	}
	out := make([]memory.Task, len(rows))
	for i := range rows {
		out[i] = *fromMemoryTaskRow(&rows[i])
	}
	return out, nil
}

// GetMemoryTask implements [memory.Store].
func (s *Store) GetMemoryTask(ctx context.Context, id string) (*memory.Task, error) {
	row := new(memoryTaskRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get memory task", "memory task "+id)
	}
	return fromMemoryTaskRow(row), nil
}
