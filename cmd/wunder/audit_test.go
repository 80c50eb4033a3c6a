package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The audit and the meter end to end: every tool call of a run is a
// record of GET /wunder/admin/audit, filtered as asked and paged by
// cursor; a denied one says why; GET /wunder/admin/usage sums each user's
// runs, tokens, run time and calls, and /metrics carries the same figures
// per user, up to observability.metrics_max_users users.
func TestAuditUsageAndUserMetrics(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Observability.MetricsMaxUsers = 2
		c.Tools.AdminOnly = []string{"execute_command"}
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob", "carol"} {
		postWunder(t, s.url, admin, map[string]any{"user_id": u, "question": "please write a note and read it back",
			"tool_names": []string{"write_file", "read_file"}, "tool_call_mode": "function_call"})
	}
	// Alice may not run commands (tools.admin_only): a run naming the
	// tool is refused before it starts, so it is not a call.
	r := f.rest(t, "POST", "/wunder", `{"user_id":"alice","question":"hi","tool_names":["execute_command"],"stream":false}`, admin)
	if r.StatusCode != http.StatusBadRequest {
		t.Fatalf("a run naming an admin-only tool for a user: %d", r.StatusCode)
	}
	r.Body.Close()

	type record struct {
		UserID   string `json:"user_id"`
		Tool     string `json:"tool"`
		Via      string `json:"via"`
		Outcome  string `json:"outcome"`
		FrontEnd string `json:"front_end"`
		RunID    string `json:"run_id"`
	}
	var page struct {
		Records    []record `json:"records"`
		NextCursor string   `json:"next_cursor"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/audit?user_id=alice", "", admin), 200, &page)
	if len(page.Records) != 2 {
		t.Fatalf("alice's audit = %+v, want her 2 calls", page.Records)
	}
	for _, rec := range page.Records {
		if rec.UserID != "alice" || rec.Via != "run" || rec.Outcome != "allowed" || rec.FrontEnd != "rest" || rec.RunID == "" {
			t.Errorf("alice's record %+v", rec)
		}
	}
	if page.Records[0].Tool != "read_file" || page.Records[1].Tool != "write_file" {
		t.Errorf("alice's records, newest first: %+v", page.Records)
	}
	// Pages of one cover the 6 calls once each.
	seen, cursor := 0, ""
	for range 10 {
		decodeInto(t, f.rest(t, "GET", "/wunder/admin/audit?limit=1&cursor="+cursor, "", admin), 200, &page)
		seen += len(page.Records)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if seen != 6 {
		t.Errorf("paging the audit saw %d records, want 6", seen)
	}
	for _, bad := range []string{"outcome=maybe", "via=carrier-pigeon", "since=yesterday", "cursor=bm8tZG90", "user_id=%00"} {
		if r := f.rest(t, "GET", "/wunder/admin/audit?"+bad, "", admin); r.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /wunder/admin/audit?%s = %d, want 400", bad, r.StatusCode)
		}
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/audit?outcome=denied", "", admin), 200, &page)
	if len(page.Records) != 0 {
		t.Errorf("denied records = %+v, want none", page.Records)
	}

	var usage struct {
		Users []struct {
			UserID       string  `json:"user_id"`
			Runs         int64   `json:"runs"`
			ToolCalls    int64   `json:"tool_calls"`
			InputTokens  int64   `json:"input_tokens"`
			OutputTokens int64   `json:"output_tokens"`
			RunSeconds   float64 `json:"run_seconds"`
		} `json:"users"`
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/usage?since=1h", "", admin), 200, &usage)
	if len(usage.Users) != 3 {
		t.Fatalf("usage = %+v, want 3 users", usage.Users)
	}
	for _, u := range usage.Users {
		if u.Runs != 1 || u.ToolCalls != 2 || u.InputTokens <= 0 || u.OutputTokens <= 0 || u.RunSeconds <= 0 {
			t.Errorf("usage of %s = %+v", u.UserID, u)
		}
	}

	_, m := scrape(t, s.url, admin)
	want := map[string]float64{
		`wunder_tool_decisions_total{frontend="rest",outcome="allowed",via="run"}`: 6,
		`wunder_user_runs_total{user="alice"}`:                                     1,
		`wunder_user_runs_total{user="bob"}`:                                       1,
		`wunder_user_runs_total{user="_other"}`:                                    1, // carol: past metrics_max_users
		`wunder_user_tool_calls_total{outcome="allowed",user="alice"}`:             2,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	var tokens float64
	for k, v := range m {
		if strings.HasPrefix(k, `wunder_user_tokens_total{kind="input",user="alice"}`) {
			tokens = v
		}
	}
	if tokens <= 0 {
		t.Errorf("alice's input tokens are not counted: %v", fmt.Sprint(tokens))
	}
}
