package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/orchestrator"
)

// newTelemetry builds the metrics and, when observability.otlp or the
// OTEL_EXPORTER_OTLP_* variables name a collector, the trace exporter
// (docs/observability.md).
func newTelemetry(ctx context.Context, cfg *config.Config) (*telemetry.Telemetry, error) {
	o := cfg.Observability
	threshold := o.StoreSpanThreshold()
	if threshold == 0 {
		threshold = -1 // 0 in the file means no store spans
	}
	tel, err := telemetry.New(ctx, telemetry.Options{
		OTLP:    telemetry.OTLP{Endpoint: o.OTLP.Endpoint, Protocol: o.OTLP.Protocol, Headers: o.OTLP.Headers},
		Version: version, StoreSpanThreshold: threshold, MaxUsers: o.MetricsMaxUsers,
	})
	if err != nil {
		return nil, withCode(exitConfig, fmt.Errorf("observability: %w", err))
	}
	return tel, nil
}

// tracedClient is an HTTP client whose requests carry the caller's
// traceparent (nil when traces are off: the component's default client).
func tracedClient(tel *telemetry.Telemetry) *http.Client {
	if !tel.Tracing() {
		return nil
	}
	return &http.Client{Transport: tel.Transport(nil)}
}

// wrapTransport is tel.Transport when traces are on, else nil.
func wrapTransport(tel *telemetry.Telemetry) func(http.RoundTripper) http.RoundTripper {
	if !tel.Tracing() {
		return nil
	}
	return tel.Transport
}

// tracingMiddleware is the gateway's outermost middleware when traces are on.
func tracingMiddleware(tel *telemetry.Telemetry) func(http.Handler) http.Handler {
	if !tel.Tracing() {
		return nil
	}
	return tel.Middleware
}

// telemetryGauges registers the gauges read at scrape time.
func telemetryGauges(tel *telemetry.Telemetry, orch *orchestrator.Orchestrator) {
	tel.SetGauges(telemetry.Gauges{
		QueueDepth:  func() float64 { return float64(orch.Stats().Queued) },
		ActiveRuns:  func() float64 { return float64(orch.Stats().Active) },
		OpenStreams: func() float64 { return float64(gateway.OpenStreams()) },
	})
}
