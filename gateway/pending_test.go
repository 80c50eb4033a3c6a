package gateway_test

import (
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type pendingPage struct {
	Runs []struct {
		Run     orchestrator.Run         `json:"run"`
		Pending []*orchestrator.Approval `json:"pending"`
	} `json:"runs"`
	Count      int    `json:"count"`
	NextCursor string `json:"next_cursor"`
}

// GET /wunder/pending lists the runs that wait for a person, each with
// what it waits for: a user sees their own (bob none), the operator every
// user's, page by page (a cursor of another filter is refused); a decided
// approval leaves the list; bad limits and cursors are 400 problems.
func TestPendingRoute(t *testing.T) {
	write := orchestratortest.Call("write_file", `{"path":"a.txt","content":"hi"}`)
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{ToolCalls: []orchestrator.ToolCall{write}}, {ToolCalls: []orchestrator.ToolCall{write}}, {Content: "done"}}})
	runs := map[string]waitingAnswer{}
	for _, u := range []string{"alice", "carol"} {
		w := decode[waitingAnswer](t, e.do(t, "POST", "/wunder",
			`{"user_id":"`+u+`","question":"write","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`), 200)
		if w.State != "waiting_approval" || len(w.Approvals) != 1 {
			t.Fatalf("%s's run = %+v", u, w)
		}
		runs[u] = w
	}
	alice := decode[pendingPage](t, e.do(t, "GET", "/wunder/pending?user_id=alice", ""), 200)
	if len(alice.Runs) != 1 || alice.Count != 1 || alice.NextCursor != "" || alice.Runs[0].Run.ID != runs["alice"].RunID ||
		alice.Runs[0].Run.Question != "write" || alice.Runs[0].Pending[0].ID != runs["alice"].Approvals[0].ID || alice.Runs[0].Pending[0].Tool != "write_file" {
		t.Fatalf("alice's pending = %+v", alice)
	}
	if bob := decode[pendingPage](t, e.do(t, "GET", "/wunder/pending?user_id=bob", ""), 200); len(bob.Runs) != 0 || bob.Count != 0 {
		t.Fatalf("bob's pending = %+v", bob)
	}
	// every user's, one run a page, newest first
	first := decode[pendingPage](t, e.do(t, "GET", "/wunder/pending?limit=1", ""), 200)
	if len(first.Runs) != 1 || first.Runs[0].Run.ID != runs["carol"].RunID || first.NextCursor == "" {
		t.Fatalf("page 1 = %+v", first)
	}
	second := decode[pendingPage](t, e.do(t, "GET", "/wunder/pending?limit=1&cursor="+first.NextCursor, ""), 200)
	if len(second.Runs) != 1 || second.Runs[0].Run.ID != runs["alice"].RunID || second.NextCursor != "" {
		t.Fatalf("page 2 = %+v", second)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/pending?user_id=alice&limit=1&cursor="+first.NextCursor, ""), 400, "invalid_argument")
	wantProblem(t, e.do(t, "GET", "/wunder/pending?cursor=nope", ""), 400, "invalid_argument")
	wantProblem(t, e.do(t, "GET", "/wunder/pending?limit=-1", ""), 400, "invalid_argument")
	wantProblem(t, e.do(t, "GET", "/wunder/pending?user_id=a%00b", ""), 400, "invalid_argument")

	decode[orchestrator.Approval](t, e.do(t, "POST", "/wunder/runs/"+runs["carol"].RunID+"/approvals/"+runs["carol"].Approvals[0].ID+"?user_id=carol", `{"decision":"reject"}`), 200)
	all := decode[pendingPage](t, e.do(t, "GET", "/wunder/pending?limit=500", ""), 200)
	for _, r := range all.Runs {
		if r.Run.ID == runs["carol"].RunID && len(r.Pending) != 0 {
			t.Fatalf("carol's decided approval is still pending: %+v", r)
		}
	}
	if all.Count != 1 {
		t.Fatalf("after carol's decision: count %d; want alice's 1 (%+v)", all.Count, all)
	}
}
