package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	file := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(file, nil, 0o600))
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"unknown backend", Options{Backend: "mysql"}, `unknown backend "mysql"`},
		{"empty postgres dsn", Options{Backend: BackendPostgres}, "empty DSN"},
		{"malformed postgres dsn", Options{Backend: BackendPostgres, PostgresDSN: "postgres://u:secret@host:notaport/db"}, "invalid DSN"},
		{"unreachable postgres", Options{Backend: BackendPostgres, PostgresDSN: "postgres://u:secret@127.0.0.1:1/db?sslmode=disable", ConnectTimeout: 2 * time.Second}, "connect postgres 127.0.0.1:1/db"},
		{"sqlite under a file", Options{SQLitePath: filepath.Join(file, "wunder.db")}, "create directory"},
		{"sqlite memory", Options{SQLitePath: ":memory:"}, ":memory: is not supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			s, err := Open(ctx, c.opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "storage: ") {
				t.Errorf("Open error = %q; want it to start with \"storage: \" and contain %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("Open error %q leaks the password", err)
			}
		})
	}
}

// A path with characters that mean something in a URI still names a file.
func TestOpenSQLiteOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag", "100% wunder.db")
	opts := Options{SQLitePath: path, Logger: quiet, AutoMigrate: true}
	s := open(t, opts)
	must(t, s.CreateSession(t.Context(), &orchestrator.Session{ID: "s", UserID: "u"}))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at %q: %v", path, err)
	}
}

// Options.Sole: the first Store to ask holds a SQLite database alone until
// it closes; another that asks meanwhile shares it, and one that does not
// ask never holds it.
func TestSole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	first, err := Open(t.Context(), Options{SQLitePath: path, AutoMigrate: true, Sole: true})
	if err != nil {
		t.Fatal(err)
	}
	second := open(t, Options{SQLitePath: path, Sole: true})
	plain := open(t, Options{SQLitePath: path})
	if !first.Sole() || second.Sole() || plain.Sole() {
		t.Fatalf("Sole() = %v, %v, %v; want the first alone", first.Sole(), second.Sole(), plain.Sole())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if third := open(t, Options{SQLitePath: path, Sole: true}); !third.Sole() {
		t.Fatal("a Store opened after the holder closed does not hold the database")
	}
	if dsn := os.Getenv("WUNDER_TEST_POSTGRES_DSN"); dsn != "" {
		if pg := open(t, Options{Backend: BackendPostgres, PostgresDSN: dsn, Sole: true}); pg.Sole() {
			t.Fatal("a PostgreSQL store reports it holds its database alone")
		}
	}
}
