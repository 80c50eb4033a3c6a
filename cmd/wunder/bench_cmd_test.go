package main

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// `wunder bench` on the shared measuring core (internal/loadtest), against
// a real server with the fake model: every run counted, none failed.
func TestBenchCommand(t *testing.T) {
	s := startServer(t, nil)
	var out bytes.Buffer
	f := benchFlags{server: s.url, users: 2, runs: 3, question: "hello", timeout: time.Minute}
	if err := runBench(t.Context(), f, &out); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	var row string
	for line := range strings.SplitSeq(out.String(), "\n") {
		if strings.Contains(line, "wunder POST /wunder") {
			row = line
		}
	}
	fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(row), "wunder POST /wunder"))
	if len(fields) < 3 || fields[0] != "6" || fields[1] != "0" {
		t.Fatalf("want 6 runs and 0 errors:\n%s", out.String())
	}
	if strings.Contains(out.String(), "first error") {
		t.Errorf("an error was reported:\n%s", out.String())
	}
}

// With --direct-url both rows time the model's first output (wunder's
// first llm_output_delta, the direct call's first chunk with content),
// and the report compares them.
func TestBenchCommandFirstOutput(t *testing.T) {
	s := startServer(t, nil)
	direct := httptest.NewServer(&fakellm.Server{})
	t.Cleanup(direct.Close)
	var out bytes.Buffer
	f := benchFlags{server: s.url, users: 2, runs: 2, question: "hello", timeout: time.Minute,
		directURL: direct.URL + "/v1", directModel: "fake"}
	if err := runBench(t.Context(), f, &out); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	for _, target := range []string{"wunder POST /wunder", "model endpoint directly"} {
		var fields []string
		for line := range strings.SplitSeq(out.String(), "\n") {
			if strings.Contains(line, target) {
				fields = strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), target))
			}
		}
		// runs errors runs/s p50 p95 p99 first×3 output p50 output p95
		if len(fields) != 11 || fields[1] != "0" || fields[9] == "0.0ms" || fields[10] == "0.0ms" {
			t.Fatalf("%s: want runs without errors and a time to first output:\n%s", target, out.String())
		}
	}
	if !strings.Contains(out.String(), "first model output") {
		t.Fatalf("no first-output comparison:\n%s", out.String())
	}
}
