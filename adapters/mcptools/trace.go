package mcptools

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context (SEP-414): a request wunder sends to a server carries the
// W3C trace context of the span it is made under — a run's execute_tool
// span, or the /wunder/mcp span of a catalog call — as traceparent and
// tracestate in params._meta, so the server's spans join wunder's trace
// whatever the transport (stdio has no headers; over HTTP
// Options.WrapTransport adds the headers besides).

// traceContext writes the W3C keys; baggage is not sent (it may carry what
// the caller put there for wunder alone).
var traceContext propagation.TraceContext

// traceMeta returns meta with traceparent and tracestate of ctx's span
// added (meta itself when ctx has no valid span context; a new map when
// meta is nil). A traceparent meta already has is kept.
func traceMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	if _, ok := meta["traceparent"]; ok {
		return meta
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return meta
	}
	out := make(map[string]any, len(meta)+len(carrier))
	for k, v := range meta {
		out[k] = v
	}
	for k, v := range carrier {
		out[k] = v
	}
	return out
}
