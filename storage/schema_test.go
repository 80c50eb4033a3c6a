package storage

import (
	"context"
	"errors"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/uptrace/bun/migrate"

	"github.com/wunder/wunder/orchestrator"
)

// sqliteOnlyMigrations are the versions one dialect has and the other
// does not, with why.
var sqliteOnlyMigrations = map[string]string{
	// SQLite's B-tree splits a full leaf cheaply only at its right end:
	// ascending time indexes and a WITHOUT ROWID lock table. PostgreSQL's
	// indexes were not affected.
	"20261129000100_append_order": "SQLite page splits",
}

// dataMigrations change rows, not the schema, with what they change.
var dataMigrations = map[string]string{
	"20261206030000_waiting_approval": "the state of waiting runs (waiting_migration_test.go)",
}

var migrationFile = regexp.MustCompile(`^(\d{14})_([a-z0-9_]+)\.tx\.(up|down)\.sql$`)

// The two sets of migrations carry the same versions under the same
// names (but for the few listed above), each a transactional up and down
// file: a version applied on one backend means the same schema on the
// other.
func TestMigrationSetsMatch(t *testing.T) {
	sets := map[string]map[string]bool{}
	for _, be := range []string{BackendSQLite, BackendPostgres} {
		entries, err := fs.ReadDir(migrationFiles, "migrations/"+be)
		must(t, err)
		ups, downs := map[string]bool{}, map[string]bool{}
		for _, e := range entries {
			m := migrationFile.FindStringSubmatch(e.Name())
			if m == nil {
				t.Errorf("%s/%s: not <version>_<name>.tx.{up,down}.sql", be, e.Name())
				continue
			}
			map[string]map[string]bool{"up": ups, "down": downs}[m[3]][m[1]+"_"+m[2]] = true
		}
		for v := range ups {
			if !downs[v] {
				t.Errorf("%s: %s has no down migration", be, v)
			}
		}
		for v := range downs {
			if !ups[v] {
				t.Errorf("%s: %s has a down migration and no up", be, v)
			}
		}
		sets[be] = ups
	}
	for v := range sets[BackendSQLite] {
		if !sets[BackendPostgres][v] && sqliteOnlyMigrations[v] == "" {
			t.Errorf("migration %s is SQLite's only", v)
		}
	}
	for v := range sets[BackendPostgres] {
		if !sets[BackendSQLite][v] {
			t.Errorf("migration %s is PostgreSQL's only", v)
		}
	}
}

