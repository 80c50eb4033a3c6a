package storage

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// writePages commits n transactions through the writer, each adding about
// pages pages (8 KiB blobs: two overflow pages each) to a table of its own.
func writePages(t *testing.T, s *Store, n, pages int) {
	t.Helper()
	if err := s.update(t.Context(), func(ctx context.Context, db bun.IDB) error {
		_, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS ckpt_blobs (b BLOB)")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	blob := bytes.Repeat([]byte{0xAB}, 8<<10)
	for range n {
		err := s.update(t.Context(), func(ctx context.Context, db bun.IDB) error {
			for range pages / 2 {
				if _, err := db.ExecContext(ctx, "INSERT INTO ckpt_blobs (b) VALUES (?)", blob); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// walFrames is how many frames the WAL file holds: since its last reset
// to empty, the most it ever held (a restarted WAL is written over from
// its beginning, so the file does not shrink).
func walFrames(t *testing.T, s *Store, path string) int64 {
	t.Helper()
	var pageSize int64
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= 32 {
		return 0
	}
	return (fi.Size() - 32) / (pageSize + 24)
}

// No connection checkpoints in its commit: 1,200 pages committed (SQLite's
// own threshold is 1,000) are all in the WAL while the checkpointer waits.
func TestSQLiteCommitsDoNotCheckpoint(t *testing.T) {
	opts := freshSQLite(t)
	opts.CheckpointDelay = time.Hour
	s := open(t, opts)
	var auto int
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil {
		t.Fatal(err)
	}
	if auto != 0 {
		t.Fatalf("wal_autocheckpoint = %d, want 0", auto)
	}
	writePages(t, s, 60, 20)
	if n := walFrames(t, s, opts.SQLitePath); n < 1200 {
		t.Fatalf("the WAL holds %d frames after 1,200 pages were committed: a commit checkpointed", n)
	}
	if n := s.ckpt.runs.Load(); n != 0 {
		t.Fatalf("%d checkpoints before the delay passed", n)
	}
}

// The checkpointer keeps the WAL short: after each checkpoint the next
// commit starts the WAL over, so its file never holds much more than what
// was committed between two checkpoints, here a fifth of what was written.
func TestSQLiteCheckpointsBesideTheWriter(t *testing.T) {
	opts := freshSQLite(t)
	opts.CheckpointDelay = time.Millisecond
	s := open(t, opts)
	const rounds, pages = 5, 300
	for range rounds {
		before := s.ckpt.runs.Load()
		writePages(t, s, pages/20, 20)
		// Wait for the checkpoint these commits asked for (a condition,
		// not a duration: the checkpointer counts its runs).
		deadline := time.Now().Add(30 * time.Second)
		for s.ckpt.runs.Load() == before {
			if time.Now().After(deadline) {
				t.Fatal("no checkpoint within 30s of a commit")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if n := walFrames(t, s, opts.SQLitePath); n > 2*pages+100 {
		t.Fatalf("the WAL holds %d frames after %d rounds of %d pages: it was not started over", n, rounds, pages)
	}
	var rows int
	if err := s.db.QueryRowContext(t.Context(), "SELECT count(*) FROM ckpt_blobs").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := rounds * pages / 2; rows != want {
		t.Fatalf("%d rows, want %d", rows, want)
	}
}

// A checkpoint that ran beside commits is finished by the writer before
// its next batch.
func TestSQLiteWriterFinishesACheckpoint(t *testing.T) {
	opts := freshSQLite(t)
	opts.CheckpointDelay = time.Hour
	s := open(t, opts)
	writePages(t, s, 10, 20)
	dbSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(opts.SQLitePath)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var pageSize int64
	if err := s.db.QueryRowContext(t.Context(), "PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	before := dbSize()
	s.ckpt.finish.Store(true)
	writePages(t, s, 1, 2)
	if s.ckpt.finish.Load() || s.ckpt.finished.Load() != 1 {
		t.Fatalf("finish pending %v, finished %d; want the writer to have finished it once", s.ckpt.finish.Load(), s.ckpt.finished.Load())
	}
	// It copied what was committed: the 200 pages that were only in the
	// WAL are in the database file now.
	if grown := (dbSize() - before) / pageSize; grown < 200 {
		t.Fatalf("the database file grew by %d pages; want the 200 committed ones copied into it", grown)
	}
}

// Close leaves no WAL (SQLite's own checkpoint at close still runs), and
// everything committed is in the database file.
func TestSQLiteCloseLeavesNoWAL(t *testing.T) {
	opts := freshSQLite(t)
	opts.CheckpointDelay = time.Hour
	s, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	writePages(t, s, 20, 20)
	if walFrames(t, s, opts.SQLitePath) == 0 {
		t.Fatal("nothing in the WAL before Close")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(opts.SQLitePath + "-wal"); err == nil && fi.Size() != 0 {
		t.Fatalf("the WAL holds %d bytes after Close", fi.Size())
	}
	s = open(t, opts)
	var rows int
	if err := s.db.QueryRowContext(t.Context(), "SELECT count(*) FROM ckpt_blobs").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 200 {
		t.Fatalf("%d rows after reopening, want 200", rows)
	}
}
