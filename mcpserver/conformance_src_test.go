package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/testutil/mcpnpm"
)

// The conformance suite's main branch (github modelcontextprotocol/
// conformance, 0.2.0-alpha.11 and later: the npm release lacks the
// 2026-07-28 scenarios), built from source outside this repository: its
// checkout, after `npm ci` under Node 22, is named by
// WUNDER_MCP_CONFORMANCE_SRC. Without it these tests skip (CI has none);
// scripts/mcp-conformance.sh builds one and prints every figure.

// conformanceSrc is the built checkout, or a skip.
func conformanceSrc(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("WUNDER_MCP_CONFORMANCE_SRC")
	if dir == "" {
		t.Skip("WUNDER_MCP_CONFORMANCE_SRC names no built checkout of the MCP conformance suite (scripts/mcp-conformance.sh)")
	}
	if _, err := os.Stat(filepath.Join(dir, "dist", "index.js")); err != nil {
		t.Fatalf("WUNDER_MCP_CONFORMANCE_SRC=%s is not built (npm ci there): %v", dir, err)
	}
	return dir
}

var notScoredLine = regexp.MustCompile(`(?m)^\s+([✓✗]) (\S+) \(`)

// suiteResult is a --requirements run: the scenarios the revision scores
// (the others, extensions and pending ones, run but count for nothing)
// and which of them failed.
type suiteResult struct {
	scored, passed int
	failed         []string
}

// requirements runs the suite from src against url with --requirements
// revision.
func requirements(t *testing.T, src, url, revision string) suiteResult {
	t.Helper()
	cmd := exec.Command(mcpnpm.Node(t), filepath.Join(src, "dist", "index.js"), "server", "--url", url, "--requirements", revision)
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput() // a failing scenario exits non-zero; the lines say which
	text := string(out)
	all, rest, _ := strings.Cut(text, "\nNot scored")
	unscored := map[string]bool{}
	for _, m := range notScoredLine.FindAllStringSubmatch(rest, -1) {
		unscored[m[2]] = true
	}
	var r suiteResult
	for _, m := range scenarioLine.FindAllStringSubmatch(all, -1) {
		if unscored[m[2]] {
			continue
		}
		r.scored++
		if m[1] == "✓" {
			r.passed++
		} else {
			r.failed = append(r.failed, m[2])
		}
	}
	if r.scored == 0 {
		t.Fatalf("no scenario ran against %s:\n%s", url, out)
	}
	return r
}

// TestConformanceSrcPassThrough2026: a 2026-07-28 client through
// /wunder/mcp/{server} in front of the stateless everything-server passes
// every scenario the revision requires, as the server does directly.
func TestConformanceSrcPassThrough2026(t *testing.T) {
	src := conformanceSrc(t)
	up := everythingServerRun(t, everythingServerBin(t), true)
	direct := requirements(t, src, up, "2026-07-28")
	through := requirements(t, src, gatewayFor(t, up)+"/wunder/mcp/everything", "2026-07-28")
	t.Logf("--requirements 2026-07-28, stateless upstream: direct %d/%d, through the pass-through %d/%d",
		direct.passed, direct.scored, through.passed, through.scored)
	if through.scored < 37 || through.passed != through.scored || through.scored != direct.scored {
		t.Errorf("through the pass-through %d/%d, failed %v; want all of direct's %d", through.passed, through.scored, through.failed, direct.scored)
	}
}

// TestConformanceSrcPassThrough2025: the 2025-11-25 requirements through
// the pass-through, in front of the everything-server with sessions (all
// pass) and stateless (what passes directly passes through).
func TestConformanceSrcPassThrough2025(t *testing.T) {
	src := conformanceSrc(t)
	bin := everythingServerBin(t)
	for _, stateless := range []bool{false, true} {
		up := everythingServerRun(t, bin, stateless)
		direct := requirements(t, src, up, "2025-11-25")
		through := requirements(t, src, gatewayFor(t, up)+"/wunder/mcp/everything", "2025-11-25")
		t.Logf("--requirements 2025-11-25, stateless upstream %v: direct %d/%d, through %d/%d",
			stateless, direct.passed, direct.scored, through.passed, through.scored)
		if through.scored != direct.scored || through.passed != direct.passed || (!stateless && through.passed != through.scored) {
			t.Errorf("stateless upstream %v: through %d/%d (failed %v), direct %d/%d (failed %v)", stateless,
				through.passed, through.scored, through.failed, direct.passed, direct.scored, direct.failed)
		}
	}
}
