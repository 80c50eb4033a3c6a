package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// A run's start and end each used to be several writes: the session, then
// the run, then its question; the run's end, then its session's time, then
// each lock. They are one write each now (issue 13: fewer commits per
// run). On SQLite the statements share one op of the group-commit writer
// (one transaction); on PostgreSQL each is one statement of data-modifying
// CTEs, so one round trip and one commit.

// touchSession moves a session's UpdatedAt (EndRun).
const touchSessionSQL = `UPDATE "sessions" SET "updated_at" = ? WHERE "id" = ?`

// CreateRunWith implements [orchestrator.Store].
func (s *Store) CreateRunWith(ctx context.Context, sess *orchestrator.Session, r *orchestrator.Run, tail orchestrator.RunTail, locks ...orchestrator.NewLock) error {
	c, err := newRunCreation(sess, r, tail.Messages, locks)
	if err != nil {
		return err
	}
	erows, runs, err := eventRows(tail.Events)
	if err != nil {
		return err
	}
	if s.backend == BackendPostgres {
		st, err := c.pgStmt()
		if err != nil {
			return err
		}
		events, err := eventStmts(erows)
		if err != nil {
			return err
		}
		w := &pgWrite{stmts: append([]pgStmt{st}, events...), fail: c.fail}
		if len(erows) > 0 {
			w.notify = s.payloads('e', runs)
		}
		return s.pgExec(ctx, w)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			if err := s.insertCreation(ctx, db, c); err != nil || len(erows) == 0 {
				return err
			}
			return s.insertEvents(ctx, db, erows, runs)
		})
	})
}

// runCreation is what CreateRunWith inserts: a run, its
// new session (nil when it exists), the new locks it takes and the first
// messages of its history.
type runCreation struct {
	srow  *sessionRow
	rrow  *runRow
	locks []orchestrator.NewLock
	mrows []messageRow
	run   *orchestrator.Run
}

func newRunCreation(sess *orchestrator.Session, r *orchestrator.Run, msgs []orchestrator.Message, locks []orchestrator.NewLock) (*runCreation, error) {
	if sess != nil && sess.ID == "" {
		return nil, invalid("session id is empty")
	}
	if r == nil || r.ID == "" || r.SessionID == "" || (sess != nil && r.SessionID != sess.ID) {
		return nil, invalid("run id and session id are required (and the run must be of the new session)")
	}
	c := &runCreation{locks: locks, run: r}
	if sess != nil {
		sess.CreatedAt = stamp(sess.CreatedAt)
		if sess.UpdatedAt.IsZero() {
			sess.UpdatedAt = sess.CreatedAt
		}
		sess.UpdatedAt = stamp(sess.UpdatedAt)
		c.srow = &sessionRow{ID: sess.ID, UserID: sess.UserID, Title: sess.Title, CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt}
	}
	for _, l := range locks {
		if err := checkLockArgs(l.Key, r.ID, l.TTL); err != nil {
			return nil, err
		}
	}
	r.CreatedAt = stamp(r.CreatedAt)
	c.rrow = toRunRow(r)
	var err error
	if c.mrows, err = messageRows(r.SessionID, msgs); err != nil {
		return nil, err
	}
	return c, nil
}

// fail maps a creation's failure (createErr).
func (c *runCreation) fail(err error) error {
	return createErr(err, c.run.SessionID, "run "+c.run.ID+" of session "+c.run.SessionID)
}

// pgStmt is the creation on PostgreSQL: one statement, whose
// data-modifying CTEs' rows are checked against the foreign keys at its
// end, with all of them in.
func (c *runCreation) pgStmt() (pgStmt, error) {
	var q strings.Builder
	var args []any
	q.WriteString("WITH ")
	if c.srow != nil {
		q.WriteString("new_session AS (" + insertSessionSQL + "), ")
		args = append(args, sessionArgs(c.srow)...)
	}
	q.WriteString("new_run AS (" + insertRunSQL + ") ")
	args = append(args, runArgs(c.rrow)...)
	for i, l := range c.locks {
		// A lock is new (no upsert): its key is of a session nobody
		// knew; one already there fails the statement.
		fmt.Fprintf(&q, ", new_lock%d AS (%s) ", i, newLockSQL)
		args = append(args, bind(l.Key, c.run.ID, l.TTL.Microseconds())...)
	}
	if len(c.mrows) > 0 {
		q.WriteString(insertMessages.of(len(c.mrows)))
		args = append(args, messageArgs(c.mrows)...)
	} else {
		q.WriteString("SELECT 1")
	}
	return boundPGStmt(q.String(), args)
}

