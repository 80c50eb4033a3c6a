package storage

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/wunder/wunder/internal/fsperm"
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
		if err := fsperm.Tighten(p, sqliteFileMode, true, "a database file", log); err != nil {
			return fmt.Errorf("storage: sqlite %s: %w", path, err)
		}
	}
	return nil
}
