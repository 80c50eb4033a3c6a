package storage

import (
	"sync"
	"testing"
)

func TestMigrateIdempotent(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			s := open(t, opts)
			must(t, s.Migrate(t.Context()))
			must(t, s.Migrate(t.Context()))
			// A second Open with AutoMigrate finds nothing to do.
			open(t, opts)
			status, err := s.MigrationStatus(t.Context())
			must(t, err)
			if len(status) == 0 {
				t.Fatal("MigrationStatus lists no migrations")
			}
			for _, m := range status {
				if m.AppliedAt.IsZero() {
					t.Errorf("migration %s_%s pending after Migrate", m.Name, m.Comment)
				}
			}
			n, err := s.db.NewSelect().Table("bun_migrations").Count(t.Context())
			must(t, err)
			if int(n) != len(status) {
				t.Errorf("bun_migrations has %d rows; want %d (each migration once)", n, len(status))
			}
		})
	}
}

func TestMigrationStatusPending(t *testing.T) {
	opts := freshSQLite(t)
	opts.AutoMigrate = false
	s := open(t, opts)
	status, err := s.MigrationStatus(t.Context())
	must(t, err)
	for _, m := range status {
		if !m.AppliedAt.IsZero() {
			t.Errorf("migration %s applied on a database never migrated", m.Name)
		}
	}
	if len(status) == 0 || status[0].Comment != "init" {
		t.Errorf("MigrationStatus = %+v; want the init migration first", status)
	}
}

// Replicas starting together: every one migrates without error, once.
func TestMigrateConcurrentProcesses(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			const n = 4
			stores := make([]*Store, n)
			for i := range stores {
				stores[i] = open(t, opts)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, s := range stores {
				wg.Go(func() { errs[i] = s.Migrate(t.Context()) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("Migrate in process %d: %v", i, err)
				}
			}
			status, err := stores[0].MigrationStatus(t.Context())
			must(t, err)
			n2, err := stores[0].db.NewSelect().Table("bun_migrations").Count(t.Context())
			must(t, err)
			if int(n2) != len(status) {
				t.Errorf("bun_migrations has %d rows; want %d", n2, len(status))
			}
		})
	}
}
