package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A user whose run waits for an approval cannot start another (the run
// holds the user's slot until it is decided or times out): the 429 says
// which run, in which state, and where to decide it, in the request's
// language (issue 40). Deciding it frees the slot.
func TestBusyNamesThePausedRun(t *testing.T) {
	s := startServer(t, nil)
	var paused struct {
		RunID     string `json:"run_id"`
		SessionID string `json:"session_id"`
		State     string `json:"state"`
		Approvals []struct {
			ID string `json:"approval_id"`
		} `json:"approvals"`
	}
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"pat","question":"write a note","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`, nil), 200, &paused)
	if paused.State != "waiting_approval" || len(paused.Approvals) != 1 {
		t.Fatalf("the first run: %+v; want it waiting for one approval", paused)
	}
	decide := "/wunder/runs/" + paused.RunID + "/approvals"
	for _, c := range []struct{ lang, says string }{
		{"en", "busy: user pat already has run " + paused.RunID + " waiting_approval; decide it at " + decide + ", or cancel it, to start another"},
		{"zh-CN", "忙碌中：用户 pat 的运行 " + paused.RunID + " 正在等待决定（waiting_approval）；请在 " + decide + " 处理或取消它，再开始新的运行"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			r := restDo(t, "POST", s.url+"/wunder", `{"user_id":"pat","question":"hello","stream":false}`, map[string]string{"Accept-Language": c.lang})
			var p struct {
				Code, Detail string
				RunIDJ       string `json:"run_id"`
				SessionIDJ   string `json:"session_id"`
				RunStateJ    string `json:"run_state"`
				DecideURLJ   string `json:"decide_url"`
			}
			if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.StatusCode != 429 || r.Header.Get("Content-Type") != "application/problem+json" {
				t.Fatalf("the second run: %d %s %v", r.StatusCode, r.Header.Get("Content-Type"), err)
			}
			if p.Code != "busy" || p.RunIDJ != paused.RunID || p.SessionIDJ != paused.SessionID || p.RunStateJ != "waiting_approval" || p.DecideURLJ != decide {
				t.Errorf("the problem: %+v; want busy naming run %s of session %s, waiting_approval, decided at %s", p, paused.RunID, paused.SessionID, decide)
			}
			if p.Detail != c.says {
				t.Errorf("detail:\n%q\nwant\n%q", p.Detail, c.says)
			}
		})
	}
	// The decide URL is where the approval is: listed there, decided there.
	var listed struct {
		Approvals []struct {
			ID string `json:"approval_id"`
		} `json:"approvals"`
	}
	decodeInto(t, restDo(t, "GET", s.url+decide+"?user_id=pat", "", nil), 200, &listed)
	if len(listed.Approvals) != 1 || listed.Approvals[0].ID != paused.Approvals[0].ID {
		t.Fatalf("the approvals at the decide URL: %+v", listed)
	}
	restDo(t, "POST", s.url+decide+"/"+listed.Approvals[0].ID, `{"user_id":"pat","decision":"cancel"}`, nil)
	var after struct{ Answer string }
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"pat","question":"hello","stream":false}`, nil), 200, &after)
	if !strings.Contains(after.Answer, "hello") {
		t.Errorf("the run after the decision: %+v", after)
	}
}
