package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

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

// Without traces the observer passes contexts through untouched and
// still counts; labels stay bounded (a user's own tool is user_tool).
func TestObserverWithoutTraces(t *testing.T) {
	tel, err := New(t.Context(), Options{Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{}
	ctx := context.WithValue(t.Context(), key{}, 1)
	got, end := tel.RunStarted(t.Context(), ctx, orchestrator.RunInfo{ID: "run_1", Frontend: "carrier-pigeon"})
	if got != ctx {
		t.Errorf("RunStarted changed the context without traces")
	}
	end(orchestrator.RunEnd{State: orchestrator.RunFinished})
	_, endSuspended := tel.RunStarted(t.Context(), ctx, orchestrator.RunInfo{ID: "run_2", Frontend: orchestrator.FrontendA2A})
	endSuspended(orchestrator.RunEnd{State: orchestrator.RunWaitingApproval})
	_, endTool := tel.ToolCall(ctx, orchestrator.ToolCallInfo{Tool: "alice@search", Owner: "alice"})
	endTool(orchestrator.ToolCallEnd{IsError: true})
	_, endModel := tel.ModelCall(ctx, orchestrator.ModelCallInfo{Model: "m"})
	endModel(orchestrator.ModelCallEnd{Err: context.Canceled})
	tel.StoreOp(ctx, "select_runs", time.Now().Add(-time.Second), nil)

	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"runs finished/other", testutil.ToFloat64(tel.m.runs.WithLabelValues("finished", "other")), 1},
		{"runs waiting_approval (counted when it ends)", testutil.ToFloat64(tel.m.runs.WithLabelValues("waiting_approval", "a2a")), 0},
		{"tool calls user_tool/error", testutil.ToFloat64(tel.m.toolCalls.WithLabelValues("user_tool", "error")), 1},
		{"model calls m/cancelled", testutil.ToFloat64(tel.m.modelCalls.WithLabelValues("m", "cancelled")), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(tel.m.storeDuration); n != 1 {
		t.Errorf("store histogram series = %d, want 1", n)
	}
}
