package storage

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// dbErr maps what each driver really returns to the core's vocabulary:
// a unique violation is ErrConflict naming what exists, a foreign key
// violation and no row ErrNotFound naming what is missing, an error
// already mapped stays as it is, and anything else is wrapped with the
// operation and kept for errors.Is.
func TestDBErrMapsDriverErrors(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			lock := `INSERT INTO session_locks ("key", owner, expires_at) VALUES ('k', 'o', ?)`
			_, err := s.db.ExecContext(ctx, lock, time.Now())
			must(t, err)
			_, unique := s.db.ExecContext(ctx, lock, time.Now())
			_, foreign := s.db.ExecContext(ctx, `INSERT INTO events (run_id, seq, session_id, type, created_at) VALUES ('no-run', 1, 's', 't', ?)`, time.Now())
			_, syntax := s.db.ExecContext(ctx, `SELEC 1`)
			var n int
			noRow := s.db.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = 'none'`).Scan(&n)
			if constraintOf(unique) != uniqueViolation || constraintOf(foreign) != foreignKeyViolation || constraintOf(syntax) != noConstraint {
				t.Fatalf("constraintOf: unique %v, foreign key %v, syntax %v", unique, foreign, syntax)
			}
			if !migrationRace(unique) || migrationRace(syntax) {
				t.Errorf("migrationRace: unique violation %v, syntax error %v; want a race only for the first", migrationRace(unique), migrationRace(syntax))
			}
			mapped := fmt.Errorf("%w: held", orchestrator.ErrBusy)
			for _, tc := range []struct {
				err  error
				is   error
				text string
			}{
				{unique, orchestrator.ErrConflict, "conflict: lock k already exists"},
				{foreign, orchestrator.ErrNotFound, "not found: lock k"},
				{noRow, orchestrator.ErrNotFound, "not found: lock k"},
				{sql.ErrNoRows, orchestrator.ErrNotFound, "not found: lock k"},
				{mapped, orchestrator.ErrBusy, "busy: held"},
				{syntax, syntax, "storage: take lock k: "},
			} {
				got := dbErr(tc.err, "take", "lock k")
				if !errors.Is(got, tc.is) || !strings.HasPrefix(got.Error(), tc.text) {
					t.Errorf("dbErr(%v) = %v; want %v starting %q", tc.err, got, tc.is, tc.text)
				}
			}
			if dbErr(mapped, "take", "lock k") != mapped || dbErr(nil, "take", "x") != nil {
				t.Error("dbErr changed an error already mapped, or made one of nil")
			}
		})
	}
}

// affected tells an update that matched nothing (ErrNotFound) from one
// that changed a row, and maps the statement's own error.
func TestAffected(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			res, err := s.db.ExecContext(ctx, `UPDATE sessions SET title = 't' WHERE id = 's'`)
			if err := affected(res, err, "rename", "session s"); err != nil {
				t.Errorf("one row changed: %v", err)
			}
			res, err = s.db.ExecContext(ctx, `UPDATE sessions SET title = 't' WHERE id = 'gone'`)
			if err := affected(res, err, "rename", "session gone"); !errors.Is(err, orchestrator.ErrNotFound) || !strings.Contains(err.Error(), "session gone") {
				t.Errorf("no row changed: %v; want ErrNotFound naming the session", err)
			}
			res, err = s.db.ExecContext(ctx, `UPDATE sessions SET nonesuch = 1`)
			if err := affected(res, err, "rename", "session s"); err == nil || !strings.HasPrefix(err.Error(), "storage: rename session s: ") {
				t.Errorf("a failed statement: %v; want it wrapped with the operation", err)
			}
		})
	}
}
