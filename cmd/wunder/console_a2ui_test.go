package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/a2ui"
	"github.com/wunder/wunder/internal/config"
)

// An A2UI surface in the console, with the demo model: asked for the
// A2UI demo, the run's a2ui event draws a form (text, a text field, a
// checkbox, a choice and a button) in the chat; what the user types goes
// into the surface's data; the button sends the action as the session's
// next message, which the run reads (the stored question is the action
// with the typed name) and answers by updating the same surface; the
// session reopened after a reload draws the surface from its history,
// with that update.
func TestConsoleA2UISurface(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		m := config.NewModel()
		m.Provider, m.Model = config.ProviderScripted, "demo"
		c.LLM.Models = map[string]config.Model{"demo": m}
	})
	b := openAnonWithTool(t, s, "dana", "a2ui")
	b.ask("show me the A2UI demo")
	surface := `document.querySelector('section.a2ui[data-surface="` + llm.A2UISurface + `"]')`
	b.until("the surface", surface+`?.textContent.includes('A2UI in wunder')`)
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	b.until("its inputs, with the data model's values",
		surface+`.querySelector('[data-id="name"] input').value === '' && `+
			surface+`.querySelector('[data-id="docs"] input').checked && `+
			surface+`.querySelector('[data-id="frontend"] input[type="radio"]:checked')?.parentElement.textContent.includes('A2A') && `+
			surface+`.querySelector('button[data-id="send"]').textContent === 'Send'`)
	b.shot("a2ui")
	b.axe("a2ui surface")
	b.do("type a name", chromedp.SendKeys(chromedp.CSS(`section.a2ui [data-id="name"] input`), "Ada"))
	b.do("pick MCP", chromedp.Click(chromedp.Search(`//section[contains(@class,"a2ui")]//label[span[text()="MCP"]]/input`)))
	b.do("press Send", chromedp.Click(chromedp.CSS(`section.a2ui button[data-id="send"]`)))
	b.until("the action's run to finish", `document.querySelectorAll('.msg.assistant[data-state]').length === 2 && `+lastRun+`.dataset.state === 'finished'`)
	b.until("the answer quoting the action", lastRun+`.textContent.includes('[a2ui action]') && `+lastRun+`.textContent.includes('"name":"Ada"')`)
	b.until("the surface updated by the second run", surface+`.textContent.includes('Received: the model read your answer.')`)
	if n := b.eval(`String(document.querySelectorAll('section.a2ui').length)`); n != "1" {
		t.Fatalf("%s surfaces drawn; want the one, updated in place", n)
	}

	// The run got the action as its question.
	r := restDo(t, "GET", s.url+"/wunder/runs?user_id=dana&limit=1", "", nil)
	body, _ := io.ReadAll(r.Body)
	var runs struct {
		Runs []struct {
			Question string `json:"question"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(body, &runs); err != nil || len(runs.Runs) != 1 {
		t.Fatalf("runs: %v %s", err, body)
	}
	q := runs.Runs[0].Question
	var action map[string]any
	if !strings.HasPrefix(q, a2ui.ActionPrefix) || json.Unmarshal([]byte(strings.TrimPrefix(q, a2ui.ActionPrefix)), &action) != nil {
		t.Fatalf("the run's question %q is no action", q)
	}
	cx, _ := action["context"].(map[string]any)
	if action["name"] != llm.A2UIAction || action["surfaceId"] != llm.A2UISurface || action["sourceComponentId"] != "send" ||
		cx["name"] != "Ada" || cx["docs"] != true || strings.Join(strings.Fields(strings.Trim(jsonString(cx["frontend"]), "[]")), "") != `"mcp"` {
		t.Fatalf("the action: %v", action)
	}

	// From history after a reload.
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)))
	b.until("the surface from history, updated", surface+`?.textContent.includes('Received: the model read your answer.')`)
	b.clean()
}

// A surface cannot run or load anything: text that looks like HTML is
// text, an image from another origin is a link (no request leaves the
// console's origin: clean checks), and a link to javascript: is dropped.
func TestConsoleA2UIIsInert(t *testing.T) {
	s := startServer(t, nil)
	b := openAnonWithTool(t, s, "eve", "a2ui")
	msgs := `[{"createSurface":{"surfaceId":"x","catalogId":"` + a2ui.BasicCatalogID + `"}},{"updateComponents":{"surfaceId":"x","components":[` +
		`{"id":"root","component":"Column","children":["t","i","v"]},` +
		`{"id":"t","component":"Text","text":"<img src=/nope onerror=window.pwned=1><script>window.pwned=2</script>"},` +
		`{"id":"i","component":"Image","url":"https://tracker.example/pixel.png","description":"a pixel"},` +
		`{"id":"v","component":"Video","url":"javascript:window.pwned=3"}]}}]`
	b.ask(`call a2ui {"messages":` + msgs + `}`)
	surface := `document.querySelector('section.a2ui[data-surface="x"]')`
	b.until("the surface", surface+`?.textContent.includes('<script>')`)
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	if got := b.eval(`String(` + surface + `.querySelectorAll('img, script, iframe').length) + ' ' + String(window.pwned) + ' ' + ` +
		surface + `.querySelector('a.a2ui-link')?.href + ' ' + [...` + surface + `.querySelectorAll('a')].length`); got != "0 undefined https://tracker.example/pixel.png 1" {
		t.Fatalf("elements, pwned, link, links: %s", got)
	}
	b.clean()
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The basic catalog in the console: a template list over the data, tabs,
// a modal, a slider, a date, an icon, an inline image; a Text bound to
// the data follows what the user types (two-way binding), and a Button
// whose check requires that field is disabled until it is filled.
func TestConsoleA2UIComponents(t *testing.T) {
	s := startServer(t, nil)
	b := openAnonWithTool(t, s, "finn", "a2ui")
	pixel := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
	comps := []string{
		`{"id":"root","component":"Column","children":["head","items","tabs","modal","name","hello","go","level","day","pic"]}`,
		`{"id":"head","component":"Row","children":["star","title"],"align":"center"}`,
		`{"id":"star","component":"Icon","name":"star"}`,
		`{"id":"title","component":"Text","text":"Kitchen sink","variant":"h2"}`,
		`{"id":"items","component":"List","children":{"componentId":"item","path":"/items"}}`,
		`{"id":"item","component":"Text","text":{"path":"label"}}`,
		`{"id":"tabs","component":"Tabs","tabs":[{"title":"One","child":"t1"},{"title":"Two","child":"t2"}]}`,
		`{"id":"t1","component":"Text","text":"first tab"}`,
		`{"id":"t2","component":"Text","text":"second tab"}`,
		`{"id":"modal","component":"Modal","trigger":"open","content":"inside"}`,
		`{"id":"open","component":"Button","child":"open_label","action":{"functionCall":{"call":"formatString","args":{"value":"x"}}}}`,
		`{"id":"open_label","component":"Text","text":"Details"}`,
		`{"id":"inside","component":"Text","text":"modal body"}`,
		`{"id":"name","component":"TextField","label":"Name","value":{"path":"/name"}}`,
		`{"id":"hello","component":"Text","text":{"call":"formatString","args":{"value":"Hello ${/name}!"}}}`,
		`{"id":"go","component":"Button","child":"go_label","variant":"primary","action":{"event":{"name":"go"}},` +
			`"checks":[{"condition":{"call":"required","args":{"value":{"path":"/name"}}},"message":"Name first"}]}`,
		`{"id":"go_label","component":"Text","text":"Go"}`,
		`{"id":"level","component":"Slider","label":"Level","min":0,"max":10,"value":{"path":"/level"}}`,
		`{"id":"day","component":"DateTimeInput","label":"Day","enableDate":true,"value":"2026-12-08"}`,
		`{"id":"pic","component":"Image","url":"` + pixel + `","description":"a dot","variant":"icon"}`,
	}
	msgs := `[{"createSurface":{"surfaceId":"sink","catalogId":"` + a2ui.BasicCatalogID + `"}},` +
		`{"updateComponents":{"surfaceId":"sink","components":[` + strings.Join(comps, ",") + `]}},` +
		`{"updateDataModel":{"surfaceId":"sink","value":{"items":[{"label":"alpha"},{"label":"beta"},{"label":"gamma"}],"name":"","level":3}}}]`
	b.ask(`call a2ui {"messages":` + msgs + `}`)
	sink := `document.querySelector('section.a2ui[data-surface="sink"]')`
	b.until("the surface", sink+`?.textContent.includes('Kitchen sink')`)
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	if got := b.eval(`[...` + sink + `.querySelectorAll('ul.a2ui-list > li')].map(li => li.textContent).join(',') + ' ' + ` +
		sink + `.querySelectorAll('[role="tab"]').length + ' ' + ` + sink + `.querySelector('[role="tabpanel"]').textContent + ' ' + ` +
		sink + `.querySelector('input[type="range"]').value + ' ' + ` + sink + `.querySelector('input[type="date"]').value + ' ' + ` +
		sink + `.querySelector('img').alt + ' ' + ` + sink + `.querySelector('.a2ui-icon').textContent + ' ' + ` +
		`String(` + sink + `.querySelector('button[data-id="go"]').disabled)`); got != "alpha,beta,gamma 2 first tab 3 2026-12-08 a dot ★ true" {
		t.Fatalf("the surface: %s", got)
	}
	b.axe("a2ui components")
	b.do("the second tab", chromedp.Click(chromedp.Search(`//section[@data-surface="sink"]//button[@role="tab"][text()="Two"]`)))
	b.until("its panel", sink+`.querySelector('[role="tabpanel"]').textContent === 'second tab'`)
	b.do("open the modal", chromedp.Click(chromedp.CSS(`section.a2ui button[data-id="open"]`)))
	b.until("the dialog", sink+`.querySelector('dialog.a2ui-modal').open && `+sink+`.querySelector('dialog.a2ui-modal').textContent.includes('modal body')`)
	b.do("close it", chromedp.Click(chromedp.CSS(`dialog.a2ui-modal button[type="submit"]`)))
	b.until("the dialog closed", `!`+sink+`.querySelector('dialog.a2ui-modal').open`)
	b.do("type a name", chromedp.SendKeys(chromedp.CSS(`section.a2ui [data-id="name"] input`), "Zoe"))
	b.until("the bound text following it, and the button enabled", sink+`.textContent.includes('Hello Zoe!') && !`+sink+`.querySelector('button[data-id="go"]').disabled`)
	b.shot("a2ui-components")
	b.clean()
}
