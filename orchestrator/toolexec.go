package orchestrator

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// runTools executes one round's calls and returns their results in call
// order. Read-only tools each run in their own goroutine; tools that change
// things run one after another, in the order the model gave, on one more
// goroutine; the two groups run side by side. runTools returns when every
// call has returned: tools must honour ctx.
func (l *loop) runTools(ctx context.Context, calls []pendingCall) []*ToolResult {
	results := make([]*ToolResult, len(calls))
	var serial []int
	var wg sync.WaitGroup
	for i, c := range calls {
		l.log.emit(EventToolCall, ToolCallData{Round: l.round, CallID: c.call.ID, Name: c.call.Name, Arguments: c.call.Arguments})
		switch {
		case c.preset != nil:
			results[i] = c.preset
			l.reportResult(c, results[i], 0)
		case c.tool == nil:
			results[i] = ErrorResult(c.err)
			l.reportResult(c, results[i], 0)
		case c.tool.Spec().ReadOnly:
			wg.Go(func() { results[i] = l.call(ctx, c) })
		default:
			serial = append(serial, i)
		}
	}
	if len(serial) > 0 {
		wg.Go(func() {
			for _, i := range serial {
				if ctx.Err() != nil {
					results[i] = ErrorResult("cancelled before it started")
					continue
				}
				results[i] = l.call(ctx, calls[i])
			}
		})
	}
	wg.Wait()
	return results
}

// call runs one call; an approved one exactly once.
func (l *loop) call(ctx context.Context, c pendingCall) *ToolResult {
	if c.approval != nil {
		return l.callApproved(ctx, c)
	}
	return l.callTool(ctx, c)
}

// callTool runs one call, turning errors and panics into error results.
func (l *loop) callTool(ctx context.Context, c pendingCall) (res *ToolResult) {
	start := time.Now()
	l.lr.toolStarted(c.call.ID, c.call.Name)
	defer l.lr.toolEnded(c.call.ID, c.call.Name)
	ctx, observed := l.observeToolCall(ctx, c)
	defer func() {
		if p := recover(); p != nil {
			l.o.log.Error("tool panicked", "tool", c.call.Name, "run_id", l.lr.id, "panic", p, "stack", string(debug.Stack()))
			res = ErrorResult(fmt.Sprintf("tool %s failed: internal error", c.call.Name))
		}
		observed(res, ctx.Err() != nil)
		l.reportResult(c, res, since(start))
	}()
	inv := &ToolInvocation{
		UserID: l.lr.userID, SessionID: l.lr.sessionID, RunID: l.lr.id, CallID: c.call.ID,
		Arguments: c.call.Arguments,
		Output: func(stream, delta string) {
			if delta != "" {
				l.log.emit(EventToolOutputDelta, ToolOutputDeltaData{CallID: c.call.ID, Name: c.call.Name, Stream: stream, Delta: delta})
			}
		},
		Metadata:  l.lr.req.Metadata,
		ModelName: l.lr.settings.Name,
		Emit: func(eventType string, data any) {
			switch eventType {
			case EventFinal, EventError: // a tool never ends the run's stream
				return
			case EventArtifact, EventA2UI:
				if !l.lr.keep(eventType, data) {
					l.o.log.Warn("attachment dropped: malformed, or over the run's bound", "run_id", l.lr.id, "type", eventType)
					return
				}
			}
			l.log.emit(eventType, data)
		},
	}
	res, err := c.tool.Call(ctx, inv)
	switch {
	case err != nil && ctx.Err() != nil:
		return ErrorResult("cancelled")
	case err != nil:
		return ErrorResult(err.Error())
	case res == nil:
		return &ToolResult{}
	}
	return res
}

// reportResult emits tool_result and writes the tool log.
func (l *loop) reportResult(c pendingCall, res *ToolResult, ms int64) {
	ev := ToolResultData{Round: l.round, CallID: c.call.ID, Name: c.call.Name, Content: res.Content, IsError: res.IsError, DurationMS: ms}
	if res.Data != nil {
		ev.Data = rawJSON(res.Data)
	}
	l.log.emit(EventToolResult, ev)
	// The tool log is monitoring data: it is written in the background, in
	// batches (toollog.go), so a slow store never slows the loop. Close
	// writes what is left.
	entry := &ToolLog{
		RunID: l.lr.id, SessionID: l.lr.sessionID, UserID: l.lr.userID, CallID: c.call.ID,
		Tool: c.call.Name, Arguments: c.call.Arguments, Result: clip(res.Content, 4000),
		IsError: res.IsError, DurationMS: ms, CreatedAt: l.o.opts.Now(),
		FrontEnd: l.lr.req.Frontend, Via: ViaRun, Outcome: outcomeOf(res.IsError),
	}
	if c.denied {
		entry.Outcome, entry.Reason = OutcomeDenied, clip(res.Content, 1000)
	}
	l.o.RecordToolCall(entry)
}

// outcomeOf is the audit's outcome of a call the policy allowed.
func outcomeOf(isError bool) string {
	if isError {
		return OutcomeError
	}
	return OutcomeAllowed
}
