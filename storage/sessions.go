package storage

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// CreateSession implements [orchestrator.Store]. Zero times are set to now
// and written back to s.
func (s *Store) CreateSession(ctx context.Context, sess *orchestrator.Session) error {
	if sess == nil || sess.ID == "" {
		return invalid("session id is empty")
	}
	sess.CreatedAt = stamp(sess.CreatedAt)
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	sess.UpdatedAt = stamp(sess.UpdatedAt)
	row := &sessionRow{ID: sess.ID, UserID: sess.UserID, Title: sess.Title, CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(row).Exec(ctx)
		return dbErr(err, "create session", "session "+sess.ID)
	})
}

// GetSession implements [orchestrator.Store].
func (s *Store) GetSession(ctx context.Context, id string) (*orchestrator.Session, error) {
	row := new(sessionRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, dbErr(err, "get session", "session "+id)
	}
	return fromSessionRow(row), nil
}

// ListSessions implements [orchestrator.Store].
func (s *Store) ListSessions(ctx context.Context, userID string, p orchestrator.Page) ([]*orchestrator.Session, error) {
	var rows []sessionRow
	q := s.db.NewSelect().Model(&rows).Where("user_id = ?", userID).OrderExpr("updated_at DESC, id DESC")
	if err := paged(newestFirst(q, "updated_at", p), p).Scan(ctx); err != nil {
		return nil, dbErr(err, "list sessions", "of user "+userID)
	}
	out := make([]*orchestrator.Session, len(rows))
	for i := range rows {
		out[i] = fromSessionRow(&rows[i])
	}
	return out, nil
}

// newestFirst starts q, a listing ordered by (at DESC, id DESC), after
// p.After when it is set. The row comparison is a range of the listing's
// index on both backends (the plans test checks it): the page is read
// alone, however deep.
func newestFirst(q *bun.SelectQuery, at string, p orchestrator.Page) *bun.SelectQuery {
	if p.After == nil {
		return q
	}
	return q.Where("(?, id) < (?, ?)", bun.Ident(at), p.After.At.Truncate(time.Microsecond).UTC(), p.After.ID)
}

// paged applies p's limit (the default when zero) to q; the listing
// applies p.After.
func paged(q *bun.SelectQuery, p orchestrator.Page) *bun.SelectQuery {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageLimit
	}
	return q.Limit(int64(limit))
}

// TouchSession implements [orchestrator.Store].
func (s *Store) TouchSession(ctx context.Context, id, title string, at time.Time) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		q := db.NewUpdate().Model((*sessionRow)(nil)).Set("updated_at = ?", stamp(at)).Where("id = ?", id)
		if title != "" {
			q = q.Set("title = ?", title)
		}
		res, err := q.Exec(ctx)
		return affected(res, err, "touch session", "session "+id)
	})
}

// RenameSession implements [orchestrator.Store].
func (s *Store) RenameSession(ctx context.Context, id, title string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*sessionRow)(nil)).Set("title = ?", title).Where("id = ?", id).Exec(ctx)
		return affected(res, err, "rename session", "session "+id)
	})
}

// DeleteSession implements [orchestrator.Store]: one transaction removes the
// session's events, push configs, tool logs, messages and runs, then the
// session. (The foreign keys cascade too; deleting explicitly keeps the
// behaviour independent of the SQLite foreign_keys pragma.)
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			runs := tx.NewSelect().Model((*runRow)(nil)).Column("id").Where("session_id = ?", id)
			for _, q := range []*bun.DeleteQuery{
				tx.NewDelete().Model((*eventRow)(nil)).Where("run_id IN (?)", runs),
				tx.NewDelete().Table("push_configs").Where("run_id IN (?)", runs),
				tx.NewDelete().Model((*approvalRow)(nil)).Where("run_id IN (?)", runs),
				tx.NewDelete().Model((*toolLogRow)(nil)).Where("session_id = ?", id),
				tx.NewDelete().Model((*messageRow)(nil)).Where("session_id = ?", id),
				tx.NewDelete().Model((*runRow)(nil)).Where("session_id = ?", id),
			} {
				if _, err := q.Exec(ctx); err != nil {
					return err
				}
			}
			res, err := tx.NewDelete().Model((*sessionRow)(nil)).Where("id = ?", id).Exec(ctx)
			return affected(res, err, "delete session", "session "+id)
		})
		return dbErr(err, "delete session", "session "+id)
	})
}

// AppendMessages implements [orchestrator.Store]. The messages are written
// in one statement, so all or none are stored.
func (s *Store) AppendMessages(ctx context.Context, sessionID string, msgs []orchestrator.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	rows, err := messageRows(sessionID, msgs)
	if err != nil {
		return err
	}
	if s.pgw != nil {
		st, err := boundPGStmt(insertMessages.of(len(rows)), messageArgs(rows))
		if err != nil {
			return err
		}
		return s.pgExec(ctx, &pgWrite{stmts: []pgStmt{st},
			fail: func(err error) error { return dbErr(err, "append messages", "session "+sessionID) }})
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return dbErr(s.insertMessages(ctx, db, rows), "append messages", "session "+sessionID)
	})
}

