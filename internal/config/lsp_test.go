package config_test

import (
	"strings"
	"testing"
	"time"
)

func TestLSPSection(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
lsp:
  enabled: true
  diagnostics_debounce_ms: 500
  servers:
    - id: gopls
      env: {GOFLAGS: -mod=mod}
      initialization_options: '{"staticcheck": true}'
    - id: pyright
      enabled: false
`}, nil)
	l := c.LSP
	if !l.Enabled || l.DiagnosticsDebounce() != 500*time.Millisecond || l.Timeout() != 30*time.Second || l.IdleTTL() != 10*time.Minute {
		t.Errorf("lsp = %+v", l)
	}
	if len(l.Servers) != 2 || !l.Servers[0].Enabled || l.Servers[1].Enabled || l.Servers[0].Env["GOFLAGS"] != "-mod=mod" {
		t.Errorf("servers = %+v", l.Servers)
	}
}

func TestLSPBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yaml, want string }{
		{"max workers", "lsp:\n  max_workers: 0\n", "lsp.max_workers: must be at least 1"},
		{"id", "lsp:\n  servers:\n    - id: 'a b'\n", "lsp.servers[0].id: must be 1-64"},
		{"duplicate id", "lsp:\n  servers:\n    - id: a\n    - id: a\n", `lsp.servers[1].id: "a" is listed twice`},
		{"marker with a path", "lsp:\n  servers:\n    - id: a\n      root_markers: [../go.mod]\n", "lsp.servers[0].root_markers[0]: must be a plain file name"},
		{"extension", "lsp:\n  servers:\n    - id: a\n      extensions: [go]\n", "lsp.servers[0].extensions[0]: must look like"},
		{"init options", "lsp:\n  servers:\n    - id: a\n      initialization_options: '[1]'\n", "lsp.servers[0].initialization_options: must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.yaml); !strings.Contains(got, tt.want) {
				t.Errorf("error =\n%s\nwant it to contain %q", got, tt.want)
			}
		})
	}
}