// insertCreation is the creation on SQLite, in the transaction db.
func (s *Store) insertCreation(ctx context.Context, db bun.IDB, c *runCreation) error {
	if c.srow != nil {
		_, ok, err := s.execPrepared(ctx, db, insertSessionSQL, sessionArgs(c.srow))
		if !ok {
			_, err = db.NewInsert().Model(c.srow).Exec(ctx)
		}
		if err != nil {
			return c.fail(err)
		}
	}
	_, ok, err := s.execPrepared(ctx, db, insertRunSQL, runArgs(c.rrow))
	if !ok {
		_, err = db.NewInsert().Model(c.rrow).Exec(ctx)
	}
	if err != nil {
		return c.fail(err)
	}
	for _, l := range c.locks {
		expires := stamp(time.Now()).Add(l.TTL)
		_, ok, err := s.execPrepared(ctx, db, sqliteNewLock, bind(l.Key, c.run.ID, expires))
		if !ok {
			_, err = db.ExecContext(ctx, sqliteNewLock, l.Key, c.run.ID, expires)
		}
		if err != nil {
			return createErr(err, c.run.SessionID, "lock "+l.Key)
		}
	}
	if len(c.mrows) == 0 {
		return nil
	}
	return c.fail(s.insertMessages(ctx, db, c.mrows))
}

// createErr maps CreateRunWith's failures: a missing session is
// ErrNotFound, an id taken ErrConflict.
func createErr(err error, sessionID, what string) error {
	if constraintOf(err) == foreignKeyViolation {
		return dbErr(err, "create run", "session "+sessionID)
	}
	return dbErr(err, "create run", what)
}

// EndRun implements [orchestrator.Store].
func (s *Store) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	if r == nil {
		return invalid("run is nil")
	}
	row := toRunRow(r)
	at = stamp(at)
	mrows, err := messageRows(r.SessionID, tail.Messages)
	if err != nil {
		return err
	}
	erows, runs, err := eventRows(tail.Events)
	if err != nil {
		return err
	}
	if s.backend == BackendPostgres {
		return s.pgEndRun(ctx, r, row, at, keys, mrows, erows, runs)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			res, ok, err := s.execPrepared(ctx, db, updateRunSQL, runUpdateArgs(row))
			if !ok {
				res, err = db.NewUpdate().Model(row).Column(runMutable...).WherePK().Where("owner = ?", r.Owner).Exec(ctx)
			}
			if err := affected(res, err, "end run", "run "+r.ID); err != nil {
				if errors.Is(err, orchestrator.ErrNotFound) {
					return ownerConflict(ctx, db, r.ID, r.Owner)
				}
				return err
			}
			if _, ok, err := s.execPrepared(ctx, db, touchSessionSQL, bind(at, r.SessionID)); !ok {
				_, err = db.ExecContext(ctx, touchSessionSQL, at, r.SessionID)
				if err != nil {
					return dbErr(err, "end run", "session "+r.SessionID)
				}
			} else if err != nil {
				return dbErr(err, "end run", "session "+r.SessionID)
			}
			for _, k := range keys {
				_, ok, err := s.execPrepared(ctx, db, releaseLock, bind(k, r.ID))
				if !ok {
					_, err = db.ExecContext(ctx, releaseLock, k, r.ID)
				}
				if err != nil {
					return dbErr(err, "end run", "lock "+k)
				}
			}
			if len(mrows) > 0 {
				if err := s.insertMessages(ctx, db, mrows); err != nil {
					return dbErr(err, "end run", "session "+r.SessionID)
				}
			}
			if len(erows) > 0 {
				return s.insertEvents(ctx, db, erows, runs)
			}
			return nil
		})
	})
}

