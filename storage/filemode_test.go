package storage

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// TestSQLiteFilesArePrivate: a new database, its directory, its WAL and
// shared-memory files are wunder's user's alone.
func TestSQLiteFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "wunder.db")
	s := open(t, Options{SQLitePath: path, Logger: quiet, AutoMigrate: true, Sole: true})
	must(t, s.CreateSession(t.Context(), &orchestrator.Session{ID: "s", UserID: "u"}))
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("the database's directory is %04o, want 0700", m)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".sole"} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s is %04o, want 0600", filepath.Base(p), m)
		}
	}
}

// TestSQLiteFilesAreTightened: an install whose database files others may
// read (made 0644 by an older wunder) gets them 0600 at the next start,
// and the change is logged.
func TestSQLiteFilesAreTightened(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wunder.db")
	s := open(t, Options{SQLitePath: path, Logger: quiet, AutoMigrate: true})
	must(t, s.CreateSession(t.Context(), &orchestrator.Session{ID: "s", UserID: "u"}))
	s.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); err != nil {
			must(t, os.WriteFile(p, nil, 0o644)) // closed cleanly: make one, as a crash leaves it
		}
		must(t, os.Chmod(p, 0o644))
	}
	var logged bytes.Buffer
	s = open(t, Options{SQLitePath: path, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if _, err := s.GetSession(t.Context(), "s"); err != nil {
		t.Fatalf("the database is not readable after tightening: %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if m := mode(t, p); m != 0o600 {
			t.Errorf("%s is %04o after a start, want 0600", filepath.Base(p), m)
		}
		if !strings.Contains(logged.String(), "path="+p+" from=0644 to=0600") {
			t.Errorf("the change of %s is not logged:\n%s", filepath.Base(p), logged.String())
		}
	}
}
