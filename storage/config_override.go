package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// configOverrideRow is the config_override row: the configuration sections
// the admin API changed, as one JSON object (section key -> value), with a
// revision that every change moves by one. Replicas sharing a PostgreSQL
// database read it at start and poll its revision.
type configOverrideRow struct {
	bun.BaseModel `bun:"table:config_override"`

	ID        int       `bun:"id,pk"`
	Revision  int64     `bun:"revision,notnull"`
	Sections  string    `bun:"sections,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// ConfigOverride returns the stored sections and their revision; nil and 0
// when no change was ever stored.
func (s *Store) ConfigOverride(ctx context.Context) (json.RawMessage, int64, error) {
	row := new(configOverrideRow)
	err := s.db.NewSelect().Model(row).Where("id = 1").Scan(ctx)
	if err != nil {
		if err = dbErr(err, "read the configuration override", "configuration override"); errors.Is(err, orchestrator.ErrNotFound) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	return json.RawMessage(row.Sections), row.Revision, nil
}

// ConfigRevision is the stored override's revision (0 when there is none):
// the cheap read a replica polls.
func (s *Store) ConfigRevision(ctx context.Context) (int64, error) {
	var rev int64
	err := s.db.NewSelect().Model((*configOverrideRow)(nil)).Column("revision").Where("id = 1").Scan(ctx, &rev)
	if err != nil {
		if err = dbErr(err, "read the configuration revision", "configuration override"); errors.Is(err, orchestrator.ErrNotFound) {
			return 0, nil
		}
		return 0, err
	}
	return rev, nil
}

// SaveConfigOverride stores sections as revision expect+1, provided the
// stored revision is still expect (0 = none stored yet); otherwise it
// changes nothing and returns an error wrapping orchestrator.ErrConflict.
func (s *Store) SaveConfigOverride(ctx context.Context, sections json.RawMessage, expect int64) (int64, error) {
	now := time.Now().UTC()
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if expect == 0 {
			res, err = db.NewInsert().Model(&configOverrideRow{ID: 1, Revision: 1, Sections: string(sections), UpdatedAt: now}).
				On("CONFLICT (id) DO NOTHING").Exec(ctx)
		} else {
			res, err = db.NewUpdate().Model((*configOverrideRow)(nil)).
				Set("revision = revision + 1").Set("sections = ?", string(sections)).Set("updated_at = ?", now).
				Where("id = 1 AND revision = ?", expect).Exec(ctx)
		}
		if err != nil {
			return dbErr(err, "save the configuration override", "configuration override")
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: the configuration override is no longer at revision %d", orchestrator.ErrConflict, expect)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return expect + 1, nil
}
