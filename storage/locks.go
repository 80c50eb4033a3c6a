package storage

import (
	"context"
	"fmt"
	"time"

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
VALUES (?, ?, now() + ? * interval '1 microsecond')
ON CONFLICT ("key") DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE session_locks.owner = excluded.owner OR session_locks.expires_at < now()`
	sqliteAcquire = `INSERT INTO session_locks ("key", owner, expires_at)
VALUES (?, ?, ?)
ON CONFLICT ("key") DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE session_locks.owner = excluded.owner OR session_locks.expires_at < ?`

	pgRenew     = `UPDATE session_locks SET expires_at = now() + ? * interval '1 microsecond' WHERE "key" = ? AND owner = ?`
	sqliteRenew = `UPDATE session_locks SET expires_at = ? WHERE "key" = ? AND owner = ?`

	releaseLock = `DELETE FROM session_locks WHERE "key" = ? AND owner = ?`
)

func checkLockArgs(key, owner string, ttl time.Duration) error {
	if key == "" || owner == "" || ttl <= 0 {
		return invalid("lock needs a key, an owner and a positive ttl (key %q, owner %q, ttl %v)", key, owner, ttl)
	}
	return nil
}

// AcquireLock implements [orchestrator.Store] with one conditional upsert.
func (s *Store) AcquireLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	if err := checkLockArgs(key, owner, ttl); err != nil {
		return err
	}
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	query, args := pgAcquire, []any{key, owner, ttl.Microseconds()}
	if s.backend == BackendSQLite {
		now := stamp(time.Time{})
		query, args = sqliteAcquire, []any{key, owner, now.Add(ttl), now}
	}
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return dbErr(err, "acquire lock", key)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(err, "acquire lock", key)
	}
	if n == 0 {
		return fmt.Errorf("%w: lock %s is held by another owner", orchestrator.ErrBusy, key)
	}
	return nil
}

// RenewLock implements [orchestrator.Store]. The owner may renew while no one
// else has taken the lock, even past its expiry.
func (s *Store) RenewLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	if err := checkLockArgs(key, owner, ttl); err != nil {
		return err
	}
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	query, args := pgRenew, []any{ttl.Microseconds(), key, owner}
	if s.backend == BackendSQLite {
		query, args = sqliteRenew, []any{stamp(time.Time{}).Add(ttl), key, owner}
	}
	res, err := s.db.ExecContext(ctx, query, args...)
	return affected(res, err, "renew lock", fmt.Sprintf("lock %s held by %s", key, owner))
}

// ReleaseLock implements [orchestrator.Store].
func (s *Store) ReleaseLock(ctx context.Context, key, owner string) error {
	release, err := s.write(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.db.ExecContext(ctx, releaseLock, key, owner)
	return dbErr(err, "release lock", key)
}
