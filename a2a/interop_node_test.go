package a2a_test

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/npmpeers"
)

// The @a2a-js/sdk 1.3.0 client (testdata/a2a-js/client.mjs) drives wunder
// in both protocol versions: send, get, list, stream, resubscribe after a
// dropped connection, the terminal-subscribe and not-cancelable errors,
// cancel, not found, and a push notification to a local receiver.
func TestJSSDKClient(t *testing.T) {
	dir := a2aJSPeers(t)
	for _, version := range []string{"1.0", "0.3"} {
		t.Run(version, func(t *testing.T) {
			e := newEnv(t, pushOpts(true))
			e.mountRelease()
			hook, deliveries := receiver(t)
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			start := time.Now()
			out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "client.mjs"), e.url, version, hook).CombinedOutput()
			t.Logf("node client.mjs %s (%s):\n%s", version, time.Since(start).Round(time.Millisecond), out)
			if err != nil || !strings.Contains(string(out), "DONE") {
				t.Fatalf("the JS client failed: %v", err)
			}
			d := waitState(t, deliveries, stateOfPush, "completed")
			if d.auth != "Bearer js-secret-"+version {
				t.Fatalf("push Authorization %q", d.auth)
			}
		})
	}
}

// mountRelease adds POST /test/release, which lets one held model call go
// on (the JS script cannot reach the model otherwise).
func (e *env) mountRelease() {
	e.extra.HandleFunc("POST /test/release", func(w http.ResponseWriter, _ *http.Request) {
		e.model.Release()
		w.WriteHeader(http.StatusNoContent)
	})
}

// a2aJSPeers returns testdata/a2a-js with @a2a-js/sdk installed.
func a2aJSPeers(t *testing.T) string {
	t.Helper()
	npmpeers.Require(t, "node", "@a2a-js/sdk peers")
	return npmpeers.Dir(t, "a2a-js", "@a2a-js/sdk peers", "@a2a-js/sdk/package.json")
}
