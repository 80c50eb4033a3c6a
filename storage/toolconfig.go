package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// Uploaded tool packages ([toolconfig.FileStore]) and users' tool
// configurations ([toolconfig.Store]).

var (
	_ toolconfig.FileStore = (*Store)(nil)
	_ toolconfig.Store     = (*Store)(nil)
)

type toolFileRow struct {
	bun.BaseModel `bun:"table:tool_files"`

	Owner     string    `bun:"owner,pk"`
	Kind      string    `bun:"kind,pk"`
	Name      string    `bun:"name,pk"`
	Path      string    `bun:"path,pk"`
	Data      []byte    `bun:"data,notnull"`
	Size      int64     `bun:"size,notnull"`
	SHA256    string    `bun:"sha256,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

type userToolConfigRow struct {
	bun.BaseModel `bun:"table:user_tool_configs"`

	UserID    string    `bun:"user_id,pk"`
	Config    string    `bun:"config,notnull"`
	Shares    bool      `bun:"shares,notnull"`
	Revision  int64     `bun:"revision,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

func packageName(owner, kind, name string) string {
	if owner == "" {
		return fmt.Sprintf("%s %q", kind, name)
	}
	return fmt.Sprintf("%s %q of %q", kind, name, owner)
}

// PutToolFiles implements [toolconfig.FileStore].
func (s *Store) PutToolFiles(ctx context.Context, owner, kind, name string, files []toolconfig.File, replace bool) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows := make([]*toolFileRow, 0, len(files))
	paths := make([]string, 0, len(files))
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		data := f.Data
		if data == nil {
			data = []byte{}
		}
		rows = append(rows, &toolFileRow{Owner: owner, Kind: kind, Name: name, Path: f.Path, Data: data,
			Size: int64(len(f.Data)), SHA256: hex.EncodeToString(sum[:]), UpdatedAt: now})
		paths = append(paths, f.Path)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if replace {
				q := tx.NewDelete().Model((*toolFileRow)(nil)).
					Where("owner = ? AND kind = ? AND name = ?", owner, kind, name)
				if len(paths) > 0 {
					q = q.Where("path NOT IN (?)", bun.List(paths))
				}
				if _, err := q.Exec(ctx); err != nil {
					return err
				}
			}
			if len(rows) == 0 {
				return nil
			}
			_, err := tx.NewInsert().Model(&rows).
				On("CONFLICT (owner, kind, name, path) DO UPDATE").
				Set("data = EXCLUDED.data, size = EXCLUDED.size, sha256 = EXCLUDED.sha256, updated_at = EXCLUDED.updated_at").
				Exec(ctx)
			return err
		})
		return dbErr(err, "put tool files", packageName(owner, kind, name))
	})
}

// ListToolFiles implements [toolconfig.FileStore].
func (s *Store) ListToolFiles(ctx context.Context, owner, kind, name string, withData bool) ([]toolconfig.File, error) {
	var rows []toolFileRow
	q := s.db.NewSelect().Model(&rows).Column("owner", "kind", "name", "path", "size", "sha256", "updated_at").
		Where("owner = ? AND kind = ?", owner, kind).OrderExpr("name ASC, path ASC")
	if withData {
		q = q.Column("data")
	}
	if name != "" {
		q = q.Where("name = ?", name)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, dbErr(err, "list tool files", packageName(owner, kind, name))
	}
	out := make([]toolconfig.File, len(rows))
	for i, r := range rows {
		out[i] = toolconfig.File{Owner: r.Owner, Kind: r.Kind, Name: r.Name, Path: r.Path, Size: r.Size,
			SHA256: r.SHA256, UpdatedAt: r.UpdatedAt.UTC()}
		if withData {
			out[i].Data = r.Data
		}
	}
	return out, nil
}

// DeleteToolFiles implements [toolconfig.FileStore].
func (s *Store) DeleteToolFiles(ctx context.Context, owner, kind, name string, paths ...string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		q := db.NewDelete().Model((*toolFileRow)(nil)).Where("owner = ? AND kind = ? AND name = ?", owner, kind, name)
		if len(paths) > 0 {
			q = q.Where("path IN (?)", bun.List(paths))
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return dbErr(err, "delete tool files", packageName(owner, kind, name))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %s has no such files", orchestrator.ErrNotFound, packageName(owner, kind, name))
		}
		return nil
	})
}

// GetUserToolConfig implements [toolconfig.Store].
func (s *Store) GetUserToolConfig(ctx context.Context, userID string) (*toolconfig.UserConfig, error) {
	row := new(userToolConfigRow)
	if err := s.db.NewSelect().Model(row).Where("user_id = ?", userID).Scan(ctx); err != nil {
		return nil, dbErr(err, "get user tool config", fmt.Sprintf("tool configuration of %q", userID))
	}
	return fromToolConfigRow(row)
}

// PutUserToolConfig implements [toolconfig.Store].
func (s *Store) PutUserToolConfig(ctx context.Context, c *toolconfig.UserConfig) error {
	next := *c
	next.Revision = c.Revision + 1
	next.UpdatedAt = time.Now().UTC().Truncate(time.Microsecond)
	b, err := json.Marshal(&next)
	if err != nil {
		return fmt.Errorf("%w: tool configuration: %v", orchestrator.ErrInvalidArgument, err)
	}
	row := &userToolConfigRow{UserID: c.UserID, Config: string(b), Shares: next.Shares(), Revision: next.Revision, UpdatedAt: next.UpdatedAt}
	what := fmt.Sprintf("tool configuration of %q", c.UserID)
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		var err error
		var res interface{ RowsAffected() (int64, error) }
		if c.Revision == 0 {
			res, err = db.NewInsert().Model(row).On("CONFLICT (user_id) DO NOTHING").Exec(ctx)
		} else {
			res, err = db.NewUpdate().Model(row).Column("config", "shares", "revision", "updated_at").
				Where("user_id = ? AND revision = ?", c.UserID, c.Revision).Exec(ctx)
		}
		if err != nil {
			return dbErr(err, "put user tool config", what)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: %s changed since revision %d", orchestrator.ErrConflict, what, c.Revision)
		}
		c.Revision, c.UpdatedAt = next.Revision, next.UpdatedAt
		return nil
	})
}

// ListSharedToolConfigs implements [toolconfig.Store].
func (s *Store) ListSharedToolConfigs(ctx context.Context) ([]*toolconfig.UserConfig, error) {
	var rows []userToolConfigRow
	if err := s.db.NewSelect().Model(&rows).Where("shares = ?", true).OrderExpr("user_id ASC").Scan(ctx); err != nil {
		return nil, dbErr(err, "list shared tool configs", "shared tool configurations")
	}
	out := make([]*toolconfig.UserConfig, 0, len(rows))
	for i := range rows {
		c, err := fromToolConfigRow(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func fromToolConfigRow(r *userToolConfigRow) (*toolconfig.UserConfig, error) {
	c := new(toolconfig.UserConfig)
	if err := json.Unmarshal([]byte(r.Config), c); err != nil {
		return nil, fmt.Errorf("tool configuration of %q is corrupt: %w", r.UserID, err)
	}
	c.UserID, c.Revision, c.UpdatedAt = r.UserID, r.Revision, r.UpdatedAt.UTC()
	return c, nil
}
