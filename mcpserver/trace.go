package mcpserver

import (
	"context"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context (SEP-414): a request to /wunder/mcp whose params._meta
// carry traceparent (and tracestate) continues the caller's trace. The
// context is read before anything else handles the request, so the spans
// of its work — the run wunder@run starts, a catalog tool's call and the
// request it sends upstream — are children of the caller's span; without
// _meta, the trace of the HTTP request (its traceparent header, the
// gateway's span) goes on. With Options.Tracer each request also gets a
// server span of its own, "{method} {target}" with the OpenTelemetry MCP
// conventions' attributes. A malformed traceparent is ignored and never
// fails the request. The pass-through writes the context into what it
// forwards (passthrough_trace.go).

// traceContext reads and writes the W3C keys traceparent and tracestate.
var traceContext propagation.TraceContext

// traceMiddleware joins the caller's trace and, with a tracer, wraps the
// request in a server span.
func (h *Handler) traceMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if meta := metaOf(req); meta != nil {
			ctx = traceContext.Extract(ctx, metaCarrier(meta))
		}
		if h.tracer == nil || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req) // a span per request, none per notification
		}
		attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method)}
		target := ""
		switch p := req.GetParams().(type) {
		case *mcp.CallToolParamsRaw:
			if p != nil {
				target = p.Name
				attrs = append(attrs, attribute.String("gen_ai.tool.name", p.Name), attribute.String("gen_ai.operation.name", "execute_tool"))
			}
		case *mcp.ReadResourceParams:
			if p != nil {
				attrs = append(attrs, attribute.String("mcp.resource.uri", p.URI))
			}
		}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
			attrs = append(attrs, attribute.String("mcp.session.id", ss.ID()))
		}
		name := method
		if target != "" {
			name += " " + target
		}
		ctx, span := h.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		defer span.End()
		res, err := next(ctx, method, req)
		if err != nil {
			span.SetAttributes(attribute.String("error.type", "jsonrpc"))
			span.SetStatus(codes.Error, err.Error())
		} else if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			span.SetAttributes(attribute.String("error.type", "tool_error"))
			span.SetStatus(codes.Error, "tool error")
		}
		return res, err
	}
}

// metaOf is the request's params._meta (nil without params).
func metaOf(req mcp.Request) map[string]any {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil // a method whose params may be missing
	}
	return p.GetMeta()
}

// metaCarrier is the W3C keys of a _meta as a text-map carrier.
func metaCarrier(meta map[string]any) propagation.MapCarrier {
	c := propagation.MapCarrier{}
	for _, k := range traceContext.Fields() {
		if v, ok := meta[k].(string); ok {
			c[k] = v
		}
	}
	return c
}
