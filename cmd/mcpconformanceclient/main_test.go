package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wunder/wunder/internal/testutil/mcpnpm"
)

// A summary line of the suite: "✓ name: n passed, m failed".
var summaryRE = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed`)

// TestClientConformance runs the official suite's core client scenarios
// (--suite core: initialize, tools_call, elicitation defaults, SSE retry and
// the OAuth authorization-code scenarios) against this command; every one
// must pass. Elicitation runs with the `mcp.elicitation: defaults` policy;
// the OAuth scenarios use the go-sdk's authorization-code handler plugged
// into wunder's client (ServerConfig.OAuth).
func TestClientConformance(t *testing.T) {
	node := mcpnpm.Node(t)
	suite := filepath.Join(mcpnpm.Dir(t), "node_modules", ".bin", "conformance")
	bin := filepath.Join(t.TempDir(), "mcpconformanceclient")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(node, suite, "client", "--command", bin, "--suite", "core")
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput() // a failing scenario exits non-zero; the summary says which
	lines := summaryRE.FindAllStringSubmatch(string(out), -1)
	passed := 0
	for _, m := range lines {
		if m[1] == "✓" && m[4] == "0" {
			passed++
		} else {
			t.Errorf("%s: %s checks passed, %s failed", m[2], m[3], m[4])
		}
	}
	t.Logf("client conformance (--suite core): %d/%d scenarios passed", passed, len(lines))
	if len(lines) < 18 || passed != len(lines) {
		t.Fatalf("%d/%d scenarios passed, want all of at least 18; output:\n%s", passed, len(lines), out)
	}
}
