package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// keyUsers gives each account without an id_key its key, after the
// migrations ran: the migration that added the column cannot compute it,
// as the key is orchestrator.FoldUserID, a Go function (SQL's lower()
// folds ASCII only in SQLite and follows the database's locale in
// PostgreSQL). It finds nothing to do but on the first start after that
// migration, and after a process of an older wunder added accounts.
//
// Accounts are keyed oldest first. One whose key another account holds
// (ids that were created before the index and differ only in case) keeps
// no key and keeps working under its exact id; the one holding the key
// keeps any new account from taking a case variant of either. Those are
// logged on every start until an admin deletes or renames them.
func (s *Store) keyUsers(ctx context.Context) error {
	var rows []userRow
	err := s.db.NewSelect().Model(&rows).Column("id").Where("id_key IS NULL").OrderExpr("created_at ASC, id ASC").Scan(ctx)
	if err != nil {
		return fmt.Errorf("storage: key user ids: %w", err)
	}
	var unkeyed []string
	for _, r := range rows {
		key := orchestrator.FoldUserID(r.ID)
		var n int64
		err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
			res, err := db.NewUpdate().Model((*userRow)(nil)).Set("id_key = ?", key).
				Where("id = ?", r.ID).Where("id_key IS NULL").
				Where("NOT EXISTS (SELECT 1 FROM users AS holder WHERE holder.id_key = ?)", key).Exec(ctx)
			if err == nil {
				n, err = res.RowsAffected()
			}
			return err
		})
		switch {
		case constraintOf(err) == uniqueViolation: // a new account took the key meanwhile
			unkeyed = append(unkeyed, r.ID)
		case err != nil:
			return fmt.Errorf("storage: key user id %q: %w", r.ID, err)
		case n == 0:
			unkeyed = append(unkeyed, r.ID)
		}
	}
	if len(unkeyed) > 0 {
		s.log.Warn("storage: accounts whose ids differ from an older account's only in case keep working under their exact ids; "+
			"no new account can take a case variant of them. Delete or recreate them to make ids unique ignoring case",
			"user_ids", unkeyed)
	}
	return nil
}
