package main

import (
	"sync"
	"testing"
)

// approvalRows are the isolation matrix's rows of approvals. Alice has two
// runs waiting for her approval (approval_mode suggest makes write_file
// ask); she decides the first, the admin the second, and bob reaches
// neither. (The isolation server allows two runs per user, so both can
// wait at once: a waiting run keeps its per-user slot.)
func (f *fixture) approvalRows() []matrixRow {
	var once sync.Once
	var waiting [2]struct {
		RunID     string `json:"run_id"`
		State     string `json:"state"`
		Approvals []struct {
			ID string `json:"approval_id"`
		} `json:"approvals"`
	}
	setup := func(t *testing.T) {
		once.Do(func() {
			for i := range waiting {
				decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"write a note","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`,
					bearerOf(f.alice)), 200, &waiting[i])
				if waiting[i].State != "waiting_approval" || len(waiting[i].Approvals) != 1 {
					t.Fatalf("alice's run %d does not wait for one approval: %+v", i, waiting[i])
				}
			}
		})
	}
	std := [4]string{ok, denied, forbidden, ok}
	naming := func(path, user string) string {
		if user == "" {
			return path
		}
		return path + sep(path) + "user_id=" + user
	}
	return []matrixRow{
		{frontend: "REST", resource: "approvals", action: "list", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				return listOutcome(f.rest(t, "GET", naming("/wunder/runs/"+waiting[0].RunID+"/approvals", c.names), "", c.hdr), waiting[0].Approvals[0].ID)
			}},
		// GET /wunder/pending: what waits for a person across runs; bob's
		// own list never holds alice's approval.
		{frontend: "REST", resource: "pending approvals and questions", action: "list", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				return listOutcome(f.rest(t, "GET", naming("/wunder/pending", c.names), "", c.hdr), waiting[0].Approvals[0].ID)
			}},
		{frontend: "REST", resource: "approval", action: "decide", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				w := waiting[1]
				if c.name == "alice" {
					w = waiting[0]
				}
				path := naming("/wunder/runs/"+w.RunID+"/approvals/"+w.Approvals[0].ID, c.names)
				r := f.rest(t, "POST", path, `{"decision":"reject","reason":"not now"}`, c.hdr)
				if r.StatusCode == 409 {
					return "HTTP 409 (decided by someone else)" // a 409 here would hide who decided
				}
				return restOutcome(r)
			}},
		// Answering an input-required task over A2A decides its approvals
		// (a2a/input.go). It runs after the REST rows: alice's and the
		// admin's answers find a decided approval or a finished task
		// (-32004: reached) or decide it (0); bob's must not find it.
		{frontend: "A2A 1.0", resource: "input-required task", action: "answer", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				w := waiting[1]
				if c.name == "alice" {
					w = waiting[0]
				}
				h := clone(c.hdr)
				if c.names != "" {
					h["X-Wunder-User"] = c.names
				}
				_, code := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","taskId":"`+w.RunID+
					`","parts":[{"text":"reject: not now"}]},"configuration":{"returnImmediately":true}}`, h)
				return a2aOutcome(code)
			}},
	}
}
