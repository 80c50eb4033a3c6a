package config_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Each duration key reaches its accessor in its own unit: a distinct value
// per key, so a key read into the wrong field, or seconds taken for
// milliseconds, shows. (TestHelpers holds the server, concurrency,
// security and model ones.)
func TestDurationKeys(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
server: {read_timeout_s: 31, idle_timeout_s: 37}
auth:
  token_ttl_s: 3601
  max_token_ttl_s: 7207
  password_hashing: {max_wait_s: 41}
storage: {janitor_interval_s: 61}
observability: {store_span_threshold_ms: 43}
llm: {circuit_open_s: 47}
mcp: {timeout_s: 53, ready_timeout_s: 59}
a2a:
  timeout_s: 67
  push: {timeout_s: 71}
attachments: {timeout_s: 73}
compaction: {summary_timeout_s: 79}
sandbox: {timeout_s: 83}
skills: {mcp_idle_s: 89}
user_tools: {discovery_timeout_s: 97, idle_ttl_s: 101}
lsp: {timeout_s: 103, idle_ttl_s: 107}
memory: {timeout_s: 109}
knowledge:
  rerank_timeout_s: 113
  embeddings: {timeout_s: 127}
`}, nil)
	s := time.Second
	got := map[string]time.Duration{
		"server.read_timeout_s":                  c.Server.ReadTimeout(),
		"server.idle_timeout_s":                  c.Server.IdleTimeout(),
		"auth.token_ttl_s":                       c.Auth.TokenTTL(),
		"auth.max_token_ttl_s":                   c.Auth.MaxTokenTTL(),
		"auth.password_hashing.max_wait_s":       c.Auth.PasswordHashing.MaxWait(),
		"storage.janitor_interval_s":             c.Storage.JanitorInterval(),
		"observability.store_span_threshold_ms":  c.Observability.StoreSpanThreshold(),
		"llm.circuit_open_s":                     c.LLM.CircuitOpen(),
		"mcp.timeout_s":                          c.MCP.Timeout(),
		"mcp.ready_timeout_s":                    c.MCP.ReadyTimeout(),
		"a2a.timeout_s":                          c.A2A.Timeout(),
		"a2a.push.timeout_s":                     c.A2A.Push.Timeout(),
		"attachments.timeout_s":                  c.Attachments.Timeout(),
		"compaction.summary_timeout_s":           c.Compaction.SummaryTimeout(),
		"sandbox.timeout_s":                      c.Sandbox.Timeout(),
		"skills.mcp_idle_s":                      c.Skills.MCPIdle(),
		"user_tools.discovery_timeout_s":         c.UserTools.DiscoveryTimeout(),
		"user_tools.idle_ttl_s":                  c.UserTools.IdleTTL(),
		"lsp.timeout_s":                          c.LSP.Timeout(),
		"lsp.idle_ttl_s":                         c.LSP.IdleTTL(),
		"memory.timeout_s":                       c.Memory.Timeout(),
		"knowledge.rerank_timeout_s":             c.Knowledge.RerankTimeout(),
		"knowledge.embeddings.timeout_s":         c.Knowledge.Embeddings.Timeout(),
		"100 years of max_token_ttl_s, no wraps": 0, // filled below
	}
	want := map[string]time.Duration{
		"server.read_timeout_s":                  31 * s,
		"server.idle_timeout_s":                  37 * s,
		"auth.token_ttl_s":                       3601 * s,
		"auth.max_token_ttl_s":                   7207 * s,
		"auth.password_hashing.max_wait_s":       41 * s,
		"storage.janitor_interval_s":             61 * s,
		"observability.store_span_threshold_ms":  43 * time.Millisecond,
		"llm.circuit_open_s":                     47 * s,
		"mcp.timeout_s":                          53 * s,
		"mcp.ready_timeout_s":                    59 * s,
		"a2a.timeout_s":                          67 * s,
		"a2a.push.timeout_s":                     71 * s,
		"attachments.timeout_s":                  73 * s,
		"compaction.summary_timeout_s":           79 * s,
		"sandbox.timeout_s":                      83 * s,
		"skills.mcp_idle_s":                      89 * s,
		"user_tools.discovery_timeout_s":         97 * s,
		"user_tools.idle_ttl_s":                  101 * s,
		"lsp.timeout_s":                          103 * s,
		"lsp.idle_ttl_s":                         107 * s,
		"memory.timeout_s":                       109 * s,
		"knowledge.rerank_timeout_s":             113 * s,
		"knowledge.embeddings.timeout_s":         127 * s,
		"100 years of max_token_ttl_s, no wraps": 3153600000 * s,
	}
	// The largest max_token_ttl_s validation allows is a positive duration.
	big := mustLoad(t, files{basePath: "auth:\n  max_token_ttl_s: 3153600000\n"}, nil)
	got["100 years of max_token_ttl_s, no wraps"] = big.Auth.MaxTokenTTL()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("durations (-want +got):\n%s", diff)
	}
}
