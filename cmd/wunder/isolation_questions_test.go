package main

import (
	"sync"
	"testing"
)

// questionRows are the isolation matrix's rows of questions (ask_user).
// Alice has two runs that ask her which environment; she answers the
// first, the admin the second, and bob reaches neither. (The isolation
// server allows four runs per user: these two wait beside the approval
// rows' two.)
func (f *fixture) questionRows() []matrixRow {
	var once sync.Once
	var waiting [2]struct {
		RunID     string `json:"run_id"`
		State     string `json:"state"`
		Questions []struct {
			ID string `json:"question_id"`
		} `json:"questions"`
	}
	setup := func(t *testing.T) {
		once.Do(func() {
			for i := range waiting {
				decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"call ask_user {\"question\":\"Which environment?\",\"options\":[\"staging\",\"prod\"]}","tool_names":["ask_user"],"stream":false}`,
					bearerOf(f.alice)), 200, &waiting[i])
				if waiting[i].State != "waiting_input" || len(waiting[i].Questions) != 1 {
					t.Fatalf("alice's run %d does not ask one question: %+v", i, waiting[i])
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
		{frontend: "REST", resource: "question", action: "answer", want: std,
			try: func(t *testing.T, c caller) string {
				setup(t)
				w := waiting[1]
				if c.name == "alice" {
					w = waiting[0]
				}
				r := f.rest(t, "POST", naming("/wunder/runs/"+w.RunID+"/input", c.names), `{"answer":"prod"}`, c.hdr)
				if r.StatusCode == 409 {
					return "HTTP 409 (answered by someone else)" // a 409 here would hide who answered
				}
				return restOutcome(r)
			}},
	}
}
