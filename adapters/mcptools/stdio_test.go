package mcptools_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/orchestrator"
)

// A stdio server sees PATH, HOME, LANG, its configured env and the depth
// marker — not wunder's WUNDER_* variables nor its secrets.
func TestStdioServerGetsAMinimalEnvironment(t *testing.T) {
	// Not parallel: it sets variables of the test process, which plays wunder.
	t.Setenv("WUNDER_CONFIG_PATH", "/etc/wunder/secret.yaml")
	t.Setenv("WUNDER_API_KEY", "admin-key")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("LANG", "C.UTF-8")
	cfg := helperServer(t, "f", "go")
	cfg.Env["GREETING"] = "hello world"
	s := newSet(t, 10*time.Second, cfg)
	refreshAll(t, s)
	res := call(t, toolByName(t, s, "f@env"), `{}`, nil)
	if res.IsError {
		t.Fatalf("env: %+v", res)
	}
	got := map[string]string{}
	var keys []string
	for _, kv := range strings.Split(res.Content, "\n") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"GREETING", "HOME", "LANG", "PATH", "WUNDER_MCPTOOLS_HELPER", mcptools.StdioDepthEnv}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("variables of the stdio server (-want +got):\n%s", diff)
	}
	if got["PATH"] != os.Getenv("PATH") || got["HOME"] != os.Getenv("HOME") || got["LANG"] != "C.UTF-8" {
		t.Errorf("PATH/HOME/LANG = %q %q %q, want wunder's", got["PATH"], got["HOME"], got["LANG"])
	}
	if got["GREETING"] != "hello world" || got[mcptools.StdioDepthEnv] != "1" {
		t.Errorf("GREETING %q, depth %q; want the configured value and 1", got["GREETING"], got[mcptools.StdioDepthEnv])
	}
}

// The configuration cannot forge the depth marker: a child always gets
// wunder's own depth plus one.
func TestStdioDepthMarkerIsNotConfigurable(t *testing.T) {
	t.Parallel()
	cfg := helperServer(t, "f", "go")
	cfg.Env[mcptools.StdioDepthEnv] = "0"
	s := newSet(t, 10*time.Second, cfg)
	refreshAll(t, s)
	res := call(t, toolByName(t, s, "f@env"), `{}`, nil)
	if lines := strings.Split(res.Content, "\n"); !slices.Contains(lines, mcptools.StdioDepthEnv+"=1") {
		t.Errorf("environment %q, want %s=1", lines, mcptools.StdioDepthEnv)
	}
}

// At depth 1 (wunder is itself a stdio server of a wunder) the stdio
// servers are not started: ready at once, no tools, and a run naming one of
// their tools is told why; servers over HTTP are unaffected.
func TestStdioServersRefusedAtDepth(t *testing.T) {
	t.Parallel()
	stdio := helperServer(t, "self", "go")
	stdio.Command = "/nonexistent/must-not-be-started"
	httpSrv := gatedServer(t, nil)
	s, err := mcptools.New([]mcptools.ServerConfig{stdio, httpSrv}, &mcptools.Options{Timeout: 10 * time.Second, StdioDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Start(context.Background())
	reg := orchestrator.NewRegistry("", nil, s)
	if _, err := reg.Select(context.Background(), "u", []string{"web@echo"}, nil); err != nil {
		t.Fatalf("HTTP server at depth 1: %v", err)
	}
	if err := s.Ready(); err != nil {
		t.Errorf("Ready() = %v once the HTTP server is discovered and the stdio one refused", err)
	}
	_, err = reg.Select(context.Background(), "u", []string{"self@echo"}, nil)
	if !errors.Is(err, orchestrator.ErrToolNotFound) || !strings.Contains(err.Error(), "stdio server not started") ||
		!strings.Contains(err.Error(), mcptools.StdioDepthEnv+"=1") {
		t.Errorf("Select(self@echo) = %v, want tool not found saying the stdio server was not started", err)
	}
	if _, err := s.Refresh(context.Background(), "self"); err == nil || !strings.Contains(err.Error(), "stdio server not started") {
		t.Errorf("Refresh(self) = %v, want the refusal", err)
	}
	if _, err := s.Dial(context.Background(), "self"); err == nil || !strings.Contains(err.Error(), "stdio server not started") {
		t.Errorf("Dial(self) = %v, want the refusal", err)
	}
}
