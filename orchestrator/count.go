package orchestrator

import (
	"context"
	"fmt"
)

// RunCounter is an optional [Store] method: a store that can count the runs
// a filter selects implements it. It is separate from Store so that stores
// written before it keep compiling.
type RunCounter interface {
	// CountRuns returns how many runs f selects, ignoring f.Page.
	CountRuns(ctx context.Context, f RunFilter) (int, error)
}

// CountRuns counts the runs f selects (f.Page is ignored), by the stored
// state, as ListRuns filters them. It wraps ErrUnavailable when the store
// cannot count (it does not implement [RunCounter]).
func (o *Orchestrator) CountRuns(ctx context.Context, f RunFilter) (int, error) {
	c, ok := o.store.(RunCounter)
	if !ok {
		return 0, fmt.Errorf("%w: the store does not count runs", ErrUnavailable)
	}
	return c.CountRuns(ctx, f)
}
