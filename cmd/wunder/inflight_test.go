package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// Requests in flight per principal through the wired server
// (auth.max_in_flight): a user holding as many event streams as the limit
// is refused anything more, in each protocol's shape with Retry-After and
// the limit named; another user and the API key are not; and a stream the
// user closes frees its slot.
func TestMaxInFlightPerPrincipal(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Auth.MaxInFlight = 3
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"if-a", "if-b"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	a, b := bearerOf(f.login(t, "if-a")), bearerOf(f.login(t, "if-b"))

	// a's run hangs in its model call; a follows it three times.
	var run struct {
		RunID string `json:"run_id"`
	}
	decodeInto(t, f.rest(t, "POST", "/wunder/runs", `{"question":"#hang until cancelled"}`, a), 202, &run)
	var streams []*http.Response
	for range 3 {
		r := f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/events", "", a)
		mustStatus(t, r, 200)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("follow: Content-Type %q", ct)
		}
		streams = append(streams, r)
	}

	refused := f.rest(t, "GET", "/wunder/tools", "", a)
	var problem struct{ Code, Detail string }
	decodeInto(t, refused, 429, &problem)
	if refused.Header.Get("Retry-After") != "1" || problem.Code != "too_many_in_flight" || !strings.Contains(problem.Detail, "3") || !strings.Contains(problem.Detail, "auth.max_in_flight") {
		t.Fatalf("REST refusal: Retry-After %q, %+v; want too_many_in_flight naming the limit", refused.Header.Get("Retry-After"), problem)
	}
	mustStatus(t, f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/events", "", a), 429) // a fourth stream too

	var ce struct{ Code, Message string }
	decodeInto(t, f.rest(t, "POST", "/wunder.v1.ToolService/ListTools", `{}`, map[string]string{"Authorization": a["Authorization"], "Connect-Protocol-Version": "1"}), 429, &ce)
	if ce.Code != "resource_exhausted" || !strings.Contains(ce.Message, "auth.max_in_flight") {
		t.Fatalf("Connect refusal = %+v; want resource_exhausted naming the limit", ce)
	}
	var rpc struct{ Error *a2awire.Error }
	decodeInto(t, f.rest(t, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, a), 429, &rpc)
	if after, ok := orchestrator.RetryAfter(rpc.Error); rpc.Error == nil || !errors.Is(rpc.Error, orchestrator.ErrBusy) || !ok || after <= 0 {
		t.Fatalf("A2A refusal = %+v; want busy with a retry delay", rpc.Error)
	}

	mustStatus(t, f.rest(t, "GET", "/wunder/tools", "", b), 200)                  // b's slots are b's
	mustStatus(t, f.rest(t, "GET", "/wunder/tools?user_id=if-a", "", admin), 200) // the API key is not limited, acting for a
	mustStatus(t, f.rest(t, "GET", "/healthz", "", a), 200)                       // nor are probes

	// A closed stream frees its slot once the server sees it gone: the
	// cancel goes through then. (Each try is refused or is the cancel: a
	// request the client saw answered may still hold its slot for the
	// moment its handler takes to return, so nothing else is sent.)
	_ = streams[0].Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.rest(t, "POST", "/wunder/runs/"+run.RunID+"/cancel", "", a)
		_ = r.Body.Close()
		if r.StatusCode == http.StatusAccepted {
			break
		}
		if r.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("cancel after closing a stream: %d; want 202 once its slot is free", r.StatusCode)
		}
	}
}
