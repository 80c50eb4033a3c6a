package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/npmpeers"
)

// The @a2a-js/sdk 1.3.0 client (testdata/a2a-js/artifacts.mjs) against
// the real server, in both protocol versions: the TCK script's file
// artifact with its bytes, file by URL (which serves them) and data
// artifact, blocking and streamed; the demo model's A2UI form as a
// DataPart marked application/json+a2ui when the client activates the
// extension (with the SDK's withA2AExtensions), in the answer, GetTask and
// a stream, and as its text fallback when it does not; and the user's
// action, a DataPart marked application/a2ui+json, which reaches the model
// (the demo answers quoting it). a2a-go covers the same in
// TestTCKScriptArtifacts and TestA2UIOverA2A.
func TestJSSDKArtifactsAndA2UI(t *testing.T) {
	npmpeers.Require(t, "node", "@a2a-js/sdk peers")
	dir := npmpeers.Dir(t, "a2a-js", "@a2a-js/sdk peers", "@a2a-js/sdk/package.json")
	tck := startTCKServer(t)
	demo := startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.Model = config.ProviderScripted, "demo"
		c.LLM.Models, c.LLM.Default = map[string]config.Model{"demo": m}, "demo"
		c.A2A.Server.UserID = "agent"
		c.A2A.Server.ToolNames = []string{"a2ui"}
	})
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			start := time.Now()
			out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "artifacts.mjs"), tck.url, demo.url, version).CombinedOutput()
			t.Logf("node artifacts.mjs %s (%s):\n%s", version, time.Since(start).Round(time.Millisecond), out)
			if err != nil || !strings.Contains(string(out), "DONE") {
				t.Fatalf("the JS client failed: %v", err)
			}
		})
	}
}
