package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"
)

// CallTool runs one tool of the user's catalog directly, outside any run:
// front-ends that offer the catalog itself (the aggregated MCP endpoint) call
// it as the calling principal. name is canonical, an alias or the wire form
// ([Registry.WireName]); it is decoded through the user's catalog selection,
// never by a second encoding. Always-on tools (final_response) only make
// sense inside a run and are not callable here.
//
// An unknown name is an error wrapping [ErrToolNotFound]; invalid user ids
// or arguments that are not a JSON object wrap [ErrInvalidArgument]. Tool
// failures, returned errors and panics become error results, as in a run;
// only a cancelled ctx returns ctx's error. output, when not nil, receives
// the tool's streamed output (it must be safe for concurrent use). Events a
// tool emits are dropped: there is no run event log to append to. Like the
// loop, CallTool records a [ToolLog] (without run and session) in the
// background.
func (o *Orchestrator) CallTool(ctx context.Context, userID, name string, args json.RawMessage,
	output func(stream, delta string)) (*ToolResult, error) {
	if err := validUserID(userID); err != nil {
		return nil, err
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return nil, invalidf("arguments of %s must be a JSON object", name)
	}
	o.mu.Lock()
	closed := o.closed
	o.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: shutting down", ErrUnavailable)
	}
	sel, err := o.tools.all(ctx, userID)
	if err != nil {
		return nil, err
	}
	t, ok := sel.Lookup(name)
	if !ok || t.Spec().AlwaysOn || t.Spec().RunOnly {
		return nil, fmt.Errorf("%w: %s", ErrToolNotFound, name)
	}
	spec := t.Spec()
	canonical := spec.Name
	// The catalog holds only what the policy lets the user see; the
	// decision also says whether the call must wait for a person, which a
	// direct call cannot.
	d := o.DecideTool(ctx, ToolCheck{UserID: userID, Tool: canonical, Spec: &spec, Via: ViaCatalog, who: sel.who})
	if !d.Allowed() {
		why := d.Reason
		if d.Verdict == VerdictNeedsApproval {
			why = fmt.Sprintf("%s waits for a person's approval (%s), and a direct call cannot wait: ask for it in a run (wunder@run), where approvals are asked", canonical, d.Reason)
		}
		o.RecordToolCall(&ToolLog{UserID: userID, CallID: newID("call_"), Tool: canonical, Arguments: args,
			FrontEnd: frontEndOf(ctx), Via: ViaCatalog, Outcome: OutcomeDenied, Reason: why})
		return nil, fmt.Errorf("%w: %s", ErrPermissionDenied, why)
	}
	if output == nil {
		output = func(string, string) {}
	}
	inv := &ToolInvocation{
		UserID: userID, CallID: newID("call_"), Arguments: args,
		Output: func(stream, delta string) {
			if delta != "" {
				output(stream, delta)
			}
		},
		Emit: func(string, any) {},
	}
	start := time.Now()
	res, err := o.invoke(ctx, t, inv)
	if err != nil {
		return nil, err
	}
	o.logDirectCall(ctx, inv, canonical, res, since(start))
	return res, nil
}

// invoke calls t, turning errors and panics into error results; a cancelled
// ctx is returned as ctx's error.
func (o *Orchestrator) invoke(ctx context.Context, t Tool, inv *ToolInvocation) (res *ToolResult, err error) {
	name := t.Spec().Name
	defer func() {
		if p := recover(); p != nil {
			o.log.Error("tool panicked", "tool", name, "user_id", inv.UserID, "panic", p, "stack", string(debug.Stack()))
			res, err = ErrorResult(fmt.Sprintf("tool %s failed: internal error", name)), nil
		}
	}()
	res, err = t.Call(ctx, inv)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return ErrorResult(err.Error()), nil
	case res == nil:
		return &ToolResult{}, nil
	}
	return res, nil
}

// logDirectCall writes the tool log of a direct call in the background,
// with the runs' (toollog.go).
func (o *Orchestrator) logDirectCall(ctx context.Context, inv *ToolInvocation, name string, res *ToolResult, ms int64) {
	o.RecordToolCall(&ToolLog{
		UserID: inv.UserID, CallID: inv.CallID, Tool: name, Arguments: inv.Arguments,
		Result: clip(res.Content, 4000), IsError: res.IsError, DurationMS: ms, CreatedAt: o.opts.Now(),
		FrontEnd: frontEndOf(ctx), Via: ViaCatalog, Outcome: outcomeOf(res.IsError),
	})
}

// RecordToolCall puts one decision on a tool call in the audit (the tool
// log), written in the background in batches (toollog.go): front-ends
// whose calls do not run through the core (the MCP pass-through) record
// theirs here. A zero CreatedAt is now.
func (o *Orchestrator) RecordToolCall(l *ToolLog) {
	if l.CreatedAt.IsZero() {
		l.CreatedAt = o.opts.Now()
	}
	if obs := o.opts.Observer; obs != nil {
		obs.ToolDecision(l)
	}
	o.toolLogs.add(l)
}

type frontEndKey struct{}

// WithFrontEnd returns ctx naming the front-end a direct tool call comes
// through (the audit's front_end): CallTool reads it.
func WithFrontEnd(ctx context.Context, frontEnd string) context.Context {
	return context.WithValue(ctx, frontEndKey{}, frontEnd)
}

func frontEndOf(ctx context.Context) string {
	f, _ := ctx.Value(frontEndKey{}).(string)
	return f
}
