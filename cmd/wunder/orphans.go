package main

import (
	"context"
	"log/slog"
	"time"
)

// orphans ends the evaluations and load tests that a stopped server left
// running in the store (evaluation.Manager.Recover, loadtest.Manager.Recover),
// as the orchestrator's reaper ends its runs: once at start, before the
// server serves, then every concurrency.lock_ttl_s / 3, which is how soon
// a replica that died is taken for dead.
type orphans struct {
	sweeps []orphanSweep
	log    *slog.Logger
	loop   *periodic
}

// orphanSweep is one kind of work to recover: what it is called in logs,
// and its Recover.
type orphanSweep struct {
	what    string
	recover func(ctx context.Context) (int, error)
}

// startOrphans sweeps once, then every every until close.
func startOrphans(ctx context.Context, every time.Duration, log *slog.Logger, sweeps ...orphanSweep) *orphans {
	o := &orphans{sweeps: sweeps, log: log}
	o.sweep(ctx)
	o.loop = startPeriodic(every, false, o.sweep)
	return o
}

func (o *orphans) sweep(ctx context.Context) {
	for _, s := range o.sweeps {
		n, err := s.recover(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			o.log.Warn("orphaned "+s.what+" not recovered", "err", err)
		case n > 0:
			o.log.Info("ended "+s.what+" a stopped server left running", "count", n)
		}
	}
}

func (o *orphans) close() {
	if o != nil {
		o.loop.close()
	}
}
