package storage

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/uptrace/bun/migrate"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// identityMigration is the version that made ids unique ignoring case.
const identityMigration = "20261206010000"

// migrateBefore applies the embedded migrations older than version, as a
// server of that time had.
func migrateBefore(t *testing.T, s *Store, version string) {
	t.Helper()
	sub, err := fs.Sub(migrationFiles, "migrations/"+s.backend)
	must(t, err)
	older := fstest.MapFS{}
	entries, err := fs.ReadDir(sub, ".")
	must(t, err)
	for _, e := range entries {
		if e.Name() < version {
			b, err := fs.ReadFile(sub, e.Name())
			must(t, err)
			older[e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	ms := migrate.NewMigrations()
	must(t, ms.Discover(older))
	m := migrate.NewMigrator(s.db, ms, migrate.WithMarkAppliedOnSuccess(true))
	must(t, m.Init(t.Context()))
	_, err = m.Migrate(t.Context())
	must(t, err)
}

// A database of accounts created before ids were unique ignoring case,
// some of them equal but for case: after the migration every account
// still logs in under its exact id with its tokens, the oldest of each
// group holds the key, and no new account takes a case variant of any.
func TestIdentityMigrationKeepsCaseDuplicates(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			s := open(t, opts)
			migrateBefore(t, s, identityMigration)
			base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			for i, id := range []string{"Alice", "alice", "ALICE", "bob", "Émile", "émile"} {
				_, err := s.db.ExecContext(t.Context(), `INSERT INTO users (id, password_hash, created_at) VALUES (?, ?, ?)`,
					id, "$argon2id$"+id, base.Add(time.Duration(i)*time.Minute))
				must(t, err)
				_, err = s.db.ExecContext(t.Context(), `INSERT INTO auth_tokens (id, hash, user_id, kind, created_at) VALUES (?, ?, ?, 'session', ?)`,
					"t"+id, "h"+id, id, base)
				must(t, err)
			}
			must(t, s.Migrate(t.Context()))
			must(t, s.Migrate(t.Context())) // again: nothing left to key, nothing changes
			for _, id := range []string{"Alice", "alice", "ALICE", "bob", "Émile", "émile"} {
				u, err := s.GetUser(t.Context(), id)
				if err != nil || u.PasswordHash != "$argon2id$"+id {
					t.Errorf("GetUser(%q) after the migration = %+v, %v; want the account as it was", id, u, err)
				}
				if tok, err := s.TokenByHash(t.Context(), "h"+id); err != nil || tok.UserID != id {
					t.Errorf("%s's token after the migration = %+v, %v", id, tok, err)
				}
			}
			keys := map[string]*string{}
			var rows []userRow
			must(t, s.db.NewSelect().Model(&rows).Scan(t.Context()))
			for _, r := range rows {
				keys[r.ID] = r.IDKey
			}
			for id, want := range map[string]string{"Alice": "alice", "bob": "bob", "Émile": "émile"} {
				if k := keys[id]; k == nil || *k != want {
					t.Errorf("id_key of %q = %v; want %q (the oldest of its group)", id, k, want)
				}
			}
			for _, id := range []string{"alice", "ALICE", "émile"} {
				if keys[id] != nil {
					t.Errorf("id_key of %q = %q; want none (a younger case-duplicate)", id, *keys[id])
				}
			}
			for _, id := range []string{"aLiCe", "BOB", "ÉMILE", "alice"} {
				err := s.CreateUser(t.Context(), &accounts.User{ID: id, Roles: []string{"user"}})
				if !errors.Is(err, orchestrator.ErrConflict) {
					t.Errorf("CreateUser(%q) after the migration = %v; want ErrConflict", id, err)
				}
			}
			must(t, s.CreateUser(t.Context(), &accounts.User{ID: "carol", Roles: []string{"user"}}))
		})
	}
}

// The down migration drops the tombstones with the columns, so the schema
// before it works as it did.
func TestIdentityMigrationDown(t *testing.T) {
	opts := freshSQLite(t)
	opts.AutoMigrate = false
	s := open(t, opts)
	migrateBefore(t, s, identityMigration)
	must(t, s.Migrate(t.Context())) // the identity migration alone, in a group of its own
	must(t, s.CreateUser(t.Context(), &accounts.User{ID: "alice", Roles: []string{"user"}}))
	must(t, s.CreateUser(t.Context(), &accounts.User{ID: "bob", Roles: []string{"user"}}))
	must(t, s.DeleteUser(t.Context(), "bob"))
	m, err := s.migrator()
	must(t, err)
	must(t, m.Init(t.Context()))
	group, err := m.Rollback(t.Context())
	must(t, err)
	if !strings.Contains(group.Migrations.String(), identityMigration) {
		t.Fatalf("rolled back %s; want the identity migration last", group.Migrations)
	}
	var ids []string
	must(t, s.db.NewSelect().Table("users").Column("id").Order("id").Scan(t.Context(), &ids))
	if strings.Join(ids, ",") != "alice" {
		t.Errorf("users after the down migration = %v; want alice alone (bob's tombstone gone)", ids)
	}
}
