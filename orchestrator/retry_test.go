package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// RetryStore retries what another try may change, reports each retried
// failure, and stops at once on what no retry can change.
func TestRetryStore(t *testing.T) {
	transient := errors.New("connection reset")
	cases := []struct {
		name      string
		errs      []error // the op's answers in turn; past the end, nil
		wantErr   error
		wantTries int
		wantSaid  []int // the attempts reported
	}{
		{"succeeds at once", nil, nil, 1, nil},
		{"succeeds on the third try", []error{transient, transient}, nil, 3, []int{1, 2}},
		{"invalid argument", []error{fmt.Errorf("%w: bad", orchestrator.ErrInvalidArgument)}, orchestrator.ErrInvalidArgument, 1, nil},
		{"not found", []error{fmt.Errorf("%w: run", orchestrator.ErrNotFound)}, orchestrator.ErrNotFound, 1, nil},
		{"conflict", []error{orchestrator.ErrConflict}, orchestrator.ErrConflict, 1, nil},
		{"busy", []error{orchestrator.ErrBusy}, orchestrator.ErrBusy, 1, nil},
		{"cancelled", []error{context.Canceled}, context.Canceled, 1, nil},
		{"transient then permanent", []error{transient, orchestrator.ErrConflict}, orchestrator.ErrConflict, 2, []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			var said []int
			err := orchestrator.RetryStore(t.Context(), time.Minute, func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("a try has no deadline of its own")
				}
				tries++
				if tries <= len(c.errs) {
					return c.errs[tries-1]
				}
				return nil
			}, func(attempt int, err error) {
				if !errors.Is(err, transient) {
					t.Errorf("reported %v; only transient failures are retried", err)
				}
				said = append(said, attempt)
			})
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("RetryStore = %v; want %v", err, c.wantErr)
			}
			if tries != c.wantTries || !slices.Equal(said, c.wantSaid) {
				t.Fatalf("%d tries, reported %v; want %d, %v", tries, said, c.wantTries, c.wantSaid)
			}
		})
	}
}

// A budget spent, or the caller gone, ends the retries with the last
// failure; a nil report is allowed.
func TestRetryStoreGivesUp(t *testing.T) {
	transient := errors.New("database is restarting")
	tries := 0
	err := orchestrator.RetryStore(t.Context(), 0, func(context.Context) error { tries++; return transient }, nil)
	if !errors.Is(err, transient) || tries != 1 {
		t.Fatalf("no budget: %v after %d tries; want the failure after one", err, tries)
	}

	ctx, cancel := context.WithCancel(t.Context())
	tries = 0
	err = orchestrator.RetryStore(ctx, time.Hour, func(context.Context) error {
		tries++
		if tries == 2 {
			cancel() // the caller goes while the store is away
		}
		return transient
	}, nil)
	if !errors.Is(err, transient) || tries != 2 {
		t.Fatalf("caller gone: %v after %d tries; want the failure after two", err, tries)
	}

	// A caller already gone before the first backoff is not kept waiting.
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	tries = 0
	err = orchestrator.RetryStore(ctx, time.Hour, func(ctx context.Context) error {
		tries++
		return ctx.Err()
	}, nil)
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Fatalf("cancelled ctx: %v after %d tries", err, tries)
	}
}
