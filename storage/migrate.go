package storage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun/migrate"
)

// migrationFiles holds one directory of SQL migrations per backend. The two
// sets carry the same versions and names; they differ only where the
// dialects must (identity columns, timestamp types), and a version only
// one dialect needs is in its set alone (sqliteOnlyMigrations in
// schema_test.go says which and why).
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// migrationLockWait bounds how long Migrate waits for another process's
// migration to finish.
const migrationLockWait = 2 * time.Minute

// migrator returns bun's migrator over this backend's embedded migrations.
// Each SQL file runs in a transaction (.tx.up.sql) and is marked applied
// only after it succeeded.
func (s *Store) migrator() (*migrate.Migrator, error) {
	sub, err := fs.Sub(migrationFiles, "migrations/"+s.backend)
	if err != nil {
		return nil, fmt.Errorf("storage: migrations: %w", err)
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("storage: migrations: %w", err)
	}
	return migrate.NewMigrator(s.db, ms, migrate.WithMarkAppliedOnSuccess(true)), nil
}

// Migrate applies pending migrations. It is idempotent, and safe when
// several processes start at once: bun's lock table (bun_migration_locks)
// admits one migrator at a time; the others wait, retrying for up to two
// minutes, and then find nothing pending. A process killed while migrating
// leaves that lock row behind; the error then says how to clear it.
func (s *Store) Migrate(ctx context.Context) error {
	m, err := s.migrator()
	if err != nil {
		return err
	}
	unlock, err := lockMigrations(ctx, m)
	if err != nil {
		return err
	}
	defer unlock()
	group, err := m.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("storage: migrate %s: %w", s.backend, err)
	}
	if err := s.keyUsers(ctx); err != nil { // userkeys.go: what SQL cannot fold
		return err
	}
	if group.IsZero() {
		s.log.Debug("storage: schema up to date", "backend", s.backend)
		return nil
	}
	s.log.Info("storage: migrations applied", "backend", s.backend, "group", group.ID, "migrations", group.Migrations.String())
	return nil
}

// lockMigrations creates bun's bookkeeping tables and takes its lock,
// retrying while another process holds it (or races to create the tables).
func lockMigrations(ctx context.Context, m *migrate.Migrator) (unlock func(), err error) {
	deadline := time.Now().Add(migrationLockWait)
	backoff := 20 * time.Millisecond
	for {
		err = m.Init(ctx)
		if err == nil {
			err = m.Lock(ctx)
		}
		if err == nil {
			return func() {
				// Unlock even when ctx is done, or the next start waits in vain.
				uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				defer cancel()
				_ = m.Unlock(uctx)
			}, nil
		}
		if !migrationRace(err) {
			return nil, fmt.Errorf("storage: migrate: %w", err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("storage: migrate: another process has held the migration lock for %v; "+
				"if none is running, delete its row from bun_migration_locks: %w", migrationLockWait, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("storage: migrate: waiting for the migration lock: %w", ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// Migration is one embedded migration and whether it is applied.
type Migration struct {
	// Name is the version, e.g. "20260301000001"; Comment the rest of the
	// file name, e.g. "init".
	Name, Comment string
	// AppliedAt is zero while the migration is pending.
	AppliedAt time.Time
}

// MigrationStatus lists the embedded migrations, oldest first, with the
// time each was applied (zero while pending). It creates bun's bookkeeping
// tables if they are missing, and changes nothing else.
func (s *Store) MigrationStatus(ctx context.Context) ([]Migration, error) {
	m, err := s.migrator()
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("storage: migration status: %w", err)
	}
	ms, err := m.MigrationsWithStatus(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: migration status: %w", err)
	}
	out := make([]Migration, len(ms))
	for i, mg := range ms {
		out[i] = Migration{Name: mg.Name, Comment: mg.Comment}
		if mg.IsApplied() {
			out[i].AppliedAt = mg.MigratedAt.UTC()
		}
	}
	return out, nil
}

// migrationRace reports an error of a migrator losing a race to another:
// the lock row exists, or PostgreSQL's concurrent CREATE TABLE IF NOT
// EXISTS collided (a unique violation in its catalog, or 42P07 / 42710).
func migrationRace(err error) bool {
	if constraintOf(err) == uniqueViolation {
		return true
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P07" || pe.Code == "42710")
}
