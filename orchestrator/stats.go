package orchestrator

import "context"

// What the core shows of its own state to those who watch it: package
// monitor (the admin's monitor) and the telemetry's gauges. The
// aggregation is theirs; the core answers with what only it knows.

// Stats are the orchestrator's admission counters.
type Stats struct {
	// Active runs hold an execution slot; Queued wait for one.
	Active        int `json:"active"`
	Queued        int `json:"queued"`
	MaxActiveRuns int `json:"max_active_runs"`
	QueueSize     int `json:"queue_size"`
}

// Stats returns this process's admission counters.
func (o *Orchestrator) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return Stats{Active: o.active, Queued: len(o.queue), MaxActiveRuns: o.opts.MaxActiveRuns, QueueSize: o.opts.QueueSize}
}

// CurrentTool is the tool a run executing in this process is calling now
// ("" between calls, or when the run is not executing here); with
// parallel calls, the one started last.
func (o *Orchestrator) CurrentTool(runID string) string {
	if lr := o.liveRun(runID); lr != nil {
		return lr.currentTool()
	}
	return ""
}

// ToolCallStats returns the tool calls f selects, newest first, as
// [Store.ToolCallStats] does, the calls of runs that just ended included:
// their logs, which may still wait for their batch (toollog.go), are
// stored first.
func (o *Orchestrator) ToolCallStats(ctx context.Context, f ToolLogFilter) ([]ToolCallStat, error) {
	if err := o.toolLogs.flush(ctx); err != nil {
		return nil, err
	}
	return o.store.ToolCallStats(ctx, f)
}
