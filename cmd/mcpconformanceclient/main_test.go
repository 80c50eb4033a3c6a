package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wunder/wunder/internal/testutil/mcpnpm"
)

var passedRE = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

// TestClientConformance runs the official suite's client scenarios that
// wunder's MCP client implements against this command. Not covered: the
// auth/* scenarios (OAuth flows; wunder sends configured headers or a
// static bearer token) and elicitation-sep1034-client-defaults (wunder's
// runs do not answer elicitation requests).
func TestClientConformance(t *testing.T) {
	node := mcpnpm.Node(t)
	suite := filepath.Join(mcpnpm.Dir(t), "node_modules", ".bin", "conformance")
	bin := filepath.Join(t.TempDir(), "mcpconformanceclient")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, sc := range []string{"initialize", "tools_call", "sse-retry"} {
		cmd := exec.Command(node, suite, "client", "--command", bin, "--scenario", sc)
		cmd.Dir = t.TempDir()
		out, _ := cmd.CombinedOutput()
		m := passedRE.FindStringSubmatch(string(out))
		if m == nil || m[3] != "0" || m[1] != m[2] {
			t.Errorf("%s: not passed:\n%s", sc, out)
			continue
		}
		t.Logf("%s: %s/%s checks passed", sc, m[1], m[2])
	}
}
