package storage

import (
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// Prepared statements for the hottest write on SQLite: appending a run's
// events, a few times per run. bun writes every value into the SQL text,
// so SQLite parses each statement anew; parsing was a quarter of the
// writer's time in a profile of no-tool runs (docs/benchmarks.md). These
// statements bind their values instead, and modernc's driver keeps a
// prepared statement compiled (database/sql keeps one per connection).
// Values are written as bun writes them: text through StoredText, times
// in bun's format, so what a query finds does not depend on the path that
// stored it.

// maxPreparedEvents bounds the batch sizes that get a statement of their
// own; larger batches take bun's path.
const maxPreparedEvents = 32

type preparedStmts struct {
	mu     sync.Mutex
	events [maxPreparedEvents + 1]*sql.Stmt
}

// bunTime is a time as bun's SQLite dialect writes it.
func bunTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999-07:00") }

// insertEvents appends rows through a prepared statement when db is the
// writer's transaction and the batch is small; ok is false when it did
// not (the caller takes bun's path).
func (s *Store) insertEvents(ctx context.Context, db bun.IDB, rows []eventRow) (ok bool, err error) {
	tx, isTx := db.(bun.Tx)
	if s.backend != BackendSQLite || s.writer == nil || !isTx || len(rows) > maxPreparedEvents {
		return false, nil
	}
	stmt, err := s.eventsStmt(ctx, len(rows))
	if err != nil {
		return false, nil // bun's path still works
	}
	args := make([]any, 0, 6*len(rows))
	for _, r := range rows {
		var data any
		if r.Data != nil {
			data = orchestrator.StoredText(*r.Data)
		}
		args = append(args, orchestrator.StoredText(r.RunID), r.Seq, orchestrator.StoredText(r.SessionID),
			orchestrator.StoredText(r.Type), data, bunTime(r.CreatedAt))
	}
	_, err = tx.Tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
	return true, err
}

func (s *Store) eventsStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	if st := s.prepared.events[n]; st != nil {
		return st, nil
	}
	q := `INSERT INTO "events" ("run_id", "seq", "session_id", "type", "data", "created_at") VALUES ` +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", n), ", ")
	st, err := s.db.DB.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.prepared.events[n] = st
	return st, nil
}

// closePrepared closes the prepared statements.
func (s *Store) closePrepared() {
	s.prepared.mu.Lock()
	defer s.prepared.mu.Unlock()
	for i, st := range s.prepared.events {
		if st != nil {
			_ = st.Close()
			s.prepared.events[i] = nil
		}
	}
}
