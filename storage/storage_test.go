package storage

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/mcpsession/mcpsessiontest"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/memory/memorytest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

// The PostgreSQL tests run when WUNDER_TEST_POSTGRES_DSN names a server
// where the user may create schemas, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable. Each store gets a
// fresh schema (search_path in the DSN), dropped when the test ends. CI sets
// WUNDER_REQUIRE_POSTGRES=1 so a missing DSN fails instead of skipping.
const (
	envPostgresDSN     = "WUNDER_TEST_POSTGRES_DSN"
	envRequirePostgres = "WUNDER_REQUIRE_POSTGRES"
)

// backend makes Options for a fresh, empty database of one kind; opening
// the same Options twice gives two Stores (two "processes") on one database.
type backend struct {
	name  string
	fresh func(t testing.TB) Options
}

func backends() []backend {
	return []backend{{BackendSQLite, freshSQLite}, {BackendPostgres, freshPostgres}}
}

var quiet = slog.New(slog.DiscardHandler)

func freshSQLite(t testing.TB) Options {
	return Options{Backend: BackendSQLite, SQLitePath: filepath.Join(t.TempDir(), "db", "wunder.db"), Logger: quiet, AutoMigrate: true}
}

func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(envPostgresDSN)
	if dsn == "" {
		if os.Getenv(envRequirePostgres) == "1" {
			t.Fatalf("%s=1 but %s is not set: PostgreSQL store tests cannot run", envRequirePostgres, envPostgresDSN)
		}
		t.Skipf("!!! %s not set: PostgreSQL store tests SKIPPED !!!", envPostgresDSN)
	}
	return dsn
}

// freshPostgres creates a schema with a random name, returns Options whose
// DSN selects it, and drops it when the test ends (after the stores close,
// which the tests register later).
func freshPostgres(t testing.TB) Options {
	t.Helper()
	base := postgresDSN(t)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "wunder_test_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("open %s: %v", envPostgresDSN, err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return Options{Backend: BackendPostgres, PostgresDSN: withSearchPath(base, schema), Logger: quiet, AutoMigrate: true}
}

// withSearchPath adds a search_path runtime parameter to a URL or key=value
// DSN.
func withSearchPath(dsn, schema string) string {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	if strings.Contains(dsn, "?") {
		return dsn + "&search_path=" + schema
	}
	return dsn + "?search_path=" + schema
}

// open opens opts and closes the store when the test ends.
func open(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", opts.Backend, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// The shared store suite, on each backend.
func TestStore(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			if be.name == BackendPostgres {
				postgresDSN(t) // skips once here, not in every case of the suite
			}
			orchestratortest.RunStoreTests(t, func(t *testing.T) orchestrator.Store {
				s, err := Open(t.Context(), be.fresh(t))
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				return s
			})
		})
	}
}

func TestAccountStoreSuite(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			if be.name == BackendPostgres {
				postgresDSN(t)
			}
			accountstest.RunStoreTests(t, func(t *testing.T) accounts.Store {
				return open(t, be.fresh(t))
			})
		})
	}
}

func TestMCPSessionStoreSuite(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			if be.name == BackendPostgres {
				postgresDSN(t)
			}
			mcpsessiontest.RunStoreTests(t, func(t *testing.T) mcpsession.Store {
				return open(t, be.fresh(t))
			})
		})
	}
}

func TestToolFileStoreSuite(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			if be.name == BackendPostgres {
				postgresDSN(t)
			}
			toolconfigtest.RunStoreTests(t, func(t *testing.T) toolconfigtest.Stores {
				return open(t, be.fresh(t))
			})
		})
	}
}

// The Store interface cannot read tool logs back; check DeleteSession's
// cascade to them (and to push configs) in the tables.
func TestDeleteSessionRemovesToolLogsAndPushConfigs(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			for _, id := range []string{"s1", "s2"} {
				must(t, s.CreateSession(ctx, &orchestrator.Session{ID: id, UserID: "u"}))
				must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r-" + id, SessionID: id, State: orchestrator.RunRunning}))
				must(t, s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: "r-" + id, SessionID: id, Tool: "t"}))
				_, err := s.db.ExecContext(ctx, `INSERT INTO push_configs (id, run_id, user_id, url, created_at) VALUES (?, ?, 'u', 'https://x', ?)`,
					"p-"+id, "r-"+id, stamp(time.Time{}))
				must(t, err)
			}
			must(t, s.DeleteSession(ctx, "s1"))
			for table, want := range map[string]int{"tool_logs": 1, "push_configs": 1, "runs": 1, "sessions": 1} {
				n, err := s.db.NewSelect().Table(table).Count(ctx)
				must(t, err)
				if int(n) != want {
					t.Errorf("%s has %d rows after DeleteSession; want %d", table, n, want)
				}
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMemoryStoreSuite(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			if be.name == BackendPostgres {
				postgresDSN(t)
			}
			memorytest.RunStoreTests(t, func(t *testing.T) memory.Store {
				return open(t, be.fresh(t))
			})
		})
	}
}

// AppendToolLogs stores a batch in statements of maxPreparedRows rows at
// most; a nil log refuses the batch whole.
func TestAppendToolLogs(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			s, ctx := open(t, be.fresh(t)), t.Context()
			logs := make([]*orchestrator.ToolLog, 2*maxPreparedRows+3)
			for i := range logs {
				logs[i] = &orchestrator.ToolLog{RunID: "r", UserID: "batch", Tool: fmt.Sprintf("t%d", i%3), Arguments: json.RawMessage(`{"i":1}`), DurationMS: int64(i)}
			}
			must(t, s.AppendToolLogs(ctx, logs))
			if logs[0].CreatedAt.IsZero() {
				t.Error("AppendToolLogs left CreatedAt zero; want now")
			}
			stats, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{UserID: "batch"})
			if err != nil || len(stats) != len(logs) {
				t.Fatalf("ToolCallStats = %d calls, %v; want %d", len(stats), err, len(logs))
			}
			if err := s.AppendToolLogs(ctx, []*orchestrator.ToolLog{{UserID: "refused", Tool: "t"}, nil}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("a batch with a nil log: %v; want ErrInvalidArgument", err)
			}
			if stats, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{UserID: "refused"}); err != nil || len(stats) != 0 {
				t.Fatalf("the refused batch stored %d calls (%v)", len(stats), err)
			}
			must(t, s.AppendToolLogs(ctx, nil))
		})
	}
}
