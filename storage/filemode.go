package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// The SQLite database holds every user's sessions, runs and tool logs:
// only wunder's own user may read it. Open creates the database's
// directory 0700 and the database file 0600 before SQLite opens it (SQLite
// gives the -wal and -shm files it creates the mode of the database), and
// tightens the files of an existing install: the database, its -wal, -shm
// and .sole files, when wunder's user owns them and others may read them.
// Each change is logged.

// sqliteFileMode is the mode of the database and the files beside it.
const sqliteFileMode fs.FileMode = 0o600

// prepareSQLiteFiles makes path's directory (0700) when missing, creates
// the database file (0600) when missing, and tightens the modes of the
// files of an existing one.
func prepareSQLiteFiles(path string, log *slog.Logger) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("storage: sqlite: create directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, sqliteFileMode)
	if err != nil {
		return fmt.Errorf("storage: sqlite %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + ".sole"} {
		if err := tighten(p, sqliteFileMode, log); err != nil {
			return fmt.Errorf("storage: sqlite %s: %w", path, err)
		}
	}
	return nil
}

// tighten takes every permission but want's away from the file at p when
// the process's user owns it; a missing file, or one owned by another
// user, is left alone.
func tighten(p string, want fs.FileMode, log *slog.Logger) error {
	info, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() || !info.Mode().IsRegular() {
		return nil
	}
	old := info.Mode().Perm()
	if old&^want == 0 {
		return nil
	}
	if err := os.Chmod(p, old&want); err != nil {
		return err
	}
	log.Info("tightened the mode of a database file", "path", p, "from", fmt.Sprintf("%04o", old), "to", fmt.Sprintf("%04o", old&want))
	return nil
}
