package orchestrator

import (
	"context"
	"sync"
	"time"
)

// Observer is told what runs, model calls and tool calls do, for metrics
// and traces (internal/telemetry implements it; cmd/wunder wires it). The
// core stays free of any telemetry library: it only calls these methods.
//
// Each Start method returns the context the observed work continues with
// (it may carry a span; derive it from ctx, never replace ctx's
// cancellation) and a func the core calls exactly once when that work
// ends. Methods are called on the run's goroutines, concurrently for
// parallel tool calls; they must be cheap and must not block.
type Observer interface {
	// RunStarted is called when a run is admitted on this instance (and
	// again when a run resumes after its approvals were decided or its
	// process died). parent is the context of the request that started or
	// resumed it, for its values only (a trace to continue); ctx is the
	// run's own context.
	RunStarted(parent, ctx context.Context, r RunInfo) (context.Context, func(RunEnd))
	// ModelCall is called before each call of the model by the loop.
	ModelCall(ctx context.Context, c ModelCallInfo) (context.Context, func(ModelCallEnd))
	// ToolCall is called before each tool call the loop executes.
	ToolCall(ctx context.Context, c ToolCallInfo) (context.Context, func(ToolCallEnd))
	// FirstOutput is called once per run, at the first output of its first
	// model call (a delta or, without streaming, the answer), with the time
	// since the run was created (queue time included). Resumed runs do not
	// report it.
	FirstOutput(ctx context.Context, r RunInfo, wait time.Duration)
	// ToolDecision is told every decision the audit records (policy.go):
	// a tool call of any path, allowed, denied or error. It must not keep
	// l.
	ToolDecision(l *ToolLog)
}

// Front-ends, for [RunRequest.Frontend] and the telemetry that counts runs
// by the front-end that started them.
const (
	FrontendREST    = "rest"
	FrontendA2A     = "a2a"
	FrontendMCP     = "mcp"
	FrontendConnect = "connect"
)

// RunInfo describes an observed run.
type RunInfo struct {
	ID        string
	SessionID string
	UserID    string
	// Model is the configured model name.
	Model string
	// Frontend is the RunRequest's (one of the Frontend* constants, or ""
	// for runs started from Go).
	Frontend  string
	CreatedAt time.Time
	// Resumed marks a run executing again after it suspended or its
	// process died.
	Resumed bool
}

// RunEnd is how an observed execution of a run ended.
type RunEnd struct {
	// State is the run's terminal state, RunWaitingApproval when it
	// suspended for approvals, or "" when it was never admitted.
	State      RunState
	StopReason StopReason
	Usage      Usage
	// Error is the run's error message for a failed run.
	Error string
}

// ModelCallInfo describes one model call.
type ModelCallInfo struct {
	RunID string
	// Model is the configured model name.
	Model  string
	Round  int
	Mode   string
	Stream bool
}

// ModelCallEnd is how a model call ended.
type ModelCallEnd struct {
	// Err is the call's error (nil: a response came); ctx errors mean
	// the run was cancelled.
	Err error
	// Response is nil when Err is set.
	Response *ModelResponse
}

// ToolCallInfo describes one tool call.
type ToolCallInfo struct {
	RunID  string
	CallID string
	// Tool is the canonical name.
	Tool string
	// Source and Owner are the tool's ([ToolSpec]); Owner is set for a
	// user's own tools, whose names carry the user id.
	Source string
	Owner  string
}

// ToolCallEnd is how a tool call ended.
type ToolCallEnd struct {
	IsError bool
	// Cancelled: the run was cancelled while the call ran.
	Cancelled bool
}

// runObservation is a live run's view of the observer: the end func,
// called once, and whether the first output was reported.
type runObservation struct {
	once      sync.Once
	end       func(RunEnd)
	firstOnce sync.Once
}

// observeRun tells the observer a run starts executing here and gives it
// the run's context. Call it before the run can be launched.
func (o *Orchestrator) observeRun(parent context.Context, lr *liveRun) {
	obs := o.opts.Observer
	if obs == nil {
		return
	}
	r := lr.snapshot()
	info := RunInfo{ID: r.ID, SessionID: r.SessionID, UserID: r.UserID, Model: lr.settings.Name,
		Frontend: lr.req.Frontend, CreatedAt: r.CreatedAt, Resumed: lr.resumed}
	ctx, end := obs.RunStarted(parent, lr.ctx, info)
	lr.ctx = ctx
	lr.obs = &runObservation{end: end}
	lr.obsInfo = info
}

// observedEnd reports a run's execution ended (at most once).
func (lr *liveRun) observedEnd(e RunEnd) {
	if lr.obs == nil || lr.obs.end == nil {
		return
	}
	lr.obs.once.Do(func() { lr.obs.end(e) })
}

// observeFirstOutput reports the run's first model output (once).
func (l *loop) observeFirstOutput(ctx context.Context) {
	lr := l.lr
	if lr.obs == nil || lr.resumed {
		return
	}
	lr.obs.firstOnce.Do(func() {
		l.o.opts.Observer.FirstOutput(ctx, lr.obsInfo, l.o.opts.Now().Sub(lr.obsInfo.CreatedAt))
	})
}

// observeModelCall starts observing a model call; the returned func ends
// it. Without an observer both are no-ops.
func (l *loop) observeModelCall(ctx context.Context) (context.Context, func(*ModelResponse, error)) {
	obs := l.o.opts.Observer
	if obs == nil {
		return ctx, func(*ModelResponse, error) {}
	}
	lr := l.lr
	ctx, end := obs.ModelCall(ctx, ModelCallInfo{RunID: lr.id, Model: lr.settings.Name, Round: l.round, Mode: lr.mode, Stream: l.streamed()})
	return ctx, func(resp *ModelResponse, err error) { end(ModelCallEnd{Err: err, Response: resp}) }
}

// observeToolCall starts observing a tool call; the returned func ends it.
func (l *loop) observeToolCall(ctx context.Context, c pendingCall) (context.Context, func(*ToolResult, bool)) {
	obs := l.o.opts.Observer
	if obs == nil || c.tool == nil {
		return ctx, func(*ToolResult, bool) {}
	}
	spec := c.tool.Spec()
	ctx, end := obs.ToolCall(ctx, ToolCallInfo{RunID: l.lr.id, CallID: c.call.ID, Tool: c.call.Name, Source: spec.Source, Owner: spec.Owner})
	return ctx, func(res *ToolResult, cancelled bool) {
		end(ToolCallEnd{IsError: res == nil || res.IsError, Cancelled: cancelled})
	}
}
