package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OTLP protocols.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// OTLP says where traces go. With no Endpoint, the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// variable decides; with neither, traces are off.
type OTLP struct {
	// Endpoint is the collector's base URL, e.g. http://collector:4318
	// (http/protobuf: /v1/traces is added unless the path ends with it)
	// or http://collector:4317 (grpc). An http:// URL sends in plain text.
	Endpoint string
	// Protocol is http/protobuf (default) or grpc; "" = the
	// OTEL_EXPORTER_OTLP_PROTOCOL variable, else http/protobuf.
	Protocol string
	// Headers are sent with every export (e.g. an API key of the
	// collector).
	Headers map[string]string
}

// Options configure [New]. The zero value collects metrics and no traces.
type Options struct {
	OTLP OTLP
	// ServiceName is the resource's service.name. Default "wunder";
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES apply too.
	ServiceName string
	// Version is the resource's service.version.
	Version string
	// StoreSpanThreshold: store operations at least this slow get a span.
	// Default 10ms; negative: no store spans.
	StoreSpanThreshold time.Duration
	// Getenv reads the OTEL_* variables; nil means os.Getenv.
	Getenv func(string) string
	// MaxUsers bounds the users with series of their own (wunder_user_*):
	// past it, users are counted as user="_other"; <= 0 turns the
	// per-user series off (observability.metrics_max_users).
	MaxUsers int
}

// Telemetry holds the metrics registry and, when traces are on, the
// tracer provider. It implements [orchestrator.Observer].
type Telemetry struct {
	m     *metrics
	users *userLabels
	opts  Options
	// tp is nil when traces are off: then nothing makes spans, wraps
	// handlers or transports.
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// New builds the metrics and, when OTLP is configured (Options.OTLP or
// the OTEL_EXPORTER_OTLP_* variables), a tracer provider exporting over
// it. Exports are asynchronous: nothing here waits for the collector.
func New(ctx context.Context, opts Options) (*Telemetry, error) {
	if opts.ServiceName == "" {
		opts.ServiceName = "wunder"
	}
	if opts.StoreSpanThreshold == 0 {
		opts.StoreSpanThreshold = 10 * time.Millisecond
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	t := &Telemetry{m: newMetrics(), users: &userLabels{max: opts.MaxUsers}, opts: opts,
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	exp, err := newExporter(ctx, opts)
	if err != nil || exp == nil {
		return t, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", opts.ServiceName), attribute.String("service.version", opts.Version)))
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	// The environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins
	// over the defaults above.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t.tracer = t.tp.Tracer("github.com/wunder/wunder")
	return t, nil
}

// Tracing reports whether traces are exported.
func (t *Telemetry) Tracing() bool { return t.tp != nil }

// TracerProvider makes the spans of components that start their own (the
// MCP front-end's request spans); nil when traces are off.
func (t *Telemetry) TracerProvider() trace.TracerProvider {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp
}

// newExporter is the configured OTLP exporter, or nil when traces are off.
func newExporter(ctx context.Context, opts Options) (sdktrace.SpanExporter, error) {
	o, env := opts.OTLP, opts.Getenv
	fromEnv := o.Endpoint == ""
	if fromEnv && env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	proto := o.Protocol
	if proto == "" {
		proto = firstNonEmpty(env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), env("OTEL_EXPORTER_OTLP_PROTOCOL"), ProtocolHTTP)
	}
	switch proto {
	case ProtocolHTTP:
		if fromEnv {
			return otlptracehttp.New(ctx) // the exporter reads the variables
		}
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("telemetry: otlp endpoint %q: want an http:// or https:// URL", o.Endpoint)
		}
		if !strings.HasSuffix(u.Path, "/v1/traces") {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
		}
		eo := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(u.String())}
		if len(o.Headers) > 0 {
			eo = append(eo, otlptracehttp.WithHeaders(o.Headers))
		}
		return otlptracehttp.New(ctx, eo...)
	case ProtocolGRPC:
		if fromEnv {
			return otlptracegrpc.New(ctx)
		}
		eo := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(o.Endpoint)}
		if len(o.Headers) > 0 {
			eo = append(eo, otlptracegrpc.WithHeaders(o.Headers))
		}
		return otlptracegrpc.New(ctx, eo...)
	default:
		return nil, fmt.Errorf("telemetry: otlp protocol %q: want %s or %s", proto, ProtocolHTTP, ProtocolGRPC)
	}
}

// ForceFlush exports the spans ended so far (tests, and before a
// shutdown that must not lose them).
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown exports what is pending and stops the exporter.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}

// Middleware traces incoming requests (otelhttp): a span per request
// whose parent is the request's traceparent. Without traces it returns h.
func (t *Telemetry) Middleware(h http.Handler) http.Handler {
	if t.tp == nil {
		return h
	}
	return otelhttp.NewHandler(h, "wunder", otelhttp.WithTracerProvider(t.tp), otelhttp.WithPropagators(t.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + routeOf(r) }))
}

// routeOf is the span name's path: the matched route pattern when the mux
// set one, else the first path segment (bounded: never ids).
func routeOf(r *http.Request) string {
	if p := r.Pattern; p != "" {
		if _, path, ok := strings.Cut(p, " "); ok {
			return path
		}
		return p
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return "/" + seg
}

// Transport wraps base (nil: http.DefaultTransport) so outgoing requests
// carry the caller's traceparent and get a client span. Without traces it
// returns base unchanged.
func (t *Telemetry) Transport(base http.RoundTripper) http.RoundTripper {
	if t.tp == nil {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return otelhttp.NewTransport(base, otelhttp.WithTracerProvider(t.tp), otelhttp.WithPropagators(t.prop))
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// Carry takes the span context of from (a request that asked for work done
// later, such as an A2A push config), so a context made later continues
// its trace: the returned function puts it into a context as the remote
// parent. Without traces, or without a span in from, it changes nothing.
func (t *Telemetry) Carry(from context.Context) func(context.Context) context.Context {
	sc := trace.SpanContextFromContext(from)
	if t == nil || t.tp == nil || !sc.IsValid() {
		return func(ctx context.Context) context.Context { return ctx }
	}
	return func(ctx context.Context) context.Context { return trace.ContextWithRemoteSpanContext(ctx, sc) }
}
