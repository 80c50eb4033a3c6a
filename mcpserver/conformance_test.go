package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/internal/testutil/mcpnpm"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// everythingServer builds the go-sdk's own conformance server (same module
// as the SDK, v1.8.0) and starts it, stateful, on a free port.
func everythingServer(t *testing.T) string {
	t.Helper()
	return everythingServerRun(t, everythingServerBin(t), false)
}

func everythingServerBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
	if err != nil {
		t.Fatalf("building the conformance server: %v\n%s", err, out)
	}
	return bin
}

// everythingServerRun starts bin, stateless (2026-07-28 and older, no
// sessions) or stateful (sessions, 2025-11-25 at most), on a free port.
func everythingServerRun(t *testing.T, bin string, stateless bool) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(mcpnpm.FreePort(t))
	mcpnpm.Start(t, nil, "listening", bin, "-http", addr, "-stateless="+strconv.FormatBool(stateless))
	return "http://" + addr + "/mcp"
}

// gatewayFor serves mcpserver with the upstream "everything" in front of url.
func gatewayFor(t *testing.T, url string) string {
	t.Helper()
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "everything", Transport: mcptools.TransportStreamableHTTP, URL: url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, mcpserver.Options{Upstreams: set}, orchestratortest.Turn{Content: "ok"})
	t.Cleanup(func() { _ = set.Close() })
	return e.url
}

var (
	scenarioLine = regexp.MustCompile(`(?m)^([✓✗]) (\S+):`)
	// A single --scenario run ends with "Passed: n/m, k failed".
	singleResult = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)
)

// conformance runs the official suite against url and returns passed and
// total scenarios, logging the failures.
func conformance(t *testing.T, url string, args ...string) (passed, total int, failed []string) {
	t.Helper()
	dir := mcpnpm.Dir(t)
	cmd := exec.Command(mcpnpm.Node(t), append([]string{filepath.Join(dir, "node_modules", ".bin", "conformance"), "server", "--url", url}, args...)...)
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput() // a failing scenario exits non-zero; the count says which
	for _, m := range scenarioLine.FindAllStringSubmatch(string(out), -1) {
		total++
		if m[1] == "✓" {
			passed++
		} else {
			failed = append(failed, m[2])
		}
	}
	if m := singleResult.FindStringSubmatch(string(out)); total == 0 && m != nil {
		// One scenario: passed when all its checks passed.
		total = 1
		if m[3] == "0" && m[1] == m[2] {
			passed = 1
		} else {
			failed = append(failed, "checks "+m[1]+"/"+m[2])
		}
	}
	if total == 0 || len(failed) > 0 {
		t.Logf("conformance output:\n%s", out)
	}
	return passed, total, failed
}

// TestConformancePassThrough runs the official MCP conformance suite
// (spec 2025-11-25) through /wunder/mcp/everything in front of the go-sdk's
// conformance server: every scenario must pass, as it does direct.
func TestConformancePassThrough(t *testing.T) {
	mcpnpm.Dir(t)
	upstream := everythingServer(t)
	base := gatewayFor(t, upstream)
	passed, total, failed := conformance(t, base+"/wunder/mcp/everything", "--spec-version", "2025-11-25")
	t.Logf("conformance through the pass-through route: %d/%d scenarios", passed, total)
	if total < 30 || passed != total {
		t.Errorf("pass-through: %d/%d, failed %v; want all of at least 30", passed, total, failed)
	}
}

// TestConformanceAggregated runs the scenarios that need no fixture tools
// against /wunder/mcp itself.
func TestConformanceAggregated(t *testing.T) {
	mcpnpm.Dir(t)
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "ok"})
	for _, sc := range []string{"server-initialize", "ping", "tools-list", "logging-set-level"} {
		passed, total, failed := conformance(t, e.url+"/wunder/mcp", "--scenario", sc)
		t.Logf("%s: %d/%d", sc, passed, total)
		if total == 0 || passed != total {
			t.Errorf("%s on /wunder/mcp: %d/%d failed %v", sc, passed, total, failed)
		}
	}
}

// TestConformanceAggregatedCatalog runs the same scenarios against
// /wunder/mcp with the catalog exposed (the tool list holds catalog tools).
func TestConformanceAggregatedCatalog(t *testing.T) {
	mcpnpm.Dir(t)
	_, url := newCatalogEnv(t, false)
	for _, sc := range []string{"server-initialize", "ping", "tools-list", "logging-set-level"} {
		passed, total, failed := conformance(t, url, "--scenario", sc)
		t.Logf("%s: %d/%d", sc, passed, total)
		if total == 0 || passed != total {
			t.Errorf("%s on /wunder/mcp with the catalog: %d/%d failed %v", sc, passed, total, failed)
		}
	}
}

// TestInspectorListsTools: the MCP inspector's CLI (pinned in testdata/mcp)
// lists wunder's tools on /wunder/mcp.
func TestInspectorListsTools(t *testing.T) {
	node := mcpnpm.Node(t)
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "ok"})
	cli := filepath.Join(mcpnpm.Dir(t), "node_modules", ".bin", "mcp-inspector")
	cmd := exec.Command(node, cli, "--cli", e.url+"/wunder/mcp", "--transport", "http", "--method", "tools/list")
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"wunder__run"`) {
		t.Fatalf("inspector: %v\n%s", err, out)
	}
}
