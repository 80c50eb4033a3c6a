package main

import (
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
)

// pausedRun is POST /wunder's answer for a run that paused.
type pausedRun struct {
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	State     string `json:"state"`
}

// runEventsToEnd follows a run's events to the end and returns the whole stream:
// it returns when the run has ended.
func runEventsToEnd(t *testing.T, s *server, user, runID string) string {
	t.Helper()
	r := restDo(t, "GET", s.url+"/wunder/runs/"+runID+"/events?user_id="+user, "", nil)
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("the events of %s: %d %v", runID, r.StatusCode, err)
	}
	return string(b)
}

// What waits for the user (issue 40): a run paused on an approval and one
// on an ask_user question, both started through the API, show in the
// nav's badge (2) and on the page; "Open in chat" opens the question's
// run in the chat; the approval is decided in the dialog opened from the
// list, the question answered by clicking its option; the badge counts
// down and goes, the list says nothing waits, and the API says the
// approval was approved, the question answered, and both runs finished.
func TestConsolePendingBadgeAndList(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Concurrency.PerUser = 2 }) // two paused runs at once
	var appr, ques pausedRun
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"dana","question":"write a note","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`, nil), 200, &appr)
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"dana","question":"call ask_user {\"question\":\"Which environment?\",\"options\":[\"staging\",\"prod\"]}","tool_names":["ask_user"],"stream":false}`, nil), 200, &ques)
	if appr.State != "waiting_approval" || ques.State != "waiting_input" {
		t.Fatalf("the paused runs: %+v %+v", appr, ques)
	}
	// another user's paused run is not dana's to see
	var other pausedRun
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"erik","question":"write a note","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`, nil), 200, &other)

	b := openAnon(t, s, "dana")
	b.until("the badge", `document.querySelector('nav a[href="#/pending"] .pending-count')?.textContent.startsWith('2')`)
	b.shot("pending-badge")
	b.do("the list", chromedp.Click(chromedp.CSS(`nav a[href="#/pending"]`)), chromedp.WaitVisible(chromedp.CSS(`li.pending-item`)))
	b.until("both items, and only dana's", `document.querySelectorAll('li.pending-item').length === 2 && `+
		`document.querySelector('li.pending-item[data-kind="approval"]').dataset.runId === '`+appr.RunID+`' && `+
		`document.querySelector('li.pending-item[data-kind="approval"] code').textContent === 'write_file' && `+
		`document.querySelector('li.pending-item[data-kind="question"] .question-text').textContent === 'Which environment?' && `+
		`!document.querySelector('li.pending-item[data-run-id="`+other.RunID+`"]')`)
	b.shot("pending-list")
	b.axe("pending list")

	b.do("open the question's run in the chat", chromedp.Click(chromedp.CSS(`li.pending-item[data-kind="question"] button.open-chat`)))
	b.until("the chat with the question", `location.hash === '#/chat' && document.querySelector('section.question .question-text')?.textContent === 'Which environment?' && `+lastRun+`?.dataset.runId === '`+ques.RunID+`'`)
	b.do("back to the list", chromedp.Click(chromedp.CSS(`nav a[href="#/pending"]`)), chromedp.WaitVisible(chromedp.CSS(`li.pending-item[data-kind="approval"] button.decide`)))

	b.do("decide the approval", chromedp.Click(chromedp.CSS(`li.pending-item[data-kind="approval"] button.decide`)), chromedp.WaitVisible(chromedp.CSS(`dialog.approval[open]`)))
	b.until("the dialog names the tool", `document.querySelector('dialog.approval[open] h2').textContent.includes('write_file')`)
	b.axe("pending, approval dialog")
	b.do("approve", chromedp.Click(chromedp.Search(`//dialog//button[text()="Approve"]`)))
	b.until("the approval gone, the badge at 1", `!document.querySelector('dialog.approval[open]') && !document.querySelector('li.pending-item[data-kind="approval"]') && `+
		`document.querySelector('nav a[href="#/pending"] .pending-count')?.textContent.startsWith('1')`)

	b.do("answer prod", chromedp.Click(chromedp.Search(`//li[@data-kind="question"]//button[text()="prod"]`)))
	b.until("nothing waits", `!document.querySelector('li.pending-item') && !document.querySelector('nav a[href="#/pending"] .pending-count') && !!document.querySelector('.pending-page p.muted')`)
	b.shot("pending-none")

	for _, c := range []struct{ run, want string }{{appr.RunID, `"state":"approved"`}, {ques.RunID, `"answer":"prod"`}} {
		r := restDo(t, "GET", s.url+"/wunder/runs/"+c.run+"/approvals?user_id=dana", "", nil)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.Contains(string(body), c.want) {
			t.Errorf("run %s after the clicks: %d %s; want %s", c.run, r.StatusCode, body, c.want)
		}
		if ev := runEventsToEnd(t, s, "dana", c.run); !strings.Contains(ev, "event: final") || !strings.Contains(ev, `"state":"finished"`) {
			t.Errorf("run %s did not finish: %s", c.run, ev[max(0, len(ev)-400):])
		}
	}
	r := restDo(t, "GET", s.url+"/wunder/pending?user_id=erik", "", nil)
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), other.RunID) || !strings.Contains(string(body), `"count":1`) {
		t.Errorf("erik's run should still wait: %s", body)
	}
	b.clean()
}
