package main

import (
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The model's question in the console: ask_user shows a card with the
// question and its options as buttons; a click answers it (the stored
// question says answered, with that answer), and the run goes on to the
// model's answer, which is what it read.
func TestConsoleAnswersAQuestion(t *testing.T) {
	s := startServer(t, nil)
	b := openAnonWithTool(t, s, "dana", "ask_user")
	b.ask(`call ask_user {"question":"Which environment?","options":["staging","prod"]}`)
	b.do("the question", chromedp.WaitVisible(chromedp.CSS(`section.question`)))
	b.until("its text and options", `document.querySelector('section.question .question-text').textContent === 'Which environment?' && `+
		`[...document.querySelectorAll('section.question button.option')].map(b => b.textContent).join(',') === 'staging,prod'`)
	b.until("the run waiting", lastRun+`?.dataset.state === 'waiting_input'`)
	b.shot("question")
	b.axe("question")
	b.do("answer prod", chromedp.Click(chromedp.Search(`//section[contains(@class,"question")]//button[text()="prod"]`)))
	b.until("the run to finish with what the model read", lastRun+`?.dataset.state === 'finished' && `+lastRun+`.textContent.includes('{"answer":"prod"}')`)
	b.until("the card to go", `!document.querySelector('section.question')`)
	r := restDo(t, "GET", s.url+"/wunder/runs/"+b.eval(lastRun+`.dataset.runId`)+"/approvals?user_id=dana", "", nil)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.Contains(string(body), `"state":"answered"`) || !strings.Contains(string(body), `"answer":"prod"`) {
		t.Fatalf("the stored question after the click: %d %s", r.StatusCode, body)
	}
	b.clean()
}
