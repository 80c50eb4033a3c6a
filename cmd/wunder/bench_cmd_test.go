package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