func messageRows(sessionID string, msgs []orchestrator.Message) ([]messageRow, error) {
	rows := make([]messageRow, len(msgs))
	for i, m := range msgs {
		row, err := toMessageRow(sessionID, m)
		if err != nil {
			return nil, err
		}
		rows[i] = row
	}
	return rows, nil
}

// insertMessages inserts rows with one statement (prepared on SQLite's
// writer for a small batch); the error is the driver's.
func (s *Store) insertMessages(ctx context.Context, db bun.IDB, rows []messageRow) error {
	if len(rows) <= maxPreparedRows {
		if _, ok, err := s.execPrepared(ctx, db, insertMessages.of(len(rows)), messageArgs(rows)); ok {
			return err
		}
	}
	_, err := db.NewInsert().Model(&rows).Exec(ctx)
	return err
}

// ListMessages implements [orchestrator.Store].
func (s *Store) ListMessages(ctx context.Context, sessionID string, limit int) ([]orchestrator.Message, error) {
	var rows []messageRow
	q := s.db.NewSelect().Model(&rows).Where("session_id = ?", sessionID)
	if limit > 0 {
		q = q.OrderExpr("id DESC").Limit(int64(limit))
	} else {
		q = q.OrderExpr("id ASC")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list messages", "session "+sessionID)
	}
	if limit > 0 {
		slices.Reverse(rows)
	}
	out := make([]orchestrator.Message, len(rows))
	for i := range rows {
		m, err := fromMessageRow(&rows[i])
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// ListUserStats implements [orchestrator.Store]: two grouped scans (the
// sessions and the runs of the users on the page). Ranking users by their
// last activity aggregates every session, so a page after a key still
// groups them all; the key only keeps the pages from overlapping.
func (s *Store) ListUserStats(ctx context.Context, p orchestrator.Page) ([]orchestrator.UserStats, error) {
	var rows []struct {
		UserID     string    `bun:"user_id"`
		Sessions   int       `bun:"sessions"`
		LastActive time.Time `bun:"last_active"`
	}
	q := s.db.NewSelect().Model((*sessionRow)(nil)).ColumnExpr("user_id, count(*) AS sessions, max(updated_at) AS last_active").
		Group("user_id").OrderExpr("last_active DESC, user_id ASC")
	if k := p.After; k != nil {
		at := k.At.Truncate(time.Microsecond).UTC()
		q = q.Having("max(updated_at) < ? OR (max(updated_at) = ? AND user_id > ?)", at, at, k.ID)
	}
	if err := paged(q, p).Scan(ctx, &rows); err != nil {
		return nil, dbErr(err, "list users", "")
	}
	out := make([]orchestrator.UserStats, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.UserID
		out[i] = orchestrator.UserStats{UserID: r.UserID, Sessions: r.Sessions, LastActive: r.LastActive.UTC()}
	}
	var runs []struct {
		UserID string `bun:"user_id"`
		Runs   int    `bun:"runs"`
	}
	err := s.db.NewSelect().Model((*runRow)(nil)).ColumnExpr("user_id, count(*) AS runs").
		Where("user_id IN (?)", bun.List(ids)).Group("user_id").Scan(ctx, &runs)
	if err != nil {
		return nil, dbErr(err, "list users", "runs")
	}
	n := map[string]int{}
	for _, r := range runs {
		n[r.UserID] = r.Runs
	}
	for i := range out {
		out[i].Runs = n[out[i].UserID]
	}
	return out, nil
}

// DeleteUserData implements [orchestrator.Store] in one transaction.
func (s *Store) DeleteUserData(ctx context.Context, userID string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			sessions := tx.NewSelect().Model((*sessionRow)(nil)).Column("id").Where("user_id = ?", userID)
			runs := tx.NewSelect().Model((*runRow)(nil)).Column("id").Where("session_id IN (?)", sessions)
			for _, q := range []*bun.DeleteQuery{
				tx.NewDelete().Model((*eventRow)(nil)).Where("run_id IN (?)", runs),
				tx.NewDelete().Table("push_configs").Where("run_id IN (?)", runs),
				tx.NewDelete().Model((*approvalRow)(nil)).Where("run_id IN (?)", runs),
				tx.NewDelete().Model((*toolLogRow)(nil)).Where("user_id = ?", userID),
				tx.NewDelete().Model((*messageRow)(nil)).Where("session_id IN (?)", sessions),
				tx.NewDelete().Model((*runRow)(nil)).Where("session_id IN (?)", sessions),
				tx.NewDelete().Model((*sessionRow)(nil)).Where("user_id = ?", userID),
				tx.NewDelete().Model((*memoryRecordRow)(nil)).Where("user_id = ?", userID),
				tx.NewDelete().Model((*memoryTaskRow)(nil)).Where("user_id = ?", userID),
				tx.NewDelete().Model((*memorySettingRow)(nil)).Where("user_id = ?", userID),
				tx.NewDelete().Model((*peerIDRow)(nil)).Where("user_id = ?", userID),
			} {
				if _, err := q.Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		})
		return dbErr(err, "delete user data", "user "+userID)
	})
}
