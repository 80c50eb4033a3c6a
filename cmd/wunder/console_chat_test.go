package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// The chat as issue 40 wants it, in the same headless chromium as
// console_browser_test.go: answers rendered as sanitised Markdown, a
// reopened session whose round made two calls, and the busy indicator
// with its stop button.

// markdownAnswer is a model's answer with what the console renders (a
// heading, a GFM table, a list, highlighted Go, a link) and what it must
// not run or load (a script element, an img with onerror, a javascript:
// link, one hidden by a tab, a remote image).
const markdownAnswer = "## Results\n\n" +
	"| file | size |\n| :--- | ---: |\n| a.txt | 12 |\n| b.txt | 7 |\n\n" +
	"- first\n- second\n\n" +
	"```go\nfunc main() { fmt.Println(\"hi\") }\n```\n\n" +
	"See [the docs](https://example.com/docs), [bad](javascript:window.__pwned=3) and [tabbed](<java\tscript:window.__pwned=4>).\n\n" +
	"<script>window.__pwned=1</script>\n\n" +
	"Inline <img src=x onerror=\"window.__pwned=2\"> and ![pixel](https://tracker.example/p.png).\n"

func TestConsoleMarkdownAnswer(t *testing.T) {
	s := startServer(t, nil)
	s.fake.Model = fakemodel.Reply(func(*orchestrator.ModelRequest) fakemodel.Turn { return fakemodel.Turn{Content: markdownAnswer} })
	b := openAnon(t, s, "mia")
	b.ask("show me a table")
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	md := lastRun + `.querySelector('.markdown.text')`
	b.until("the GFM table", md+`?.querySelectorAll('table tbody tr').length === 2`)
	if got := b.eval(`[...` + md + `.querySelectorAll('table tr')].map(r => [...r.cells].map(c => c.textContent + (c.className ? '(' + c.className + ')' : '')).join('|')).join('/')`); got != "file(align-left)|size(align-right)/a.txt(align-left)|12(align-right)/b.txt(align-left)|7(align-right)" {
		t.Errorf("the table: %q", got)
	}
	if got := b.eval(`[...` + md + `.querySelectorAll('ul li')].map(l => l.textContent).join(',') + ' ' + ` + md + `.querySelector('h3')?.textContent`); got != "first,second Results" {
		t.Errorf("the list and heading: %q", got)
	}
	b.until("the Go code highlighted (its chunk loaded on demand)", `[...`+md+`.querySelectorAll('pre.code .hljs-keyword')].some(e => e.textContent === 'func')`)
	if got := b.eval(`[...` + md + `.querySelectorAll('a')].map(a => a.getAttribute('href') + ' ' + a.target + ' ' + a.rel).join('; ')`); got != "https://example.com/docs _blank noopener noreferrer nofollow; https://tracker.example/p.png _blank noopener noreferrer nofollow" {
		t.Errorf("the links: %q; want the docs link and the image as a link, neither javascript: link", got)
	}
	// Nothing ran, nothing was loaded; the raw HTML is there as text.
	if got := b.eval(`[typeof window.__pwned, ` + md + `.querySelectorAll('script, img, iframe, object, [onerror]').length, ` + md + `.textContent.includes('<script>window.__pwned=1</script>'), ` + md + `.textContent.includes('<img src=x onerror=')].join(' ')`); got != "undefined 0 true true" {
		t.Errorf("injection: pwned, elements, script as text, img as text = %s; want undefined 0 true true", got)
	}
	b.shot("markdown")
	b.axe("markdown answer")
	b.do("dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.until("the dark theme", `document.documentElement.dataset.theme === 'dark'`)
	b.axe("markdown answer, dark")
	b.clean() // no CSP violation, no request to another origin (the remote image was never loaded)
}

// twoCalls is a model that writes two files in one round, then answers.
func twoCalls(req *orchestrator.ModelRequest) fakemodel.Turn {
	if _, results := fakemodel.Conversation(req); len(results) > 0 {
		return fakemodel.Turn{Content: "wrote both"}
	}
	return fakemodel.Turn{Content: "Writing two notes.", ToolCalls: []orchestrator.ToolCall{
		{ID: "call_a", Name: "write_file", Arguments: []byte(`{"path":"a.txt","content":"alpha"}`)},
		{ID: "call_b", Name: "write_file", Arguments: []byte(`{"path":"b.txt","content":"beta"}`)},
	}}
}

// A session whose round made two calls, reopened: each card shows its own
// arguments and result, in both tool-call modes (issue 40's bug: in
// tool_call mode both results came in one "tool_response:" message, read
// as one JSON, and both cards stayed "running…").
func TestConsoleReopenTwoCallsInOneRound(t *testing.T) {
	s := startServer(t, nil)
	s.fake.Model = fakemodel.Reply(twoCalls)
	for _, mode := range []string{"tool_call", "function_call"} {
		t.Run(mode, func(t *testing.T) {
			user := "reopen-" + strings.ReplaceAll(mode, "_", "")
			body, _ := json.Marshal(map[string]any{"user_id": user, "question": "write two notes", "tool_names": []string{"write_file"}, "tool_call_mode": mode, "stream": false})
			var res struct {
				SessionID string `json:"session_id"`
				Answer    string `json:"answer"`
			}
			if r := restDo(t, "POST", s.url+"/wunder", string(body), nil); r.StatusCode != 200 || json.NewDecoder(r.Body).Decode(&res) != nil || res.Answer != "wrote both" {
				t.Fatalf("the run: %d %+v", r.StatusCode, res)
			}
			b := openAnon(t, s, user)
			b.do("open the session", chromedp.Click(chromedp.CSS(`.sessions button.session`)))
			b.until("two write_file cards", `document.querySelectorAll('.transcript details.tool[data-tool="write_file"]').length === 2`)
			b.eval(`(() => { document.querySelectorAll('details.tool').forEach(d => d.open = true); return '' })()`)
			got := b.eval(`[...document.querySelectorAll('details.tool[data-tool="write_file"]')].map(d => [d.querySelector('summary').textContent.includes('running'), JSON.parse(d.querySelector('pre').textContent).path, d.querySelectorAll('pre').length, d.querySelector('pre:last-of-type').textContent.length > 0].join(',')).join(' / ')`)
			if got != "false,a.txt,2,true / false,b.txt,2,true" {
				t.Errorf("the cards (running?, path, pres, result?): %q; want each with its own arguments and a result", got)
			}
			b.shot("reopen-" + mode)
			b.clean()
		})
	}
}

// The busy indicator stays while the run works, streamed text or not, and
// the stop button cancels the run (POST /wunder/runs/{id}/cancel): the
// run ends cancelled, as the API says too.
func TestConsoleBusyAndStop(t *testing.T) {
	s := startServer(t, nil)
	// a model that streams its first words, then stalls mid-answer
	s.fake.Model = fakemodel.Reply(func(*orchestrator.ModelRequest) fakemodel.Turn {
		return fakemodel.Turn{Content: "Once upon a time", Hang: true}
	})
	b := openAnon(t, s, "stopper")
	b.ask("tell me a long story")
	b.until("the first streamed text", lastRun+`?.querySelector('.text')?.textContent.length > 0`)
	b.until("the busy indicator with it", lastRun+`?.dataset.state === 'running' && !!`+lastRun+`.querySelector('.busy[role="status"]')`)
	b.shot("busy")
	runID := b.eval(lastRun + `.dataset.runId`)
	b.do("stop", chromedp.Click(chromedp.CSS(`.composer button.stop`)))
	b.until("the run to end cancelled", lastRun+`?.dataset.state === 'cancelled' && !`+lastRun+`.querySelector('.busy')`)
	b.until("the send button back", `!document.querySelector('.composer button.stop') && !!document.querySelector('.composer button[type="submit"]')`)
	var got struct{ State string }
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/runs/"+runID+"?user_id=stopper", "", nil).Body).Decode(&got); err != nil || got.State != "cancelled" {
		t.Fatalf("the run after stop: %+v %v", got, err)
	}
	b.clean()
}

