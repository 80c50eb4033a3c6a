package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
)

// A user keeps at most MaxSessionsPerUser sessions per route: on
// /wunder/mcp and on a pass-through route, a third session of alice's
// ends her least recently used one (its client is told 404, the session
// is not found), her other two and bob's go on, and her sessions on the
// other route are counted apart.
func TestSessionsPerUserAreCapped(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	pass := up.gatewayTo(t, mcpserver.Options{MaxSessionsPerUser: 2}, map[string]string{"alice": "alice", "bob": "bob"})
	own := strings.TrimSuffix(pass, "/up")
	as := func(user string) *http.Client { return &http.Client{Transport: bearer(user)} }
	// One route after the other, the first route's sessions still open
	// (their cleanup comes at the test's end): each route counts its own.
	for _, url := range []string{own, pass} {
		func() {
			list := func(cs *mcp.ClientSession) error {
				_, err := cs.ListTools(t.Context(), nil)
				return err
			}
			first := connectSession(t, url, as("alice"), nil)
			bob := connectSession(t, url, as("bob"), nil)
			if err := list(first); err != nil {
				t.Fatalf("alice's first session: %v", err)
			}
			second := connectSession(t, url, as("alice"), nil)
			third := connectSession(t, url, as("alice"), nil)
			// Uses are recorded to the minute: first, the oldest, is the
			// least recently used.
			if err := list(first); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Fatalf("%s: alice's least recently used session over the cap: %v; want it not found", url, err)
			}
			for name, cs := range map[string]*mcp.ClientSession{"second": second, "third": third, "bob's": bob} {
				if err := list(cs); err != nil {
					t.Errorf("%s: %s session: %v", url, name, err)
				}
			}
		}()
	}
}
