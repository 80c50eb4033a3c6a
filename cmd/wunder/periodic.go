package main

import (
	"context"
	"time"
)

// periodic is a goroutine that calls a function on a ticker until close:
// the server's background passes (the janitor, the orphan sweep, the poll
// of another replica's configuration) share it.
type periodic struct {
	stop context.CancelFunc
	done chan struct{}
}

// startPeriodic calls fn every d in a goroutine of its own, first at once
// when now is set. fn's context ends with close.
func startPeriodic(d time.Duration, now bool, fn func(context.Context)) *periodic {
	ctx, stop := context.WithCancel(context.Background())
	p := &periodic{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(d)
		defer t.Stop()
		if now {
			fn(ctx)
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fn(ctx)
			}
		}
	}()
	return p
}

// close stops the calls and waits for one under way; a nil periodic (one
// never started) has nothing to stop.
func (p *periodic) close() {
	if p != nil {
		p.stop()
		<-p.done
	}
}
