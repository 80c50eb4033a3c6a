package gateway_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

type fakeMCPAdmin struct{}

func (fakeMCPAdmin) RefreshMCP(_ context.Context, server string) (any, error) {
	switch server {
	case "fs":
		return map[string]any{"server": "fs", "tools": []string{"fs@read"}}, nil
	case "down":
		return nil, fmt.Errorf("%w: mcp server down: connection refused", orchestrator.ErrUnavailable)
	}
	return nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, server)
}

func TestAdminMCPRefresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{gw: gateway.Options{MCP: fakeMCPAdmin{}, APIKey: "k"}})
	for _, tc := range []struct {
		path, key string
		status    int
		want      string
	}{
		{"/wunder/admin/mcp/fs/refresh", "k", 200, `"fs@read"`},
		{"/wunder/admin/mcp/down/refresh", "k", 503, "connection refused"},
		{"/wunder/admin/mcp/nope/refresh", "k", 404, "nope"},
		{"/wunder/admin/mcp/b%40d/refresh", "k", 400, "configured MCP server"},
		{"/wunder/admin/mcp/fs/refresh", "", 401, ""},
	} {
		resp := e.do(t, "POST", tc.path, "", "X-API-Key", tc.key)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("POST %s: %d %s, want %d with %q", tc.path, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	// Without the option there is no route.
	plain := newEnv(t, envOpts{})
	if resp := plain.do(t, "POST", "/wunder/admin/mcp/fs/refresh", ""); resp.StatusCode != 404 {
		t.Errorf("no MCP admin: %d, want 404", resp.StatusCode)
	}
}
