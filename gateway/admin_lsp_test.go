package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

type fakeLSPAdmin struct{}

func (fakeLSPAdmin) LSPStatus(context.Context) (any, error) {
	return map[string]any{"workers": []map[string]any{{"server": "gopls", "state": "ready", "rss_bytes": 1}}}, nil
}

func (fakeLSPAdmin) LSPTest(_ context.Context, server string) (any, error) {
	switch server {
	case "gopls":
		return map[string]any{"server": "gopls", "name": "gopls"}, nil
	case "broken":
		return nil, fmt.Errorf("%w: lsp: broken did not start", orchestrator.ErrUnavailable)
	}
	return nil, fmt.Errorf("%w: no language server %q", orchestrator.ErrNotFound, server)
}

func TestAdminLSP(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{gw: gateway.Options{LSP: fakeLSPAdmin{}, APIKey: "k"}})
	tests := []struct {
		method, path, body, key string
		status                  int
		want                    string
	}{
		{"GET", "/wunder/admin/lsp", "", "k", 200, `"state":"ready"`},
		{"GET", "/wunder/admin/lsp", "", "", 401, "unauthenticated"},
		{"POST", "/wunder/admin/lsp/test", `{"server":"gopls"}`, "k", 200, `"name":"gopls"`},
		{"POST", "/wunder/admin/lsp/test", `{"server":"nope"}`, "k", 404, "not_found"},
		{"POST", "/wunder/admin/lsp/test", `{"server":"broken"}`, "k", 503, "unavailable"},
		{"POST", "/wunder/admin/lsp/test", `{"server":"../x"}`, "k", 400, "invalid_argument"},
		{"POST", "/wunder/admin/lsp/test", `{"srv":"gopls"}`, "k", 400, "unknown_field"},
		{"POST", "/wunder/admin/lsp/test", `{`, "k", 400, "invalid_json"},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.key != "" {
			hdr = []string{"X-API-Key", tt.key}
		}
		resp := e.do(t, tt.method, tt.path, tt.body, hdr...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !json.Valid(body) || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s %s %s: %d %s, want %d with %s", tt.method, tt.path, tt.body, resp.StatusCode, body, tt.status, tt.want)
		}
	}
	// Without the option there are no such routes.
	plain := newEnv(t, envOpts{})
	resp := plain.do(t, "GET", "/wunder/admin/lsp", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("without LSP: %d, want 404", resp.StatusCode)
	}
}
