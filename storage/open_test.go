package storage

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// Every SQLite connection, the writer's and each reader's, opens with the
// pragmas docs and doc.go promise, and the pool holds the readers asked
// for beside the writer's own connection.
func TestSQLiteConnectionSettings(t *testing.T) {
	for _, tc := range []struct {
		conns, want int
	}{{0, 5}, {2, 3}} {
		opts := freshSQLite(t)
		opts.MaxOpenConns = tc.conns
		s := open(t, opts)
		if got := s.db.DB.Stats().MaxOpenConnections; got != tc.want {
			t.Errorf("MaxOpenConns %d: a pool of %d; want %d (readers and the writer)", tc.conns, got, tc.want)
		}
	}
	s, ctx := open(t, freshSQLite(t)), t.Context()
	var conns []*sql.Conn
	for range 3 { // three connections at once: none is the pool's first alone
		c, err := s.db.DB.Conn(ctx)
		must(t, err)
		conns = append(conns, c)
	}
	for i, c := range conns {
		for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "10000",
			"synchronous": "1", "wal_autocheckpoint": "0"} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
				t.Errorf("connection %d: PRAGMA %s = %q (%v); want %q", i, pragma, got, err, want)
			}
		}
		must(t, c.Close())
	}
}

// On PostgreSQL pgx runs the pool's statements in exec mode (bun writes
// values into the SQL text; preparing each would cost a round trip more)
// unless the DSN chose a mode, and the connect timeout applies unless the
// DSN sets its own.
func TestPostgresConnectionSettings(t *testing.T) {
	dsn := freshPostgres(t).PostgresDSN
	for _, tc := range []struct {
		dsn     string
		mode    pgx.QueryExecMode
		timeout time.Duration
	}{
		{dsn, pgx.QueryExecModeExec, 10 * time.Second},
		{dsn + "&default_query_exec_mode=cache_describe&connect_timeout=3", pgx.QueryExecModeCacheDescribe, 3 * time.Second},
	} {
		s := open(t, Options{Backend: BackendPostgres, PostgresDSN: tc.dsn, Logger: quiet})
		if s.pgCfg.DefaultQueryExecMode != tc.mode || s.pgCfg.ConnectTimeout != tc.timeout {
			t.Errorf("%s: mode %v, connect timeout %v; want %v, %v", tc.dsn, s.pgCfg.DefaultQueryExecMode, s.pgCfg.ConnectTimeout, tc.mode, tc.timeout)
		}
		if got := s.db.DB.Stats().MaxOpenConnections; got != 10 {
			t.Errorf("a pool of %d; want the default 10", got)
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Error(err)
		}
	}
}
