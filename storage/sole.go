package storage

import (
	"errors"
	"os"
)

// A SQLite database may be opened by several processes (the server, and
// `wunder mcp stdio` launched by a desktop client beside it), but only one
// of them may keep locks in memory rather than in the database
// (orchestrator.Options.OneProcess). Options.Sole asks for that: Open
// tries to take an exclusive advisory lock on a file beside the database
// (<db>.sole), held until Close; the first process to ask holds it, and
// the others know they share the database. The kernel releases the lock
// when its process dies, so a crash leaves nothing to clean up.

// errSoleHeld is holdSole's when another process holds the lock.
var errSoleHeld = errors.New("held by another process")

// Sole reports whether this Store holds its SQLite database alone (see
// Options.Sole): no other process that asked holds it, and every process
// that runs wunder's orchestrator asks. Always false on PostgreSQL.
func (s *Store) Sole() bool { return s.sole != nil }

// takeSole takes the sole lock of the SQLite database at path, or reports
// why not; a missing lock is no error of Open's.
func (s *Store) takeSole(path string) {
	f, err := os.OpenFile(path+".sole", os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		if err = holdSole(f); err != nil {
			_ = f.Close()
		}
	}
	switch {
	case err == nil:
		s.sole = f
	case errors.Is(err, errSoleHeld):
		s.log.Info("another process uses this SQLite database: locks stay in the database", "path", path)
	default:
		s.log.Warn("SQLite database not held alone: locks stay in the database", "path", path, "err", err)
	}
}

// dropSole releases the sole lock, if held.
func (s *Store) dropSole() {
	if s.sole != nil {
		_ = s.sole.Close() // closing the file releases its lock
		s.sole = nil
	}
}