// columns lists the columns of wunder's tables as "table.column" with
// " not null" when the column refuses NULL (a SQLite primary key counts:
// wunder never stores NULL ids).
func columns(t *testing.T, s *Store) []string {
	t.Helper()
	ctx := t.Context()
	var out []string
	if s.backend == BackendSQLite {
		var tables []string
		must(t, s.db.NewRaw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'bun_%'`).Scan(ctx, &tables))
		for _, table := range tables {
			rows, err := s.db.QueryContext(ctx, `SELECT name, "notnull", pk FROM pragma_table_info(?)`, table)
			must(t, err)
			for rows.Next() {
				var name string
				var notNull, pk int
				must(t, rows.Scan(&name, &notNull, &pk))
				out = append(out, table+"."+name+map[bool]string{true: " not null"}[notNull+pk > 0])
			}
			must(t, rows.Err())
			rows.Close()
		}
	} else {
		rows, err := s.db.QueryContext(ctx, `SELECT table_name, column_name, is_nullable FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name NOT LIKE 'bun_%'`)
		must(t, err)
		for rows.Next() {
			var table, name, nullable string
			must(t, rows.Scan(&table, &name, &nullable))
			out = append(out, table+"."+name+map[bool]string{true: " not null"}[nullable == "NO"])
		}
		must(t, rows.Err())
		rows.Close()
	}
	slices.Sort(out)
	return out
}

// Migrated, both backends have the same tables with the same columns,
// NOT NULL alike: what one stores, the other can.
func TestSchemasMatch(t *testing.T) {
	sqlite := columns(t, open(t, freshSQLite(t)))
	pg := columns(t, open(t, freshPostgres(t)))
	if len(sqlite) < 100 {
		t.Fatalf("%d columns on SQLite; the listing is broken", len(sqlite))
	}
	for _, c := range sqlite {
		if !slices.Contains(pg, c) {
			t.Errorf("SQLite has %s, PostgreSQL does not", c)
		}
	}
	for _, c := range pg {
		if !slices.Contains(sqlite, c) {
			t.Errorf("PostgreSQL has %s, SQLite does not", c)
		}
	}
}

// schemaOfStore is what the migrations made: every column of wunder's
// tables and every index, by name.
func schemaOfStore(t *testing.T, s *Store) []string {
	t.Helper()
	var indexes []string
	q := `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename NOT LIKE 'bun_%'`
	if s.backend == BackendSQLite {
		q = `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name NOT LIKE 'bun_%'`
	}
	must(t, s.db.NewRaw(q).Scan(t.Context(), &indexes))
	for i := range indexes {
		indexes[i] = "index " + indexes[i]
	}
	out := append(columns(t, s), indexes...)
	slices.Sort(out)
	return out
}

// Each down migration undoes its up exactly: applied one at a time, each
// migration changes the schema (but the data migrations above), rolled
// back leaves it as it was before (tables, columns, NOT NULL, indexes),
// and applied again goes on; at the end the store works.
func TestEachMigrationRollsBack(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			s, ctx := open(t, opts), t.Context()
			sub, err := fs.Sub(migrationFiles, "migrations/"+s.backend)
			must(t, err)
			entries, err := fs.ReadDir(sub, ".")
			must(t, err)
			upTo := fstest.MapFS{}
			before := schemaOfStore(t, s)
			for _, e := range entries {
				version, ok := strings.CutSuffix(e.Name(), ".tx.up.sql")
				if !ok {
					continue
				}
				for _, name := range []string{e.Name(), version + ".tx.down.sql"} {
					b, err := fs.ReadFile(sub, name)
					must(t, err)
					upTo[name] = &fstest.MapFile{Data: b}
				}
				ms := migrate.NewMigrations()
				must(t, ms.Discover(upTo))
				m := migrate.NewMigrator(s.db, ms, migrate.WithMarkAppliedOnSuccess(true))
				must(t, m.Init(ctx))
				if g, err := m.Migrate(ctx); err != nil || len(g.Migrations) != 1 {
					t.Fatalf("%s up: %v (%d migrations)", version, err, len(g.Migrations))
				}
				after := schemaOfStore(t, s)
				if slices.Equal(after, before) && dataMigrations[version] == "" {
					t.Errorf("%s changes nothing", version)
				}
				if _, err := m.Rollback(ctx); err != nil {
					t.Fatalf("%s down: %v", version, err)
				}
				if got := schemaOfStore(t, s); !slices.Equal(got, before) {
					t.Errorf("%s down does not undo its up:\n  before %v\n  after down %v", version, diff(before, got), diff(got, before))
				}
				if _, err := m.Migrate(ctx); err != nil {
					t.Fatalf("%s up again: %v", version, err)
				}
				before = after
			}
			must(t, s.Migrate(ctx))
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			if _, err := s.GetSession(ctx, "s"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// diff is what a has and b does not.
func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// Migrate waits while another process holds bun's migration lock, and
// gives up with its context saying so; once the lock is free it
// migrates, and it leaves the lock free behind it.
func TestMigrateWaitsForTheLock(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			s := open(t, opts)
			other, err := open(t, opts).migrator() // another process, migrating
			must(t, err)
			must(t, other.Init(t.Context()))
			must(t, other.Lock(t.Context()))
			// Long enough for Migrate's first queries on a loaded machine
			// (300 ms ran out before it reached the lock once), short
			// enough to wait for.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			err = s.Migrate(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the migration lock") {
				t.Fatalf("Migrate while another holds the lock: %v; want it to wait and give up with its context", err)
			}
			if status, err := s.MigrationStatus(t.Context()); err != nil || !status[0].AppliedAt.IsZero() {
				t.Fatalf("a migration applied while another process held the lock: %+v %v", status[0], err)
			}
			must(t, other.Unlock(t.Context()))
			must(t, s.Migrate(t.Context()))
			n, err := s.db.NewSelect().Table("bun_migration_locks").Count(t.Context())
			if err != nil || n != 0 {
				t.Fatalf("%d migration locks left after Migrate (%v); want none", n, err)
			}
		})
	}
}
