// Package telemetry is wunder's metrics and traces: a private Prometheus
// registry served at /metrics, and OpenTelemetry traces exported over OTLP
// when configured (off otherwise, at no cost). It implements the core's
// [orchestrator.Observer] hook, the store's operation hook and the HTTP
// pieces (server middleware, client transports) that cmd/wunder wires.
//
//	tel, err := telemetry.New(ctx, telemetry.Options{OTLP: ..., StoreSpanThreshold: 10 * time.Millisecond})
//	orchestrator.New(store, models, tools, &orchestrator.Options{Observer: tel})
//	storage.Open(ctx, storage.Options{Observe: tel.StoreOp, ...})
//	gateway.Options{Metrics: tel.MetricsHandler(), Trace: tel.Middleware, ...}
//	client := &http.Client{Transport: tel.Transport(base)} // traceparent on outgoing calls
//	defer tel.Shutdown(ctx)
//
// Metric names are a contract (docs/observability.md); labels are bounded:
// model names come from the configuration, tool names from the catalog
// (a user's own tools are counted as "user_tool"), store operations from
// the schema. Never a user or run id.
//
// Spans: "run" (parent: the traceparent of the request that started the
// run), under it "chat {model}" per model call with the GenAI semantic
// conventions (gen_ai.operation.name, gen_ai.request.model,
// gen_ai.usage.input_tokens, ...) and "execute_tool {tool}" per tool call,
// and "store {op}" for store operations slower than the threshold.
//
// Goroutines: with traces on, the SDK's batch span processor exports on
// its own goroutine; [Telemetry.Shutdown] flushes and stops it.
package telemetry
