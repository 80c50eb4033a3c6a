package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// POST /wunder/runs and POST /wunder with an Idempotency-Key: a retry
// gets the first run (its ids, its answer), a user's key is their own,
// reuse for another question is 409 naming the run, a bad key 400.
func TestIdempotencyKeyHeader(t *testing.T) {
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "alice's answer"}, {Content: "bob's answer"}}})
	submit := func(user, question, key string) (*http.Response, orchestrator.Run) {
		t.Helper()
		resp := e.do(t, "POST", "/wunder/runs", `{"user_id":"`+user+`","question":"`+question+`"}`, "Idempotency-Key", key)
		var run orchestrator.Run
		if resp.StatusCode == http.StatusAccepted {
			if err := json.NewDecoder(resp.Body).Decode(&run); err != nil {
				t.Fatal(err)
			}
		}
		return resp, run
	}
	resp, first := submit("alice", "q", "k-1")
	if resp.StatusCode != http.StatusAccepted || first.ID == "" {
		t.Fatalf("first submit: %d", resp.StatusCode)
	}
	readSSE(t, e.do(t, "GET", "/wunder/runs/"+first.ID+"/events?user_id=alice", "").Body) // to its end

	resp, again := submit("alice", "q", "k-1")
	if resp.StatusCode != http.StatusAccepted || again.ID != first.ID || resp.Header.Get("X-Run-Id") != first.ID {
		t.Fatalf("retried submit: %d, run %s; want %s", resp.StatusCode, again.ID, first.ID)
	}
	// POST /wunder with the key answers the same run's answer, starting nothing.
	var answer struct {
		RunID  string `json:"run_id"`
		Answer string `json:"answer"`
	}
	blocking := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"q","stream":false}`, "Idempotency-Key", "k-1")
	if err := json.NewDecoder(blocking.Body).Decode(&answer); err != nil || answer.RunID != first.ID || answer.Answer != "alice's answer" {
		t.Fatalf("POST /wunder with the key = %+v, %v; want run %s's answer", answer, err, first.ID)
	}

	resp, bobs := submit("bob", "q", "k-1")
	if resp.StatusCode != http.StatusAccepted || bobs.ID == first.ID {
		t.Fatalf("bob's same key: %d, run %s (alice's is %s)", resp.StatusCode, bobs.ID, first.ID)
	}

	resp, _ = submit("alice", "another question", "k-1")
	p := wantProblem(t, resp, http.StatusConflict, "conflict")
	if !strings.Contains(p.Detail, first.ID) {
		t.Fatalf("reuse refused without naming the run: %+v", p)
	}
	resp, _ = submit("alice", "q", "has space")
	wantProblem(t, resp, http.StatusBadRequest, "invalid_argument")
	list, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "alice"})
	if err != nil || len(list) != 1 {
		t.Fatalf("alice's runs: %d, %v; want 1", len(list), err)
	}
}
