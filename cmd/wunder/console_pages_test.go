package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	pngenc "image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/wunder/wunder/internal/config"
)

// The console's pages beyond the chat (issue 16): the workspace, admin,
// the plan panel, the schema-built approval form and the monitor's
// system snapshot, in the same headless chromium as
// console_browser_test.go.

// openAnon opens the console in the anonymous local mode as user (the
// local operator is an admin, so the admin pages are shown).
func openAnon(t *testing.T, s *server, user string) *browser {
	t.Helper()
	b := newBrowser(t, s.url)
	b.do("open", chromedp.Navigate(s.url+"/wunder/web/"), chromedp.WaitVisible(chromedp.CSS(`input[name="user_id"]`)))
	b.do("continue as "+user,
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), user),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
	)
	return b
}

// openAnonWithTool is openAnon with tool picked for the next question,
// once the tool list shows it.
func openAnonWithTool(t *testing.T, s *server, user, tool string) *browser {
	t.Helper()
	b := openAnon(t, s, user)
	b.do("the tool list", chromedp.WaitVisible(chromedp.Search(`//label[span[text()="`+tool+`"]]`)))
	b.pickTool(tool)
	return b
}

// Three files uploaded at once show in the tree; the Markdown one previews
// rendered (its GFM table as a table, its raw HTML as text, not markup),
// the CSV one as a table, the Go one highlighted.
func TestConsoleWorkspace(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "erin")
	dir := t.TempDir()
	md := filepath.Join(dir, "readme.md")
	code := filepath.Join(dir, "main.go")
	csv := filepath.Join(dir, "data.csv")
	if err := os.WriteFile(md, []byte("# Hello workspace\n\nSome **bold** text and <script>alert(1)</script>.\n\n- one\n- two\n\n| name | size |\n| --- | ---: |\n| a.txt | 12 |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csv, []byte("city,note\nBerlin,\"cold, grey\"\n\"Zürich\",\"say \"\"hi\"\"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(code, []byte("package main\n\n// main says hi\nfunc main() { println(\"hi\", 42) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("the workspace page", chromedp.Click(chromedp.CSS(`nav a[href="#/workspace"]`)), chromedp.WaitVisible(chromedp.CSS(`nav.tree`)))
	b.do("upload three files", chromedp.SetUploadFiles(chromedp.CSS(`input[type="file"]`), []string{md, code, csv}))
	b.until("all three in the tree", `!!document.querySelector('nav.tree button[data-path="readme.md"]') && !!document.querySelector('nav.tree button[data-path="main.go"]') && !!document.querySelector('nav.tree button[data-path="data.csv"]')`)
	b.do("open readme.md", chromedp.Click(chromedp.CSS(`nav.tree button[data-path="readme.md"]`)))
	b.until("the rendered Markdown", `document.querySelector('.ws-text .markdown h2')?.textContent === 'Hello workspace' && document.querySelectorAll('.ws-text .markdown li').length === 2 && document.querySelector('.ws-text strong')?.textContent === 'bold'`)
	if got := b.eval(`String(document.querySelectorAll('.ws-text script').length) + ' ' + String(document.querySelector('.ws-text p').textContent.includes('<script>'))`); got != "0 true" {
		t.Errorf("raw HTML in the Markdown: scripts, shown as text = %s; want 0 true", got)
	}
	if got := b.eval(`[...document.querySelectorAll('.ws-text .markdown table tr')].map(r => [...r.cells].map(c => c.textContent).join('|')).join('/') + ' ' + document.querySelector('.ws-text .markdown td:last-child').className`); got != "name|size/a.txt|12 align-right" {
		t.Errorf("the Markdown table: %q", got)
	}
	b.shot("workspace")
	b.axe("workspace")
	b.do("open main.go", chromedp.Click(chromedp.CSS(`nav.tree button[data-path="main.go"]`)))
	b.until("the highlighted code", `[...document.querySelectorAll('pre.code .hljs-keyword')].some(e => e.textContent === 'func') && !!document.querySelector('pre.code .hljs-comment')`)
	b.do("the dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.until("dark", `document.documentElement.dataset.theme === 'dark'`)
	b.axe("workspace, dark")

	// Download and zip: fetched with the credential in a header, handed to
	// the browser as files.
	dl := t.TempDir()
	if _, err := chromedp.CallBrowser(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl}); err != nil {
		t.Fatal(err)
	}
	b.do("download main.go", chromedp.Click(chromedp.Search(`//div[contains(@class,"actions-bar")]//button[text()="Download"]`)))
	if got := string(waitFile(t, b, filepath.Join(dl, "main.go"))); !strings.Contains(got, "func main()") {
		t.Errorf("downloaded main.go: %q", got)
	}
	b.do("zip the workspace", chromedp.Click(chromedp.Search(`//div[contains(@class,"row")]//button[text()="Download as zip"]`)))
	zipped := waitFile(t, b, filepath.Join(dl, "workspace.zip"))
	z, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatalf("workspace.zip: %v", err)
	}
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	if !slices.Contains(names, "readme.md") || !slices.Contains(names, "main.go") {
		t.Errorf("workspace.zip holds %v; want readme.md and main.go", names)
	}
	b.do("open data.csv", chromedp.Click(chromedp.CSS(`nav.tree button[data-path="data.csv"]`)))
	b.until("the CSV as a table", `document.querySelectorAll('.ws-text table.csv tbody tr').length === 2`)
	if got := b.eval(`[...document.querySelectorAll('.ws-text table.csv tr')].map(r => [...r.cells].map(c => c.textContent).join('|')).join('/')`); got != `city|note/Berlin|cold, grey/Zürich|say "hi"` {
		t.Errorf("the CSV table: %q", got)
	}

	// An image previews as a data: URL (the CSP allows no blob: image).
	img := filepath.Join(dir, "dot.png")
	var png bytes.Buffer
	m := image.NewRGBA(image.Rect(0, 0, 4, 4))
	m.Set(1, 1, color.RGBA{R: 200, A: 255})
	if err := pngenc.Encode(&png, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, png.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("upload an image", chromedp.SetUploadFiles(chromedp.CSS(`input[type="file"]`), []string{img}))
	b.do("open it", chromedp.WaitVisible(chromedp.CSS(`nav.tree button[data-path="dot.png"]`)), chromedp.Click(chromedp.CSS(`nav.tree button[data-path="dot.png"]`)))
	b.until("the image", `document.querySelector('img.ws-image')?.src.startsWith('data:image/png') && document.querySelector('img.ws-image').naturalWidth === 4`)

	// A new folder, a move into it, a delete after the in-place confirm.
	b.do("a new folder", chromedp.SendKeys(chromedp.CSS(`input[aria-label="New folder"]`), "docs"), chromedp.Click(chromedp.Search(`//form[contains(@class,"inline-form")]//button[text()="Create"]`)))
	b.until("the folder", `!!document.querySelector('nav.tree button[data-path="docs"]')`)
	b.do("open readme.md", chromedp.Click(chromedp.CSS(`nav.tree button[data-path="readme.md"]`)), chromedp.WaitVisible(chromedp.CSS(`.ws-text .markdown`)))
	b.eval(`(() => { const i = document.querySelector('input[aria-label="Move or rename to"]'); i.value = 'docs/readme.md'; i.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	b.do("move it", chromedp.Click(chromedp.Search(`//div[contains(@class,"actions-bar")]//button[text()="Move"]`)))
	// The move ends with the status line ("Moved") above the tree and the
	// tree reloaded: wait for both, then open the folder with a DOM click
	// (a mouse click at coordinates read before the status line appeared
	// landed on "/", which the line had moved there).
	b.until("the move done", `!document.querySelector('nav.tree button[data-path="readme.md"]') && !!document.querySelector('p.status[role="status"]')`)
	b.eval(`(() => { document.querySelector('nav.tree button[data-path="docs"]').click(); return '' })()`)
	b.until("the moved file in it", `!!document.querySelector('nav.tree button[data-path="docs/readme.md"]') && !document.querySelector('nav.tree button[data-path="readme.md"]')`)
	b.do("pick main.go", chromedp.Click(chromedp.CSS(`nav.tree button[data-path="main.go"]`)), chromedp.WaitVisible(chromedp.CSS(`pre.code`)))
	// Clicked as DOM clicks: the status line above ("Moved") goes after a
	// while and shifts the layout, which a mouse click at coordinates read
	// a moment before can miss.
	b.eval(`(() => { document.querySelector('button[aria-label="Delete main.go"]').click(); return '' })()`)
	b.until("the in-place confirm", `!!document.querySelector('button.confirm-yes')`)
	b.eval(`(() => { document.querySelector('button.confirm-yes').click(); return '' })()`)
	b.until("main.go gone", `!document.querySelector('nav.tree button[data-path="main.go"]')`)
	if r := restDo(t, "GET", s.url+"/wunder/workspace/content?user_id=erin&path=main.go", "", nil); r.StatusCode != 404 {
		t.Errorf("main.go after the delete: HTTP %d; want 404", r.StatusCode)
	}
	if r := restDo(t, "GET", s.url+"/wunder/workspace/content?user_id=erin&path=docs/readme.md", "", nil); r.StatusCode != 200 {
		t.Errorf("docs/readme.md after the move: HTTP %d; want 200", r.StatusCode)
	}

	// A run made elsewhere (the API) writes a file: the open page shows it
	// without a reload.
	r := restDo(t, "POST", s.url+"/wunder/runs", `{"user_id":"erin","question":"please write a note","tool_names":["write_file","read_file"]}`, nil)
	if r.StatusCode != 202 {
		t.Fatalf("submit a run: %d", r.StatusCode)
	}
	b.until("the run's file in the tree", `!!document.querySelector('nav.tree button[data-path="notes.txt"]')`)

	// A phone's width: the page still works and passes axe.
	b.do("a phone's width", chromedp.EmulateViewport(390, 800))
	b.until("the tree above the preview", `document.querySelector('nav.tree').getBoundingClientRect().bottom <= document.querySelector('section.preview').getBoundingClientRect().top + 1`)
	b.shot("workspace-phone")
	b.axe("workspace, phone")
	b.clean()
}

// waitFile waits, under the test's deadline, for a download to be
// complete (chromium writes name.crdownload and renames it) and reads it.
func waitFile(t *testing.T, b *browser, path string) []byte {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	// Chromium may create the file before it writes it: the download is
	// done when the file has content, no partial download is left beside
	// it, and its size held from one look to the next.
	last := -1
	for {
		data, err := os.ReadFile(path)
		_, partial := os.Stat(path + ".crdownload")
		if err == nil && len(data) > 0 && partial != nil && len(data) == last {
			return data
		}
		if err == nil {
			last = len(data)
		}
		select {
		case <-b.ctx.Done():
			b.shot("failed")
			t.Fatalf("waiting for the download %s: %v", filepath.Base(path), b.ctx.Err())
		case <-tick.C:
		}
	}
}

// Admin: an MCP server added in the MCP tab (an in-process go-sdk server
// over streamable HTTP), then "test this tool" calls its tool with an
// argument from the schema-built form; the monitor's system snapshot.
func TestConsoleAdminMCP(t *testing.T) {
	s := startServer(t, nil)
	mcpURL := echoMCP(t)
	b := openAnon(t, s, "root")
	b.do("the admin page", chromedp.Click(chromedp.CSS(`nav a[href="#/admin"]`)), chromedp.WaitVisible(chromedp.CSS(`[role="tablist"]`)))
	b.until("the models", `!!document.querySelector('tr[data-model="fake"]')`)
	b.axe("admin, models")

	// An invalid model: the server's own message, with its key path.
	b.allow("status of 400 (Bad Request) " + s.url + "/wunder/admin/llm")
	b.allow("status of 409 (Conflict) " + s.url + "/wunder/admin/llm")
	// The section as JSON is under "Advanced" (the form is console_models_test.go).
	b.do("open the JSON view", chromedp.Click(chromedp.CSS(`details.advanced summary`)))
	// The section's text loads after the table: wait for it to parse.
	b.until("the models section's text", `(() => { const t = document.querySelector('.admin textarea'); try { return !!t && !!JSON.parse(t.value).models } catch { return false } })()`)
	b.eval(`(() => { const t = document.querySelector('.admin textarea'); const v = JSON.parse(t.value); v.models.fake.provider = 'carrier-pigeon'; t.value = JSON.stringify(v); t.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	b.do("save the invalid model", chromedp.Click(chromedp.Search(`//section//button[text()="Save"]`)))
	b.until("the key path of the problem", `[...document.querySelectorAll('.problems code')].some(c => c.textContent.startsWith('llm.models.fake'))`)
	b.shot("admin-invalid")
	// Someone else changes the section meanwhile: saving the stale revision is 409, shown, and the page reloads.
	b.do("reload the section", chromedp.Click(chromedp.Search(`//section//button[text()="Reload"]`)))
	b.until("the valid text again", `!document.querySelector('.admin textarea').value.includes('carrier-pigeon')`)
	var cur struct {
		LLM struct {
			Default string                    `json:"default"`
			Models  map[string]map[string]any `json:"models"`
		} `json:"llm"`
	}
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/admin/llm", "", nil).Body).Decode(&cur); err != nil {
		t.Fatal(err)
	}
	cur.LLM.Models["extra"] = cur.LLM.Models["fake"]
	cur.LLM.Default = "fake"
	body, _ := json.Marshal(map[string]any{"llm": cur.LLM})
	if r := restDo(t, "POST", s.url+"/wunder/admin/llm", string(body), nil); r.StatusCode != 200 {
		msg, _ := io.ReadAll(r.Body)
		t.Fatalf("add a model behind the page's back: %d %s", r.StatusCode, msg)
	}
	b.do("save the stale revision", chromedp.Click(chromedp.Search(`//section//button[text()="Save"]`)))
	b.until("the stale notice and the reloaded list", `document.querySelector('.admin [role="alert"]')?.textContent.includes('changed since') && !!document.querySelector('tr[data-model="extra"]')`)
	b.do("the MCP tab, by keyboard", chromedp.Focus(chromedp.CSS(`#tab-models`)), chromedp.KeyEvent(kb.ArrowRight), chromedp.WaitVisible(chromedp.CSS(`input[name="mcp-name"]`)))
	if got := b.eval(`document.activeElement.id`); got != "tab-mcp" {
		t.Errorf("focus after ArrowRight on the models tab: %q; want tab-mcp", got)
	}
	b.do("add the server",
		chromedp.SendKeys(chromedp.CSS(`input[name="mcp-name"]`), "echo"),
		chromedp.SendKeys(chromedp.CSS(`input[name="mcp-target"]`), mcpURL),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)),
	)
	b.until("the server in the list", `!!document.querySelector('tr[data-server="echo"]')`)
	b.do("test this tool", chromedp.Click(chromedp.CSS(`tr[data-server="echo"] button`)))
	b.until("its tools", `[...document.querySelectorAll('select[name="mcp-tool"] option')].some(o => o.value === 'shout')`)
	b.eval(`(() => { const s = document.querySelector('select[name="mcp-tool"]'); s.value = 'shout'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.do("the argument", chromedp.WaitVisible(chromedp.CSS(`.tester input[name="text"]`)), chromedp.SendKeys(chromedp.CSS(`.tester input[name="text"]`), "hello"))
	b.do("call it", chromedp.Click(chromedp.Search(`//form[contains(@class,"tester")]//button[@type="submit"]`)))
	b.until("the result", `document.querySelector('.tool-result pre')?.textContent.includes('HELLO')`)
	b.shot("admin-mcp")
	b.axe("admin, mcp")

	b.do("the monitor", chromedp.Click(chromedp.CSS(`nav a[href="#/monitor"]`)), chromedp.WaitVisible(chromedp.CSS(`dl.system`)))
	b.until("the snapshot's figures", `document.querySelectorAll('dl.system dd').length >= 8 && /\d/.test(document.querySelector('dl.system dd').textContent)`)
	b.until("the charts", `document.querySelectorAll('figure.chart svg').length === 2`)
	b.shot("monitor-system")
	b.axe("monitor, system")
	b.clean()
}

// The plan panel shows the steps of a run whose model calls the plan
// tool; an approval answered with the schema-built form runs the tool
// with the edited field.
func TestConsolePlanAndApprovalForm(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Approvals.Tools = []string{"write_file"} })
	b := openAnon(t, s, "fay")
	b.do("tools", chromedp.WaitVisible(chromedp.Search(`//label[span[text()="plan"]]`)))
	b.pickTool("plan")
	b.pickTool("write_file")
	b.ask(`call plan {"steps":[{"title":"read the brief","status":"completed"},{"title":"write the note","status":"running"},{"title":"check it","status":"pending"}]}`)
	b.until("the plan's steps", `document.querySelectorAll('details.plan li.step').length === 3 && document.querySelector('details.plan li.step[data-status="running"]')?.textContent.includes('write the note')`)
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	b.shot("plan")
	b.axe("chat with a plan")

	b.ask(`call write_file {"path":"note.txt","content":"first draft"}`)
	b.do("the approval dialog", chromedp.WaitVisible(chromedp.CSS(`dialog.approval[open] .schema-form`)))
	b.until("the form's fields", `document.querySelector('dialog.approval input[name="path"]').value === 'note.txt' && document.querySelector('dialog.approval [name="content"]').value === 'first draft'`)
	b.shot("approval-form")
	b.axe("approval form")
	b.eval(`(() => { const c = document.querySelector('dialog.approval [name="content"]'); c.value = 'edited in the form'; c.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	b.do("run with the edited arguments", chromedp.Click(chromedp.Search(`//dialog//button[text()="Run with these arguments"]`)))
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	r := restDo(t, "GET", s.url+"/wunder/workspace/content?user_id=fay&path=note.txt", "", nil)
	var got struct{ Content string }
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil || got.Content != "edited in the form" {
		t.Fatalf("note.txt after the edited approval: %q %v (HTTP %d)", got.Content, err, r.StatusCode)
	}
	if strings.Contains(b.eval(`document.body.textContent`), "first draft") && b.eval(`String(!!document.querySelector('dialog.approval'))`) == "true" {
		t.Error("the dialog is still open")
	}
	b.clean()
}

