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
	rows := make([]eventRow, len(events))
	runs := map[string]bool{}
	for i, e := range events {
		if e.RunID == "" || e.Seq <= 0 {
			return invalid("event needs a run id and a seq >= 1 (run %q, seq %d)", e.RunID, e.Seq)
		}
		rows[i] = toEventRow(e)
		runs[e.RunID] = true
	}
	ids := slices.Sorted(maps.Keys(runs))
	if s.pgw != nil {
		w := &pgWrite{notify: s.payloads('e', ids), fail: func(err error) error { return eventErr(err, ids) }}
		for from := 0; from < len(rows); from += eventChunk {
			chunk := rows[from:min(from+eventChunk, len(rows))]
			w.stmts = append(w.stmts, s.db.NewInsert().Model(&chunk).String())
		}
		return s.pgExec(ctx, w)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var err error
		if len(rows) <= eventChunk {
			// One statement is atomic on its own.
			ok := false
			if len(rows) <= maxPreparedRows {
				_, ok, err = s.execPrepared(ctx, db, insertSQL("events", eventCols, len(rows)), eventArgs(rows))
			}
			if !ok {
				_, err = db.NewInsert().Model(&rows).Exec(ctx)
			}
			if err == nil {
				s.notify(ctx, db, 'e', ids)
			}
			return eventErr(err, ids)
		}
		err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for from := 0; from < len(rows); from += eventChunk {
				chunk := rows[from:min(from+eventChunk, len(rows))]
				if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			s.notify(ctx, db, 'e', ids)
		}
		return eventErr(err, ids)
	})
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
