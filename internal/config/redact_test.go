package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/internal/config"
)

func TestRedacted(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
security:
  api_key: admin-secret
llm:
  default: gpt
  models:
    gpt: {model: m, api_key: sk-secret}
    local: {provider: local, base_url: "http://127.0.0.1:11434/v1", model: llama}
storage:
  postgres:
    dsn: postgres://wunder:pg-secret@db:5432/wunder?sslmode=disable
`}, nil)
	r := c.Redacted()
	out, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"admin-secret", "sk-secret", "pg-secret"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("Redacted().Marshal() shows %q:\n%s", secret, out)
		}
	}
	if r.Security.APIKey != config.Mask || r.LLM.Models["gpt"].APIKey != config.Mask {
		t.Errorf("keys = %q, %q, want masked", r.Security.APIKey, r.LLM.Models["gpt"].APIKey)
	}
	if got := r.LLM.Models["local"].APIKey; got != "" {
		t.Errorf("empty key redacted to %q, want it left empty", got)
	}
	if want := "postgres://wunder:" + config.Mask + "@db:5432/wunder?sslmode=disable"; r.Storage.Postgres.DSN != want {
		t.Errorf("dsn = %q, want %q", r.Storage.Postgres.DSN, want)
	}
	// The original is untouched.
	if c.Security.APIKey != "admin-secret" || c.LLM.Models["gpt"].APIKey != "sk-secret" ||
		!strings.Contains(c.Storage.Postgres.DSN, "pg-secret") {
		t.Error("Redacted() changed the original")
	}
	// Everything else is kept.
	r.Security.APIKey, r.Storage.Postgres.DSN = c.Security.APIKey, c.Storage.Postgres.DSN
	m := r.LLM.Models["gpt"]
	m.APIKey = "sk-secret"
	r.LLM.Models["gpt"] = m
	if diff := cmp.Diff(c, r, cmpOpts); diff != "" {
		t.Errorf("Redacted() changed more than secrets (-orig +redacted):\n%s", diff)
	}
}

func TestRedactedDSN(t *testing.T) {
	t.Parallel()
	tests := []struct{ dsn, want string }{
		{"", ""},
		{"postgres://u@db/w", "postgres://u@db/w"},
		{"postgres://u:p@db/w", "postgres://u:" + config.Mask + "@db/w"},
		{"postgresql://db/w?user=u&password=p", "postgresql://db/w?password=" + config.Mask + "&user=u"},
		{"host=db user=u password=p dbname=w", "host=db user=u password=" + config.Mask + " dbname=w"},
		{"host=db password='p q' dbname=w", "host=db password=" + config.Mask + " dbname=w"},
		{"host=db user=u", "host=db user=u"},
		{"garbage:p@", config.Mask},
	}
	for _, tt := range tests {
		c := config.Default()
		c.Storage.Postgres.DSN = tt.dsn
		if got := c.Redacted().Storage.Postgres.DSN; got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server: {port: 9000, public_url: "https://x.example"}
llm:
  default: b
  models:
    a: {model: a, temperature: 0.7, stop: ["a: b"]}
    b: {provider: scripted, script: demo.txt}
cors: {allow_origins: ["https://ui.example"]}
`}, nil)
	out, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again := mustLoad(t, files{basePath: string(out)}, nil)
	if diff := cmp.Diff(c, again, cmpOpts); diff != "" {
		t.Errorf("Load(Marshal(c)) differs (-c +again):\n%s\n%s", diff, out)
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: "llm:\n  models:\n    a: {model: a, temperature: 1, stop: [x]}\n"}, nil)
	cp := c.Clone()
	*cp.LLM.Models["a"].Temperature = 2
	cp.LLM.Models["a"].Stop[0] = "y"
	cp.Security.AllowCommands[0] = "rm"
	if *c.LLM.Models["a"].Temperature != 1 || c.LLM.Models["a"].Stop[0] != "x" || c.Security.AllowCommands[0] != "ls" {
		t.Error("changing the clone changed the original")
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server: {host: "::1", port: 8443, read_header_timeout_s: 3, shutdown_timeout_s: 4, sse_heartbeat_s: 0}
concurrency: {max_active_runs: 4, per_user: 0, per_user_agents: 2, queue_retry_after_s: 7, lock_ttl_s: 9}
security: {command_timeout_s: 5, max_command_timeout_s: 6}
storage: {backend: auto, postgres: {connect_timeout_s: 11}}
llm:
  models:
    off: {model: x, enabled: false}
    on: {model: y, timeout_s: 12, retry: {initial_backoff_ms: 13, max_backoff_ms: 14}}
`}, nil)
	m := c.LLM.Models["on"]
	got := []any{
		c.Addr(), c.Server.ReadHeaderTimeout(), c.Server.ShutdownTimeout(), c.Server.SSEHeartbeat(),
		c.Concurrency.UserLimit(), c.Concurrency.AgentUserLimit(), c.Concurrency.QueueRetryAfter(), c.Concurrency.LockTTL(),
		c.Security.CommandTimeout(), c.Security.MaxCommandTimeout(),
		c.Storage.EffectiveBackend(), c.Storage.Postgres.ConnectTimeout(),
		c.DefaultModelName(), m.Timeout(), m.Retry.InitialBackoff(), m.Retry.MaxBackoff(), c.CORS.Enabled(),
	}
	s := time.Second
	want := []any{
		"[::1]:8443", 3 * s, 4 * s, time.Duration(0),
		4, 2, 7 * s, 9 * s,
		5 * s, 6 * s,
		"sqlite", 11 * s,
		"on", 12 * s, 13 * time.Millisecond, 14 * time.Millisecond, false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("helpers (-want +got):\n%s", diff)
	}
	if n := config.Default().DefaultModelName(); n != "" {
		t.Errorf("DefaultModelName() with no model = %q, want empty", n)
	}
}
