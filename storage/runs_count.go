package storage

import (
	"context"

	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.RunCounter = (*Store)(nil)

// CountRuns implements [orchestrator.RunCounter]: ListRuns' filter as
// SELECT count(*), without the page.
func (s *Store) CountRuns(ctx context.Context, f orchestrator.RunFilter) (int, error) {
	q := whereRuns(s.db.NewSelect().Model((*runRow)(nil)), f)
	n, err := q.Count(ctx)
	if err != nil {
		return 0, dbErr(err, "count runs", "")
	}
	return int(n), nil
}
