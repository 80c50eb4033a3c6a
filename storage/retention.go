package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// pruneBatch bounds the runs (and tool logs) one PruneEvents transaction
// touches, so the janitor never holds the writer for long.
const pruneBatch = 200

// PruneEvents deletes the events of runs that ended before cutoff, in
// batches until none is left or ctx ends. The runs stay, with their
// answers and usage; a replay of one gives its final event from the run
// row. It returns how many runs lost their events.
func (s *Store) PruneEvents(ctx context.Context, cutoff time.Time) (runs int, err error) {
	cutoff = cutoff.UTC()
	terminal := []string{string(orchestrator.RunFinished), string(orchestrator.RunCancelled), string(orchestrator.RunFailed)}
	for ctx.Err() == nil {
		var n int
		err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			var ids []string
			// created_at <= finished_at, so its index narrows the scan.
			if err := db.NewSelect().Table("runs").Column("id").
				Where("created_at < ?", cutoff).Where("finished_at < ?", cutoff).
				Where("state IN (?)", bun.List(terminal)).
				Where("EXISTS (SELECT 1 FROM events e WHERE e.run_id = runs.id)").
				Limit(pruneBatch).Scan(ctx, &ids); err != nil {
				return dbErr(err, "find runs to prune", "runs")
			}
			n = len(ids)
			if n == 0 {
				return nil
			}
			_, err := db.NewDelete().Table("events").Where("run_id IN (?)", bun.List(ids)).Exec(ctx)
			return dbErr(err, "prune events", "events")
		})
		if err != nil {
			return runs, err
		}
		runs += n
		if n < pruneBatch {
			break
		}
	}
	return runs, ctx.Err()
}

// PruneToolLogs deletes the tool logs (the audit) written before cutoff,
// in batches until none is left or ctx ends, and returns how many went.
func (s *Store) PruneToolLogs(ctx context.Context, cutoff time.Time) (toolLogs int, err error) {
	cutoff = cutoff.UTC()
	return s.deleteInBatches(ctx, "prune tool logs", "tool_logs", func(db bun.IDB) *bun.DeleteQuery {
		sub := db.NewSelect().Table("tool_logs").Column("id").Where("created_at < ?", cutoff).Limit(pruneBatch)
		return db.NewDelete().Table("tool_logs").Where("id IN (?)", sub)
	})
}

// PruneMemoryTasks deletes the memory summarisation tasks that ended (done
// or failed) before cutoff: the task log of /wunder/admin/memory/status,
// kept as long as events are (storage.event_retention_days). Queued and
// running tasks stay whatever their age. It deletes in batches and
// reports how many went.
func (s *Store) PruneMemoryTasks(ctx context.Context, cutoff time.Time) (int, error) {
	cutoff = cutoff.UTC()
	ended := []string{string(memory.Done), string(memory.Failed)}
	return s.deleteInBatches(ctx, "prune memory tasks", "memory_tasks", func(db bun.IDB) *bun.DeleteQuery {
		// queued_at <= finished_at: the (state, queued_at) index narrows it.
		sub := db.NewSelect().Table("memory_tasks").Column("id").Where("state IN (?)", bun.List(ended)).
			Where("queued_at < ?", cutoff).Where("finished_at < ?", cutoff).Limit(pruneBatch)
		return db.NewDelete().Table("memory_tasks").Where("id IN (?)", sub)
	})
}

// deleteInBatches runs the delete batch builds (at most pruneBatch rows
// of table, picked by a subquery), one transaction each, until a batch
// deletes fewer or ctx ends, and returns how many rows went. op names the
// work in errors.
func (s *Store) deleteInBatches(ctx context.Context, op, table string, batch func(db bun.IDB) *bun.DeleteQuery) (int, error) {
	total := 0
	for ctx.Err() == nil {
		var n int64
		err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			res, err := batch(db).Exec(ctx)
			if err != nil {
				return dbErr(err, op, table)
			}
			n, _ = res.RowsAffected()
			return nil
		})
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < pruneBatch {
			break
		}
	}
	return total, ctx.Err()
}
