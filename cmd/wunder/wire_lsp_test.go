package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The LSP wiring through the real server: the lsp tool in the catalog and
// the two admin endpoints, against gopls v0.23.0 (bin/tools or PATH).
func TestLSPThroughRealServer(t *testing.T) {
	gopls, _ := filepath.Abs(filepath.Join("..", "..", "bin", "tools", "gopls"))
	if _, err := os.Stat(gopls); err != nil {
		if gopls, err = exec.LookPath("gopls"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("gopls not found in bin/tools or on PATH")
			}
			t.Skip("SKIPPING: gopls not found in bin/tools or on PATH (GOBIN=$PWD/bin/tools go install golang.org/x/tools/gopls@v0.23.0)")
		}
	}
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "k"
		c.LSP.Enabled = true
		gs := config.LSPServer{ID: "gopls", Command: []string{gopls}, Enabled: true}
		c.LSP.Servers = []config.LSPServer{gs, {ID: "pyright", Enabled: false},
			{ID: "typescript-language-server", Enabled: false}, {ID: "bash-language-server", Enabled: false}}
	})
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
		req.Header.Set("X-API-Key", "k")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/wunder/tools?user_id=alice", ""); code != 200 || !strings.Contains(body, `"lsp"`) || !strings.Contains(body, "LSP查询") {
		t.Errorf("tools: %d %s", code, body)
	}
	// The configuration (every entry, disabled ones too) and the status of
	// the pool (the servers it can start: gopls only).
	code, body := do("GET", "/wunder/admin/lsp", "")
	var lspDoc struct {
		LSP    struct{ Servers []struct{ ID string } } `json:"lsp"`
		Status struct{ Servers []struct{ ID string } } `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &lspDoc); code != 200 || err != nil || len(lspDoc.LSP.Servers) != 4 ||
		len(lspDoc.Status.Servers) != 1 || lspDoc.Status.Servers[0].ID != "gopls" {
		t.Errorf("admin/lsp: %d %s", code, body)
	}
	code, body = do("POST", "/wunder/admin/lsp/test", `{"server":"gopls"}`)
	t.Logf("admin/lsp/test: %s", body)
	if code != 200 || !strings.Contains(body, `"definitionProvider"`) {
		t.Errorf("admin/lsp/test: %d %s", code, body)
	}
	if code, body := do("POST", "/wunder/admin/lsp/test", `{"server":"pyright"}`); code != 404 {
		t.Errorf("admin/lsp/test of a disabled server: %d %s", code, body)
	}
}