// pgEndRun is EndRun on PostgreSQL: one statement of data-modifying CTEs
// (the fenced update, the session's time, the freed locks), then the
// tail's inserts, in one op of the writer. The inserts must not outlive a
// fence that refused: with a tail, the first statement fails when nothing
// was ended (casting a sentence to an integer, evaluated only then), which
// rolls the whole op back; without one, its command tag says so.
func (s *Store) pgEndRun(ctx context.Context, r *orchestrator.Run, row *runRow, at time.Time, keys []string,
	mrows []messageRow, erows []eventRow, runs []string) error {
	parts := "WITH ended AS (" + updateRunSQL + " RETURNING session_id), " +
		`touched AS (UPDATE "sessions" SET "updated_at" = ? WHERE "id" IN (SELECT session_id FROM ended))`
	args := append(runUpdateArgs(row), bind(at)...)
	if len(keys) > 0 {
		parts += `, freed AS (DELETE FROM session_locks WHERE "key" IN (` + placeholders(len(keys)) +
			`) AND owner = ? AND EXISTS (SELECT 1 FROM ended))`
		for _, k := range keys {
			args = append(args, bind(k)...)
		}
		args = append(args, bind(r.ID)...)
	}
	w := &pgWrite{fail: func(err error) error {
		if isFenceRefused(err) {
			return errNoRowMatched
		}
		if constraintOf(err) == uniqueViolation && len(erows) > 0 {
			return eventErr(err, runs)
		}
		return dbErr(err, "end run", "run "+r.ID)
	}}
	if len(mrows) == 0 && len(erows) == 0 {
		// The SELECT's row count is the runs ended: 0 when the owner fence
		// matched nothing, and then nothing was touched or freed either.
		st, err := boundPGStmt(parts+" SELECT 1 FROM ended", args)
		if err != nil {
			return err
		}
		w.stmts = []pgStmt{st}
		w.check = matchedOne
	} else {
		st, err := boundPGStmt(parts+" SELECT CAST(CASE WHEN EXISTS (SELECT 1 FROM ended) THEN '1' ELSE ?::text END AS integer)",
			append(args, fenceRefused))
		if err != nil {
			return err
		}
		w.stmts = []pgStmt{st}
		if len(mrows) > 0 {
			st, err := boundPGStmt(insertMessages.of(len(mrows)), messageArgs(mrows))
			if err != nil {
				return err
			}
			w.stmts = append(w.stmts, st)
		}
		events, err := eventStmts(erows)
		if err != nil {
			return err
		}
		w.stmts = append(w.stmts, events...)
		w.notify = s.payloads('e', runs)
	}
	err := s.pgExec(ctx, w)
	if errors.Is(err, errNoRowMatched) {
		return ownerConflict(ctx, s.db, r.ID, r.Owner)
	}
	return err
}

// fenceRefused is the text pgEndRun's first statement casts to an integer
// when the owner fence matched nothing: the error names what happened.
const fenceRefused = "wunder: run end refused by the owner fence"

// isFenceRefused reports the error of that cast.
func isFenceRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22P02" && strings.Contains(pe.Message, fenceRefused)
}

// inTx runs fn in a transaction: db's own when it is one (the SQLite
// writer's), else a new one.
func inTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, db bun.IDB) error) error {
	if _, ok := db.(bun.Tx); ok {
		return fn(ctx, db)
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
}

// SuspendRun implements [orchestrator.Store]: the fenced update, the
// approvals, the kept messages and the events in one transaction on
// either backend. A pause is rare next to a run's other writes, so
// PostgreSQL takes it as a plain transaction rather than as a pipelined
// batch of the writer (pgwriter.go), and its events notify the other
// replicas at its commit as AppendEvents' do.
func (s *Store) SuspendRun(ctx context.Context, r *orchestrator.Run, approvals []*orchestrator.Approval, tail orchestrator.RunTail) error {
	if r == nil {
		return invalid("run is nil")
	}
	row := toRunRow(r)
	arows := make([]*approvalRow, len(approvals))
	for i, a := range approvals {
		if a == nil || a.ID == "" || a.RunID == "" {
			return invalid("approval id and run id are required")
		}
		a.CreatedAt = stamp(a.CreatedAt)
		arows[i] = toApprovalRow(a)
	}
	mrows, err := messageRows(r.SessionID, tail.Messages)
	if err != nil {
		return err
	}
	erows, runs, err := eventRows(tail.Events)
	if err != nil {
		return err
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			res, err := db.NewUpdate().Model(row).Column(runMutable...).WherePK().Where("owner = ?", r.Owner).Exec(ctx)
			if err := affected(res, err, "suspend run", "run "+r.ID); err != nil {
				if errors.Is(err, orchestrator.ErrNotFound) {
					return ownerConflict(ctx, db, r.ID, r.Owner)
				}
				return err
			}
			if len(arows) > 0 {
				if _, err := db.NewInsert().Model(&arows).Exec(ctx); err != nil {
					return dbErr(err, "suspend run", "approval of run "+r.ID)
				}
			}
			if len(mrows) > 0 {
				if err := s.insertMessages(ctx, db, mrows); err != nil {
					return dbErr(err, "suspend run", "session "+r.SessionID)
				}
			}
			if len(erows) > 0 {
				return s.insertEvents(ctx, db, erows, runs)
			}
			return nil
		})
	})
}
