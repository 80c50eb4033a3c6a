package orchestrator

import (
	"context"
	"errors"
	"time"
)

// retry calls op until it succeeds, fails in a way another try cannot
// change (a bad argument, a missing or conflicting object, a cancelled
// ctx), or Options.StoreRetry has passed, backing off from 50ms to 1s
// between tries. Store writes of a run go through it, so a store that is
// briefly away (a PostgreSQL restart) costs a delay, not a run.
func (o *Orchestrator) retry(ctx context.Context, what string, op func(context.Context) error) error {
	return retryFor(ctx, o.opts.StoreRetry, op, func(attempt int, err error) {
		o.log.Warn("store write failed; retrying", "op", what, "attempt", attempt, "err", err)
	})
}

// RetryStore is the core's retry of store writes with its budget and
// report given: op is called until it succeeds, fails in a way another
// try cannot change (ErrInvalidArgument, ErrNotFound, ErrConflict,
// ErrBusy, a cancelled ctx) or budget has passed, backing off from 50ms
// to 1s; report, when not nil, is told of each failure retried. Each try
// gets at most 10s. Package memory's writes go through it too.
func RetryStore(ctx context.Context, budget time.Duration, op func(context.Context) error, report func(attempt int, err error)) error {
	return retryFor(ctx, budget, op, report)
}

// retryFor is [RetryStore].
func retryFor(ctx context.Context, budget time.Duration, op func(context.Context) error, report func(attempt int, err error)) error {
	deadline := time.Now().Add(budget)
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := op(actx)
		cancel()
		if err == nil || permanent(err) || ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return err
		}
		if report != nil {
			report(attempt, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, time.Second)
	}
}

// permanent reports whether err is one no retry can change.
func permanent(err error) bool {
	for _, target := range []error{ErrInvalidArgument, ErrNotFound, ErrConflict, ErrBusy, context.Canceled} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
