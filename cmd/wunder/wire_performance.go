package main

import (
	"context"
	"time"

	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
)

// performance is the admin's performance page's sampler
// (GET /wunder/admin/performance): the core's observer is wrapped so each
// run and tool call that ends is counted, and a ticker closes a point
// every interval.
type performance struct {
	s    *monitor.Sampler
	core *orchestrator.Orchestrator // set by start, before the ticker reads it
	tick *periodic
}

func newPerformance() *performance {
	p := &performance{}
	p.s = monitor.NewSampler(&monitor.SamplerOptions{Gauges: func() (int, int) {
		st := p.core.Stats()
		return st.Active, st.Queued
	}})
	return p
}

// observe returns obs reporting to the sampler too.
func (p *performance) observe(obs orchestrator.Observer) orchestrator.Observer {
	return sampledObserver{Observer: obs, s: p.s}
}

// start samples core's runs every interval until close.
func (p *performance) start(core *orchestrator.Orchestrator) {
	p.core = core
	p.tick = startPeriodic(p.s.Interval(), false, func(context.Context) { p.s.Sample() })
}

func (p *performance) close() { p.tick.close() }

// sampledObserver is an observer that also tells a sampler when a run
// ends (a terminal state; a pause is not an end) and when a tool call
// ends, with how long each took here.
type sampledObserver struct {
	orchestrator.Observer
	s *monitor.Sampler
}

func (o sampledObserver) RunStarted(parent, ctx context.Context, r orchestrator.RunInfo) (context.Context, func(orchestrator.RunEnd)) {
	start := time.Now()
	ctx, end := o.Observer.RunStarted(parent, ctx, r)
	return ctx, func(e orchestrator.RunEnd) {
		end(e)
		if e.State.Terminal() {
			o.s.RunEnded(time.Since(start), e.State == orchestrator.RunFailed)
		}
	}
}

func (o sampledObserver) ToolCall(ctx context.Context, c orchestrator.ToolCallInfo) (context.Context, func(orchestrator.ToolCallEnd)) {
	start := time.Now()
	ctx, end := o.Observer.ToolCall(ctx, c)
	return ctx, func(e orchestrator.ToolCallEnd) {
		end(e)
		o.s.ToolEnded(time.Since(start), e.IsError)
	}
}
