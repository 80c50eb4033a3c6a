package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// Locks live in session_locks ("key" primary key, owner, expires_at). Each
// operation is one statement, so it is atomic across every process sharing
// the database. The clock that stamps and expires locks is the database
// server's (now()) on PostgreSQL, so replicas with skewed clocks still agree,
// and the process clock on SQLite, whose database is local to the process.

const (
	// acquire inserts the lock, or takes over a row the owner already holds
	// or that has expired; zero rows affected means someone else holds it.
	pgAcquire = `INSERT INTO session_locks ("key", owner, expires_at)
VALUES (?, ?, now() + ?::bigint * interval '1 microsecond')
ON CONFLICT ("key") DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE session_locks.owner = excluded.owner OR session_locks.expires_at < now()`
	sqliteAcquire = `INSERT INTO session_locks ("key", owner, expires_at)
VALUES (?, ?, ?)
ON CONFLICT ("key") DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE session_locks.owner = excluded.owner OR session_locks.expires_at < ?`

	pgRenew     = `UPDATE session_locks SET expires_at = now() + ?::bigint * interval '1 microsecond' WHERE "key" = ? AND owner = ?`
	sqliteRenew = `UPDATE session_locks SET expires_at = ? WHERE "key" = ? AND owner = ?`

	releaseLock = `DELETE FROM session_locks WHERE "key" = ? AND owner = ?`

	// newLockSQL and sqliteNewLock insert a lock that must not exist
	// (CreateRunWith's).
	newLockSQL    = `INSERT INTO session_locks ("key", owner, expires_at) VALUES (?, ?, now() + ?::bigint * interval '1 microsecond')`
	sqliteNewLock = `INSERT INTO session_locks ("key", owner, expires_at) VALUES (?, ?, ?)`
)

func checkLockArgs(key, owner string, ttl time.Duration) error {
	if key == "" || owner == "" || ttl <= 0 {
		return invalid("lock needs a key, an owner and a positive ttl (key %q, owner %q, ttl %v)", key, owner, ttl)
	}
	return nil
}

// AcquireLock implements [orchestrator.Store] with one conditional upsert.
func (s *Store) AcquireLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	now := stamp(time.Time{})
	n, err := s.lockExec(ctx, "acquire lock", key, owner, ttl,
		pgAcquire, []any{key, owner, ttl.Microseconds()},
		sqliteAcquire, []any{key, owner, now.Add(ttl), now})
	if err == nil && n == 0 {
		return fmt.Errorf("%w: lock %s is held by another owner", orchestrator.ErrBusy, key)
	}
	return err
}

// RenewLock implements [orchestrator.Store]. The owner may renew while no one
// else has taken the lock, even past its expiry.
func (s *Store) RenewLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	n, err := s.lockExec(ctx, "renew lock", key, owner, ttl,
		pgRenew, []any{ttl.Microseconds(), key, owner},
		sqliteRenew, []any{stamp(time.Time{}).Add(ttl), key, owner})
	if err == nil && n == 0 {
		return fmt.Errorf("%w: lock %s held by %s", orchestrator.ErrNotFound, key, owner)
	}
	return err
}

// lockExec checks a lock operation's arguments, runs its statement (pg on
// PostgreSQL, sqlite on SQLite, each with its args) as a write, and returns
// the rows it changed.
func (s *Store) lockExec(ctx context.Context, op, key, owner string, ttl time.Duration,
	pg string, pgArgs []any, sqlite string, sqliteArgs []any) (int64, error) {
	if err := checkLockArgs(key, owner, ttl); err != nil {
		return 0, err
	}
	query, args := pg, pgArgs
	if s.backend == BackendSQLite {
		query, args = sqlite, sqliteArgs
	}
	var n int64
	if s.pgw != nil {
		st, err := newPGStmt(query, args...)
		if err != nil {
			return 0, err
		}
		err = s.pgExec(ctx, &pgWrite{stmts: []pgStmt{st},
			check: func(tags []pgconn.CommandTag) error { n = tags[0].RowsAffected(); return nil },
			fail:  func(err error) error { return dbErr(err, op, "lock "+key) }})
		return n, err
	}
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, ok, err := s.execPrepared(ctx, db, query, bind(args...))
		if !ok {
			res, err = db.ExecContext(ctx, query, args...)
		}
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, dbErr(err, op, "lock "+key)
	}
	return n, nil
}

// ReleaseLock implements [orchestrator.Store].
func (s *Store) ReleaseLock(ctx context.Context, key, owner string) error {
	if s.pgw != nil {
		st, err := newPGStmt(releaseLock, key, owner)
		if err != nil {
			return err
		}
		return s.pgExec(ctx, &pgWrite{stmts: []pgStmt{st},
			fail: func(err error) error { return dbErr(err, "release lock", key) }})
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		if _, ok, err := s.execPrepared(ctx, db, releaseLock, bind(key, owner)); ok {
			return dbErr(err, "release lock", key)
		}
		_, err := db.ExecContext(ctx, releaseLock, key, owner)
		return dbErr(err, "release lock", key)
	})
}

// ReleaseLocksOf implements [orchestrator.Store].
func (s *Store) ReleaseLocksOf(ctx context.Context, owner string) error {
	if owner == "" {
		return invalid("release locks needs an owner")
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.ExecContext(ctx, `DELETE FROM session_locks WHERE owner = ?`, owner)
		return dbErr(err, "release locks", "of "+owner)
	})
}

// LockOwner implements [orchestrator.Store].
func (s *Store) LockOwner(ctx context.Context, key string) (string, error) {
	var owner string
	var err error
	if s.backend == BackendPostgres {
		err = s.queryRow(ctx, "select_lock_owner_pg", `SELECT owner FROM session_locks WHERE "key" = ? AND expires_at >= now()`, key).Scan(&owner)
	} else {
		err = s.queryRow(ctx, "select_lock_owner", `SELECT owner FROM session_locks WHERE "key" = ? AND expires_at >= ?`, key, stamp(time.Time{})).Scan(&owner)
	}
	if err != nil {
		return "", dbErr(err, "read lock", "lock "+key)
	}
	return owner, nil
}

// LockHeld implements [orchestrator.Store] with one read of the lock's row.
func (s *Store) LockHeld(ctx context.Context, key string) (bool, error) {
	var n int
	err := s.queryRow(ctx, "select_session_locks", `SELECT count(*) FROM session_locks WHERE "key" = ?`, key).Scan(&n)
	if err != nil {
		return false, dbErr(err, "read lock", "lock "+key)
	}
	return n > 0, nil
}
