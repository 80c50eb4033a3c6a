package storage

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"time"
)

// Checkpoints (SQLite).
//
// In WAL mode a commit appends its pages to the WAL; a checkpoint copies
// them back into the database file, with an fsync of the WAL before and
// one of the database after (synchronous=NORMAL's durability point). SQLite
// checkpoints on its own in the commit that takes the WAL past 1,000
// pages, on the committing connection: here that is the group-commit
// writer, so every write queued behind it waited for the copy and both
// fsyncs, and the processors idled meanwhile (about one commit in fifty
// under load: a fifth of the machine idle, and the p99 of a run doubled;
// docs/benchmarks.md, sixth pass). So no connection checkpoints on commit
// (wal_autocheckpoint 0) and the checkpoint is done in two steps:
//
//   - a checkpointer goroutine, woken by the writer's commits, waits
//     checkpointDelay (so one checkpoint serves the commits of that
//     interval) and runs a PASSIVE checkpoint on a pool connection, beside
//     the writer: the copy and the fsyncs happen while commits go on;
//   - when commits came in meanwhile, the writer finishes the checkpoint in
//     its own turn, before its next batch: only the pages of those
//     commits, and fsyncs of little. A checkpoint that has copied the whole
//     WAL lets the next commit start the WAL over from its beginning,
//     which one running beside a busy writer would seldom see: without
//     this step the WAL would grow for as long as the writes go on.
//
// Nothing changes for the data: a commit is durable as before (in the WAL,
// fsynced at the next checkpoint), and a checkpoint never copies what is
// not committed. Neither step waits for readers or for another process's
// writer (PASSIVE), and at Close SQLite's own last checkpoint empties the
// WAL as before.

// defaultCheckpointDelay is Options.CheckpointDelay's default. A busy
// server writes about 10,000 WAL pages a second (two cores, a thousand runs
// a second), so the WAL stays at a few thousand pages, about 10 MB; 100ms,
// 300ms and 1s measured alike (docs/benchmarks.md, sixth pass).
const defaultCheckpointDelay = 200 * time.Millisecond

// checkpointer runs the first step of each checkpoint; see above.
type checkpointer struct {
	db    *sql.DB
	delay time.Duration
	log   *slog.Logger

	kick chan struct{} // a commit since the last checkpoint
	// finish: a checkpoint ran beside commits; the writer finishes it.
	finish atomic.Bool
	stop   chan struct{}
	done   chan struct{}

	// runs and finished count the two steps (tests and stats).
	runs, finished atomic.Int64
}

func newCheckpointer(db *sql.DB, delay time.Duration, log *slog.Logger) *checkpointer {
	if delay <= 0 {
		delay = defaultCheckpointDelay
	}
	c := &checkpointer{db: db, delay: delay, log: log,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// committed tells the checkpointer of a commit; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	t := time.NewTimer(c.delay)
	t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		t.Reset(c.delay)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		if c.finish.Load() {
			// The writer has not finished the last one yet: it will copy
			// these commits too, and the two never run at once (a second
			// checkpoint would only find the first one busy).
			continue
		}
		if _, _, err := c.checkpoint("PASSIVE"); err != nil {
			c.log.Warn("sqlite checkpoint failed; the next commit retries it", "err", err)
		} else {
			// What it copied is what was committed when it began: the
			// writer copies the rest in its turn (nothing, and no fsync,
			// when nothing was committed meanwhile).
			c.finish.Store(true)
		}
		c.runs.Add(1)
	}
}

// beforeBatch is the writer's step: it finishes a checkpoint that ran
// beside commits. Only the writer calls it, with no transaction open.
func (c *checkpointer) beforeBatch() {
	if !c.finish.CompareAndSwap(true, false) {
		return
	}
	if _, _, err := c.checkpoint("PASSIVE"); err != nil {
		c.log.Debug("sqlite checkpoint not finished; the next one will", "err", err)
		return
	}
	c.finished.Add(1)
}

// checkpoint runs PRAGMA wal_checkpoint(mode): log is the WAL's length in
// pages when it began, copied how many of them are in the database file
// now.
func (c *checkpointer) checkpoint(mode string) (log, copied int64, err error) {
	var busy int64
	err = c.db.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &log, &copied)
	return log, copied, err
}

// close stops the checkpointer; the writer has stopped (its one loop calls
// it as it exits). The last connection to close checkpoints what is left
// and removes the WAL (SQLite's own close, which wal_autocheckpoint does
// not turn off).
func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
}
