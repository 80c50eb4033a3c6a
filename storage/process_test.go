package storage

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Two Stores on one database stand for two processes: the lock must hold
// across them, and concurrent writers must not fail with SQLITE_BUSY.
func TestCrossProcessLock(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			a, b := open(t, opts), open(t, opts)
			for round := range 10 {
				key := fmt.Sprintf("session:%d", round)
				var errA, errB error
				var wg sync.WaitGroup
				start := make(chan struct{})
				wg.Go(func() { <-start; errA = a.AcquireLock(t.Context(), key, "proc-a", time.Minute) })
				wg.Go(func() { <-start; errB = b.AcquireLock(t.Context(), key, "proc-b", time.Minute) })
				close(start)
				wg.Wait()
				if (errA == nil) == (errB == nil) {
					t.Fatalf("round %d: proc-a: %v, proc-b: %v; want exactly one winner", round, errA, errB)
				}
				for _, err := range []error{errA, errB} {
					if err != nil && !isBusy(err) {
						t.Errorf("round %d: loser got %v; want ErrBusy", round, err)
					}
				}
			}
		})
	}
}

func isBusy(err error) bool { return errors.Is(err, orchestrator.ErrBusy) }

func TestCrossProcessWriters(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			stores := []*Store{open(t, opts), open(t, opts), open(t, opts)}
			ctx := t.Context()
			must(t, stores[0].CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			var wg sync.WaitGroup
			errs := make([]error, len(stores))
			for i, s := range stores {
				run := fmt.Sprintf("r%d", i)
				must(t, s.CreateRun(ctx, &orchestrator.Run{ID: run, SessionID: "s", State: orchestrator.RunRunning}))
				wg.Go(func() {
					for seq := int64(1); seq <= 200 && errs[i] == nil; seq += 4 {
						evs := make([]orchestrator.Event, 4)
						for j := range evs {
							evs[j] = orchestrator.Event{RunID: run, SessionID: "s", Seq: seq + int64(j), Type: "progress"}
						}
						errs[i] = s.AppendEvents(ctx, evs)
						if errs[i] == nil {
							errs[i] = s.AcquireLock(ctx, "user:u#"+run, run, time.Minute)
						}
					}
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
			}
		})
	}
}
