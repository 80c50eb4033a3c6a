package telemetry

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.Observer = (*Telemetry)(nil)

// Outcomes, the outcome label.
const (
	outcomeOK        = "ok"
	outcomeError     = "error"
	outcomeCancelled = "cancelled"
)

// RunStarted starts the run's span, continuing the trace of the request
// that started it, and counts the run when it ends.
func (t *Telemetry) RunStarted(parent, ctx context.Context, r orchestrator.RunInfo) (context.Context, func(orchestrator.RunEnd)) {
	start := time.Now()
	var span trace.Span
	if t.tracer != nil {
		if sc := trace.SpanContextFromContext(parent); sc.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, sc)
		}
		ctx, span = t.tracer.Start(ctx, "run", trace.WithAttributes(
			attribute.String("wunder.run_id", r.ID), attribute.String("wunder.session_id", r.SessionID),
			attribute.String("wunder.user_id", r.UserID), attribute.String("wunder.frontend", r.Frontend),
			attribute.String("gen_ai.request.model", r.Model), attribute.Bool("wunder.resumed", r.Resumed)))
	}
	return ctx, func(e orchestrator.RunEnd) {
		t.userRunEnded(r, e, time.Since(start))
		if e.State != "" && !e.State.Waiting() {
			t.m.runs.WithLabelValues(string(e.State), frontendLabel(r.Frontend)).Inc()
			t.m.runDuration.Observe(time.Since(start).Seconds())
		}
		if span == nil {
			return
		}
		state := string(e.State)
		if state == "" {
			state = "not_admitted"
		}
		span.SetAttributes(attribute.String("wunder.state", state), attribute.String("wunder.stop_reason", string(e.StopReason)),
			attribute.Int64("gen_ai.usage.input_tokens", e.Usage.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", e.Usage.OutputTokens))
		if e.State == orchestrator.RunFailed || e.State == "" {
			span.SetStatus(codes.Error, e.Error)
		}
		span.End()
	}
}

// frontendLabel bounds the frontend label.
func frontendLabel(f string) string {
	switch f {
	case orchestrator.FrontendREST, orchestrator.FrontendA2A, orchestrator.FrontendMCP, orchestrator.FrontendConnect:
		return f
	case "":
		return "internal"
	}
	return "other"
}

// FirstOutput records the time to a run's first model output.
func (t *Telemetry) FirstOutput(ctx context.Context, _ orchestrator.RunInfo, wait time.Duration) {
	t.m.firstEvent.Observe(wait.Seconds())
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("first_output", trace.WithAttributes(attribute.Float64("wunder.wait_seconds", wait.Seconds())))
	}
}

// ModelCall starts a GenAI client span ("chat {model}") and records the
// call's latency, outcome and tokens when it ends.
func (t *Telemetry) ModelCall(ctx context.Context, c orchestrator.ModelCallInfo) (context.Context, func(orchestrator.ModelCallEnd)) {
	start := time.Now()
	var span trace.Span
	if t.tracer != nil {
		ctx, span = t.tracer.Start(ctx, "chat "+c.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", c.Model),
			attribute.Int("wunder.round", c.Round), attribute.String("wunder.tool_call_mode", c.Mode),
			attribute.Bool("wunder.stream", c.Stream), attribute.String("wunder.run_id", c.RunID)))
	}
	return ctx, func(e orchestrator.ModelCallEnd) {
		outcome := outcomeOK
		switch {
		case e.Err != nil && (errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)):
			outcome = outcomeCancelled
		case e.Err != nil:
			outcome = outcomeError
		}
		t.m.modelCalls.WithLabelValues(c.Model, outcome).Inc()
		t.m.modelDuration.WithLabelValues(c.Model).Observe(time.Since(start).Seconds())
		if r := e.Response; r != nil && r.Usage != nil {
			t.m.modelTokens.WithLabelValues(c.Model, "input").Add(float64(r.Usage.InputTokens))
			t.m.modelTokens.WithLabelValues(c.Model, "output").Add(float64(r.Usage.OutputTokens))
		}
		if span == nil {
			return
		}
		if r := e.Response; r != nil {
			if r.Model != "" {
				span.SetAttributes(attribute.String("gen_ai.response.model", r.Model))
			}
			if r.FinishReason != "" {
				span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{r.FinishReason}))
			}
			if r.Usage != nil {
				span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", r.Usage.InputTokens),
					attribute.Int64("gen_ai.usage.output_tokens", r.Usage.OutputTokens))
			}
		}
		if e.Err != nil {
			span.SetAttributes(attribute.String("error.type", outcome))
			span.SetStatus(codes.Error, e.Err.Error())
		}
		span.End()
	}
}

// toolLabel bounds the tool label: a user's own tools carry the user id
// in their names, so they are counted together.
func toolLabel(c orchestrator.ToolCallInfo) string {
	if c.Owner != "" {
		return "user_tool"
	}
	return c.Tool
}

// ToolCall starts an "execute_tool {tool}" span and records the call's
// latency and outcome when it ends.
func (t *Telemetry) ToolCall(ctx context.Context, c orchestrator.ToolCallInfo) (context.Context, func(orchestrator.ToolCallEnd)) {
	start := time.Now()
	tool := toolLabel(c)
	var span trace.Span
	if t.tracer != nil {
		ctx, span = t.tracer.Start(ctx, "execute_tool "+c.Tool, trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", c.Tool),
			attribute.String("gen_ai.tool.call.id", c.CallID), attribute.String("wunder.tool_source", c.Source),
			attribute.String("wunder.run_id", c.RunID)))
	}
	return ctx, func(e orchestrator.ToolCallEnd) {
		outcome := outcomeOK
		switch {
		case e.Cancelled:
			outcome = outcomeCancelled
		case e.IsError:
			outcome = outcomeError
		}
		t.m.toolCalls.WithLabelValues(tool, outcome).Inc()
		t.m.toolDuration.WithLabelValues(tool).Observe(time.Since(start).Seconds())
		if span == nil {
			return
		}
		if outcome != outcomeOK {
			span.SetAttributes(attribute.String("error.type", outcome))
			span.SetStatus(codes.Error, "tool "+outcome)
		}
		span.End()
	}
}

// StoreOp records a store operation's latency (storage.Options.Observe);
// one at least StoreSpanThreshold slow gets a span under ctx's.
func (t *Telemetry) StoreOp(ctx context.Context, op string, start time.Time, err error) {
	end := time.Now()
	d := end.Sub(start)
	t.m.storeDuration.WithLabelValues(op).Observe(d.Seconds())
	if t.tracer == nil || t.opts.StoreSpanThreshold < 0 || d < t.opts.StoreSpanThreshold {
		return
	}
	_, span := t.tracer.Start(ctx, "store "+op, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.operation.name", op)))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(end))
}