// A reload while a run streams: the chat opens the same session again and
// follows the run from its events endpoint, so the answer ends whole and
// the question shows once.
func TestConsoleResumeAfterReload(t *testing.T) {
	s := startServer(t, nil)
	s.fake.Chunks = 80 // about 3 s: the reload lands well inside the run
	s.fake.ChunkDelay = 40 * time.Millisecond
	b := openAnon(t, s, "gus")
	q := "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega"
	b.ask(q)
	b.until("the answer to start", lastRun+`?.querySelector('.text')?.textContent.length > 0`)
	b.do("reload mid-run", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)))
	b.until("the run followed to its end", lastRun+`?.dataset.state === 'finished'`)
	if got := b.eval(lastRun + `.querySelector('.text').textContent`); got != "echo: "+q {
		t.Fatalf("answer after the reload:\n%q\nwant\n%q", got, "echo: "+q)
	}
	if n := b.eval(`String(document.querySelectorAll('.msg.user').length)`); n != "1" {
		t.Errorf("the question shows %s times; want 1", n)
	}
	b.shot("resumed")
	b.clean()
}

// Admin: an A2A peer's card fetched (this wunder's own, by URL, then as a
// configured service); a user account made in the form, a token for it
// shown once and revoked, the account deleted after the in-place confirm.
func TestConsoleAdminA2AUsers(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "root")
	b.do("the admin page", chromedp.Click(chromedp.CSS(`nav a[href="#/admin"]`)), chromedp.WaitVisible(chromedp.CSS(`#tab-a2a`)))
	b.do("the A2A tab", chromedp.Click(chromedp.CSS(`#tab-a2a`)), chromedp.WaitVisible(chromedp.CSS(`#a2a-add-h`)))
	b.do("the peer's endpoint",
		chromedp.SendKeys(chromedp.Search(`//form[contains(@class,"add-form")]//label[contains(.,"Name")]/input`), "self"),
		chromedp.SendKeys(chromedp.CSS(`form.add-form input[type="url"]`), s.url),
	)
	b.do("fetch its card", chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[text()="Fetch card"]`)))
	b.until("the card", `!!document.querySelector('.card-view h3') && document.querySelector('.card-view h3').textContent.includes('`+s.url+`')`)
	b.do("add the service", chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)))
	b.until("the service in the list", `!!document.querySelector('tr[data-service="self"]')`)
	b.do("fetch the configured service's card", chromedp.Click(chromedp.Search(`//tr[@data-service="self"]//button[text()="Fetch card"]`)))
	b.until("the card again", `!!document.querySelector('.card-view h3')`)
	b.shot("admin-a2a")
	b.axe("admin, a2a")

	b.do("the users tab", chromedp.Click(chromedp.CSS(`#tab-users`)), chromedp.WaitVisible(chromedp.CSS(`#user-add-h`)))
	b.do("add a user",
		chromedp.SendKeys(chromedp.Search(`//form[contains(@class,"add-form")]//label[contains(.,"User id")]/input`), "hana"),
		chromedp.SendKeys(chromedp.CSS(`form.add-form input[type="password"]`), "hana-password-1"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)),
	)
	b.until("the account", `!!document.querySelector('tr[data-user="hana"]')`)
	b.do("her tokens", chromedp.Click(chromedp.Search(`//tr[@data-user="hana"]//button[text()="Tokens"]`)), chromedp.WaitVisible(chromedp.CSS(`.tokens input`)))
	b.do("a new token", chromedp.SendKeys(chromedp.CSS(`.tokens input`), "ci"), chromedp.Click(chromedp.Search(`//div[contains(@class,"tokens")]//button[@type="submit"]`)))
	b.until("the secret, once, and the token listed", `document.querySelector('.tokens code.secret')?.textContent.startsWith('wdr_') && document.querySelector('.tokens ul').textContent.includes('ci')`)
	b.shot("admin-users")
	b.axe("admin, users")
	b.do("revoke it", chromedp.Click(chromedp.Search(`//div[contains(@class,"tokens")]//li[contains(.,"ci")]//button[text()="Revoke"]`)))
	b.until("no token", `!document.querySelector('.tokens ul').textContent.includes('ci (')`)
	b.do("delete the account", chromedp.Click(chromedp.CSS(`tr[data-user="hana"] button[aria-label="Delete hana"]`)))
	b.do("confirm", chromedp.Click(chromedp.CSS(`tr[data-user="hana"] button.confirm-yes`)))
	b.until("the account gone", `!document.querySelector('tr[data-user="hana"]')`)

	// The admin page and the workspace in Chinese.
	b.eval(`(() => { const s = document.querySelector('header select'); s.value = 'zh'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.until("the tabs in Chinese", `document.querySelector('#tab-models').textContent === '模型' && document.querySelector('#tab-users').textContent === '用户与令牌'`)
	b.do("the workspace", chromedp.Click(chromedp.CSS(`nav a[href="#/workspace"]`)), chromedp.WaitVisible(chromedp.CSS(`nav.tree`)))
	b.until("its buttons in Chinese", `document.querySelector('label.button').textContent.includes('上传文件')`)
	b.shot("workspace-zh")
	b.clean()
}

// The session list pages by cursor: the newest 50 first, then "Older
// sessions" lists the rest, each once, and goes away at the end.
func TestConsoleOlderSessions(t *testing.T) {
	s := startServer(t, nil)
	for i := range 53 {
		resp := s.rest(t, "POST", "/wunder", fmt.Sprintf(`{"user_id":"hana","question":"session %02d","stream":false}`, i), nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("run %d: %d", i, resp.StatusCode)
		}
	}
	b := openAnon(t, s, "hana")
	b.until("the newest 50 sessions and a way to older ones",
		`document.querySelectorAll('.sessions button.session').length === 50 && !!document.querySelector('button.older')`)
	if first := b.eval(`document.querySelector('.sessions button.session').textContent`); first != "session 52" {
		t.Errorf("the first session listed is %q; want the newest, %q", first, "session 52")
	}
	b.eval(`(() => { document.querySelector('button.older').click(); return '' })()`)
	b.until("the three older sessions, and no more button",
		`document.querySelectorAll('.sessions button.session').length === 53 && !document.querySelector('button.older')`)
	titles := b.eval(`[...document.querySelectorAll('.sessions button.session')].map((x) => x.textContent).join('|')`)
	var want []string
	for i := 52; i >= 0; i-- {
		want = append(want, fmt.Sprintf("session %02d", i))
	}
	if titles != strings.Join(want, "|") {
		t.Fatalf("sessions listed:\n%s\nwant\n%s", titles, strings.Join(want, "|"))
	}
	b.axe("chat with older sessions")
	b.clean()
}