// A session renamed in the side panel: the new title is the server's
// (GET /wunder/sessions/{id} says so), it survives a reload, and Escape
// leaves a rename without one.
func TestConsoleRenameSession(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "renamer")
	b.ask("hello there")
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	b.until("the session in the list", `document.querySelector('.sessions button.session')?.textContent === 'hello there'`)
	id := b.eval(`document.querySelector('.sessions li.session-row').dataset.sessionId`)
	b.do("rename it", chromedp.Click(chromedp.CSS(`.sessions button.rename`)), chromedp.WaitVisible(chromedp.CSS(`.rename-form input`)))
	b.until("the title to edit, selected", `document.activeElement === document.querySelector('.rename-form input') && document.querySelector('.rename-form input').value === 'hello there'`)
	b.shot("rename")
	b.axe("rename form")
	b.do("type a new title", chromedp.SendKeys(chromedp.CSS(`.rename-form input`), "Trip notes: Zürich\r"))
	b.until("the new title in the list", `!document.querySelector('.rename-form') && document.querySelector('.sessions button.session').textContent === 'Trip notes: Zürich'`)
	var got struct{ Title string }
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/sessions/"+id+"?user_id=renamer", "", nil).Body).Decode(&got); err != nil || got.Title != "Trip notes: Zürich" {
		t.Fatalf("the session after the rename: %+v %v", got, err)
	}
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.sessions button.session`)))
	b.until("the title after a reload", `document.querySelector('.sessions button.session').textContent === 'Trip notes: Zürich'`)
	b.do("start another rename", chromedp.Click(chromedp.CSS(`.sessions button.rename`)), chromedp.WaitVisible(chromedp.CSS(`.rename-form input`)))
	b.do("type and leave with Escape", chromedp.SendKeys(chromedp.CSS(`.rename-form input`), "never saved"), chromedp.KeyEvent("\x1b"))
	b.until("the form gone, the title kept", `!document.querySelector('.rename-form') && document.querySelector('.sessions button.session').textContent === 'Trip notes: Zürich'`)
	b.clean()
}

// A user whose run waits for an approval (asked from another client) and
// who asks again: the chat shows the 429 naming that run, and its button
// opens the run's session with the approval dialog, where it is decided.
func TestConsoleBusyOpensThePausedRun(t *testing.T) {
	s := startServer(t, nil)
	var paused struct {
		RunID string `json:"run_id"`
		State string `json:"state"`
	}
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"pia","question":"write a note","tool_names":["write_file"],"approval_mode":"suggest","stream":false}`, nil), 200, &paused)
	if paused.State != "waiting_approval" {
		t.Fatalf("the first run: %+v", paused)
	}
	b := openAnon(t, s, "pia")
	b.allow("status of 429")
	b.ask("hello")
	b.until("the refusal naming the run", `document.querySelector('p.error[role="alert"]')?.textContent.includes('`+paused.RunID+`') && !!document.querySelector('p.error button.open-waiting')`)
	b.shot("busy-paused")
	b.do("open the waiting run", chromedp.Click(chromedp.CSS(`p.error button.open-waiting`)), chromedp.WaitVisible(chromedp.CSS(`dialog.approval[open]`)))
	b.do("approve", chromedp.Click(chromedp.Search(`//dialog//button[text()="Approve"]`)))
	b.until("the paused run finished", lastRun+`?.dataset.state === 'finished' && `+lastRun+`.dataset.runId === '`+paused.RunID+`'`)
	b.clean()
}
