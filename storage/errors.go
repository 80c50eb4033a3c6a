package storage

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/wunder/wunder/orchestrator"
)

// constraint classifies a database error as a violated constraint.
type constraint int

const (
	noConstraint constraint = iota
	uniqueViolation
	foreignKeyViolation
)

// constraintOf recognises unique and foreign-key violations of both drivers:
// SQLite's extended result codes and PostgreSQL's SQLSTATE 23505 / 23503.
func constraintOf(err error) constraint {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
			return uniqueViolation
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return foreignKeyViolation
		}
		return noConstraint
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return uniqueViolation
		case "23503":
			return foreignKeyViolation
		}
	}
	return noConstraint
}

// isInsufficientPrivilege reports PostgreSQL's SQLSTATE 42501: the role may
// not do what it asked.
func isInsufficientPrivilege(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// dbErr maps a database error to the core's vocabulary: a unique violation
// is ErrConflict ("what already exists"), a foreign-key violation or no row
// ErrNotFound (what names the missing object then), anything else is wrapped
// with op and what.
func dbErr(err error, op, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, orchestrator.ErrNotFound), errors.Is(err, orchestrator.ErrConflict),
		errors.Is(err, orchestrator.ErrInvalidArgument), errors.Is(err, orchestrator.ErrBusy):
		return err // already mapped
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: %s", orchestrator.ErrNotFound, what)
	}
	switch constraintOf(err) {
	case uniqueViolation:
		return fmt.Errorf("%w: %s already exists", orchestrator.ErrConflict, what)
	case foreignKeyViolation:
		return fmt.Errorf("%w: %s", orchestrator.ErrNotFound, what)
	}
	return fmt.Errorf("storage: %s %s: %w", op, what, err)
}

// affected maps an update or delete that matched no row to ErrNotFound.
func affected(res sql.Result, err error, op, what string) error {
	if err != nil {
		return dbErr(err, op, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return dbErr(err, op, what)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", orchestrator.ErrNotFound, what)
	}
	return nil
}

// invalid returns an ErrInvalidArgument.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, args...))
}
