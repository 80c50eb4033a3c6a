package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Traces are on only when an endpoint is configured, in the options or
// the standard variables; a bad protocol or endpoint is refused.
func TestTracesOnlyWhenConfigured(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name    string
		opts    Options
		tracing bool
		err     string
	}{
		{"nothing", Options{Getenv: env(nil)}, false, ""},
		{"file endpoint", Options{OTLP: OTLP{Endpoint: "http://127.0.0.1:4318"}, Getenv: env(nil)}, true, ""},
		{"file grpc", Options{OTLP: OTLP{Endpoint: "http://127.0.0.1:4317", Protocol: ProtocolGRPC}, Getenv: env(nil)}, true, ""},
		{"env endpoint", Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})}, true, ""},
		{"env traces endpoint", Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})}, true, ""},
		{"env bad protocol", Options{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})}, false, `otlp protocol "http/json"`},
		{"file bad endpoint", Options{OTLP: OTLP{Endpoint: "collector:4318"}, Getenv: env(nil)}, false, "want an http:// or https:// URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tel, err := New(ctx, c.opts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("New error = %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tel.Shutdown(context.Background())
			if tel.Tracing() != c.tracing {
				t.Errorf("Tracing() = %v, want %v", tel.Tracing(), c.tracing)
			}
		})
	}
}

// Without traces the observer hands back the contexts it was given:
// nothing is added to a run's context, its model calls' or its tool
// calls'.
func TestObserverWithoutTracesKeepsContexts(t *testing.T) {
	tel, err := New(t.Context(), Options{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, 1)
	got, end := tel.RunStarted(t.Context(), ctx, orchestrator.RunInfo{ID: "run_1"})
	if got != ctx {
		t.Errorf("RunStarted changed the context without traces")
	}
	end(orchestrator.RunEnd{State: orchestrator.RunFinished})
	if got, end := tel.ModelCall(ctx, orchestrator.ModelCallInfo{Model: "m"}); got != ctx {
		t.Errorf("ModelCall changed the context without traces")
	} else {
		end(orchestrator.ModelCallEnd{})
	}
	if got, end := tel.ToolCall(ctx, orchestrator.ToolCallInfo{Tool: "t"}); got != ctx {
		t.Errorf("ToolCall changed the context without traces")
	} else {
		end(orchestrator.ToolCallEnd{})
	}
}
