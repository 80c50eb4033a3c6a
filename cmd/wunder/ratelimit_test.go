package main

import (
	"errors"
	"strconv"
	"testing"

	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// Rate limits per principal through the wired server: a user past their
// burst is refused in the shape of each protocol with Retry-After, another
// user's bucket is their own, and probes are never limited. The refill
// rate is so slow that no token comes back during the test.
func TestRateLimitPerPrincipal(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Auth.RateLimit = config.RateLimit{PerSecond: 0.001, Burst: 2}
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"rl-a", "rl-b"} { // the API key's two requests
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	mustStatus(t, f.rest(t, "GET", "/wunder/tools", "", admin), 429) // the API key's bucket is empty
	a, b := bearerOf(f.login(t, "rl-a")), bearerOf(f.login(t, "rl-b"))
	mustStatus(t, f.rest(t, "GET", "/wunder/tools", "", a), 200)
	mustStatus(t, f.rest(t, "GET", "/wunder/tools", "", a), 200)

	refused := f.rest(t, "GET", "/wunder/tools", "", a)
	var problem struct{ Code string }
	decodeInto(t, refused, 429, &problem)
	if ra, _ := strconv.Atoi(refused.Header.Get("Retry-After")); ra < 1 || problem.Code != "rate_limited" {
		t.Fatalf("REST refusal: Retry-After %q, code %q", refused.Header.Get("Retry-After"), problem.Code)
	}

	connectHdr := map[string]string{"Authorization": a["Authorization"], "Connect-Protocol-Version": "1"}
	var ce struct {
		Code    string
		Details []struct{ Type string }
	}
	decodeInto(t, f.rest(t, "POST", "/wunder.v1.ToolService/ListTools", `{}`, connectHdr), 429, &ce)
	if ce.Code != "resource_exhausted" || len(ce.Details) == 0 || ce.Details[0].Type != "google.rpc.RetryInfo" {
		t.Fatalf("Connect refusal = %+v; want resource_exhausted with RetryInfo", ce)
	}

	resp := f.rest(t, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, a)
	var rpc struct {
		Error *a2awire.Error
	}
	decodeInto(t, resp, 429, &rpc)
	// The peer's client reads it back as busy, with the delay.
	if after, ok := orchestrator.RetryAfter(rpc.Error); rpc.Error == nil || rpc.Error.Code != -32000 ||
		!errors.Is(rpc.Error, orchestrator.ErrBusy) || !ok || after <= 0 {
		t.Fatalf("A2A refusal = %+v; want -32000 that reads as busy with a retry delay", rpc.Error)
	}

	var st struct {
		Error struct {
			Status  string
			Details []map[string]any
		}
	}
	decodeInto(t, f.rest(t, "GET", "/a2a/v1/tasks", "", a), 429, &st)
	if st.Error.Status != "RESOURCE_EXHAUSTED" || len(st.Error.Details) != 2 || st.Error.Details[0]["reason"] != "RATE_LIMITED" {
		t.Fatalf("A2A HTTP+JSON refusal = %+v; want a google.rpc.Status RESOURCE_EXHAUSTED with the reason and RetryInfo", st.Error)
	}

	mustStatus(t, f.rest(t, "GET", "/wunder/tools", "", b), 200) // b's own bucket
	for range 5 {
		mustStatus(t, f.rest(t, "GET", "/healthz", "", a), 200) // probes are open
	}
}
