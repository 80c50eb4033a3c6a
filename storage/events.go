package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// eventChunk bounds the rows of one INSERT statement (bun inlines values, so
// this also bounds the statement's size for ordinary payloads).
const eventChunk = 256

// AppendEvents implements [orchestrator.Store]. The batch is written in one
// transaction: a duplicate (run_id, seq), within the batch or against the
// stored log, is ErrConflict and an unknown run ErrNotFound, and in both
// cases nothing of the batch is stored.
func (s *Store) AppendEvents(ctx context.Context, events []orchestrator.Event) error {
	if len(events) == 0 {
		return nil
	}
	rows, ids, err := eventRows(events)
	if err != nil {
		return err
	}
	if s.pgw != nil {
		stmts, err := eventStmts(rows)
		if err != nil {
			return err
		}
		w := &pgWrite{stmts: stmts, notify: s.payloads('e', ids), fail: func(err error) error { return eventErr(err, ids) }}
		return s.pgExec(ctx, w)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return inTx(ctx, db, func(ctx context.Context, db bun.IDB) error {
			return s.insertEvents(ctx, db, rows, ids)
		})
	})
}

// eventRows turns a batch into rows and the sorted ids of its runs.
func eventRows(events []orchestrator.Event) ([]eventRow, []string, error) {
	rows := make([]eventRow, len(events))
	runs := map[string]bool{}
	for i, e := range events {
		if e.RunID == "" || e.Seq <= 0 {
			return nil, nil, invalid("event needs a run id and a seq >= 1 (run %q, seq %d)", e.RunID, e.Seq)
		}
		rows[i] = toEventRow(e)
		runs[e.RunID] = true
	}
	return rows, slices.Sorted(maps.Keys(runs)), nil
}

// eventStmts are rows as INSERT statements of at most eventChunk rows
// (PostgreSQL's writer).
func eventStmts(rows []eventRow) ([]pgStmt, error) {
	var stmts []pgStmt
	for from := 0; from < len(rows); from += eventChunk {
		chunk := rows[from:min(from+eventChunk, len(rows))]
		st, err := boundPGStmt(insertEvents.of(len(chunk)), eventArgs(chunk))
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, st)
	}
	return stmts, nil
}

// insertEvents inserts rows in the transaction db (SQLite: a prepared
// statement for a small batch) and notifies their runs' change.
func (s *Store) insertEvents(ctx context.Context, db bun.IDB, rows []eventRow, ids []string) error {
	for from := 0; from < len(rows); from += eventChunk {
		chunk := rows[from:min(from+eventChunk, len(rows))]
		ok := false
		var err error
		if len(chunk) <= maxPreparedRows {
			_, ok, err = s.execPrepared(ctx, db, insertEvents.of(len(chunk)), eventArgs(chunk))
		}
		if !ok {
			_, err = db.NewInsert().Model(&chunk).Exec(ctx)
		}
		if err != nil {
			return eventErr(err, ids)
		}
	}
	s.notify(ctx, db, 'e', ids)
	return nil
}

func eventErr(err error, runs []string) error {
	ids := strings.Join(runs, ", ")
	switch constraintOf(err) {
	case uniqueViolation:
		return fmt.Errorf("%w: event batch of run %s repeats a stored seq or one of its own", orchestrator.ErrConflict, ids)
	case foreignKeyViolation:
		return fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, ids)
	}
	return dbErr(err, "append events", "of run "+ids)
}

// ListEvents implements [orchestrator.Store].
func (s *Store) ListEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]orchestrator.Event, error) {
	var rows []eventRow
	q := s.db.NewSelect().Model(&rows).Where("run_id = ?", runID).Where("seq > ?", afterSeq).OrderExpr("seq ASC")
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list events", "of run "+runID)
	}
	out := make([]orchestrator.Event, len(rows))
	for i := range rows {
		out[i] = fromEventRow(&rows[i])
	}
	return out, nil
}
