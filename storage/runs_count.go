package storage

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.RunCounter = (*Store)(nil)

// CountRuns implements [orchestrator.RunCounter]: ListRuns' filter as
// SELECT count(*), without the page.
func (s *Store) CountRuns(ctx context.Context, f orchestrator.RunFilter) (int, error) {
	q := s.db.NewSelect().Model((*runRow)(nil))
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.SessionID != "" {
		q = q.Where("session_id = ?", f.SessionID)
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, st := range f.States {
			states[i] = string(st)
		}
		q = q.Where("state IN (?)", bun.In(states))
	}
	n, err := q.Count(ctx)
	if err != nil {
		return 0, dbErr(err, "count runs", "")
	}
	return int(n), nil
}
