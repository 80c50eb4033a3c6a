package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/memory"
)

// The console's last admin tabs (issue 16) — language servers, skills,
// knowledge bases, memory — and the plan of a reopened session, in the
// same headless chromium as console_browser_test.go. Attachments are in
// console_attach_test.go.

// adminTab opens the admin page on tab id and waits for ready (a CSS
// selector in the tab's panel).
func (b *browser) adminTab(id, ready string) {
	b.t.Helper()
	b.do("the admin page", chromedp.Click(chromedp.CSS(`nav a[href="#/admin"]`)), chromedp.WaitVisible(chromedp.CSS(`#tab-`+id)))
	b.do("the "+id+" tab", chromedp.Click(chromedp.CSS(`#tab-`+id)), chromedp.WaitVisible(chromedp.CSS(ready)))
}

// asFakeLSPEnv makes the test binary a minimal language server
// (fakeLSP) instead of running the tests.
const asFakeLSPEnv = "WUNDER_CMD_TEST_AS_FAKE_LSP"

// fakeLSP answers initialize with its name, version and two capabilities
// and shutdown with null, and returns on exit or the end of its input:
// enough for the handshake of POST /wunder/admin/lsp/test.
func fakeLSP(in io.Reader, out io.Writer) {
	r := bufio.NewReader(in)
	for {
		hdr, err := textproto.NewReader(r).ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(hdr.Get("Content-Length"))
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		var result string
		switch msg.Method {
		case "initialize":
			result = `{"capabilities":{"hoverProvider":true,"definitionProvider":true},"serverInfo":{"name":"fake-lsp","version":"0.1"}}`
		case "shutdown":
			result = "null"
		case "exit":
			return
		default:
			if msg.ID == nil {
				continue // a notification
			}
			result = "null"
		}
		reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(reply), reply)
	}
}

// LSP: the configured servers with their state; an invalid change shows
// the server's message with its key path; "Test" shows what a server
// answered to the handshake (a fake one: the test binary), and on a server
// that never answers the 503 the route gives.
func TestConsoleAdminLSP(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, func(c *config.Config) {
		c.LSP.Enabled = true
		// Long enough for the fake (this test binary, started anew) to
		// answer its handshake on a loaded machine (1 s failed in CI),
		// short enough to wait out the stand-in.
		c.LSP.TimeoutSeconds = 5
		// a stand-in that exists everywhere and never answers: no worker
		// starts until a call needs one
		c.LSP.Servers = []config.LSPServer{{ID: "stand-in", Command: []string{"cat"}, Extensions: []string{".txt"}, Enabled: true},
			{ID: "fake", Command: []string{exe}, Env: map[string]string{asFakeLSPEnv: "1"}, Extensions: []string{".fk"}, Enabled: true},
			{ID: "pyright", Enabled: false}}
	})
	b := openAnon(t, s, "root")
	b.adminTab("lsp", `tr[data-lsp="stand-in"]`)
	b.until("the servers and their state", `document.querySelector('tr[data-lsp="stand-in"]').textContent.includes('.txt') && document.querySelector('tr[data-lsp="stand-in"]').textContent.includes('available') && document.querySelector('tr[data-lsp="pyright"]')?.textContent.includes('disabled')`)
	b.shot("admin-lsp")
	b.axe("admin, lsp")

	b.allow("status of 400 (Bad Request) " + s.url + "/wunder/admin/lsp")
	b.eval(`(() => { const t = document.querySelector('textarea[name="lsp-json"]'); const v = JSON.parse(t.value); v.timeout_s = 0; t.value = JSON.stringify(v); t.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	b.do("save the invalid section", chromedp.Click(chromedp.Search(`//section//button[text()="Save"]`)))
	b.until("the key path of the problem", `[...document.querySelectorAll('.problems code')].some(c => c.textContent === 'lsp.timeout_s')`)
	b.shot("admin-lsp-invalid")
	b.axe("admin, lsp, invalid")

	b.do("test the fake server", chromedp.Click(chromedp.Search(`//tr[@data-lsp="fake"]//button[text()="Test"]`)))
	b.until("its handshake", `document.querySelector('.lsp-result')?.textContent.includes('fake-lsp 0.1') && document.querySelector('.lsp-result').textContent.includes('hoverProvider')`)
	b.shot("admin-lsp-test")
	b.axe("admin, lsp, test result")

	b.allow("status of 503 (Service Unavailable) " + s.url + "/wunder/admin/lsp/test")
	b.do("test the stand-in", chromedp.Click(chromedp.Search(`//tr[@data-lsp="stand-in"]//button[text()="Test"]`)))
	b.until("the test's answer", `[...document.querySelectorAll('.admin [role="alert"]')].some(a => a.textContent.includes('unavailable'))`)
	b.clean()
}

// Skills: a ZIP built here uploaded in the page, then its SKILL.md shown
// rendered (the frontmatter as text, raw HTML as text); knowledge: a base
// made in the form, a document uploaded, the index refreshed and a query
// tried that finds the document.
func TestConsoleAdminSkillsKnowledge(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "root")
	dir := t.TempDir()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	f, _ := zw.Create("team-style/SKILL.md")
	_, _ = f.Write([]byte("---\nname: team-style\ndescription: How our team writes\n---\n# Team style\n\nWrite **short** sentences. <script>alert(1)</script>\n\n- one idea per line\n- no jargon\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(dir, "team-style.zip")
	if err := os.WriteFile(zipPath, zbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.adminTab("skills", `#skills-h`)
	// A ZIP without SKILL.md: the server's own message.
	var bad bytes.Buffer
	bw := zip.NewWriter(&bad)
	bf, _ := bw.Create("notes/readme.txt")
	_, _ = bf.Write([]byte("no skill here"))
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	badPath := filepath.Join(dir, "not-a-skill.zip")
	if err := os.WriteFile(badPath, bad.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.allow("status of 400 (Bad Request) " + s.url + "/wunder/admin/skills/upload")
	b.do("upload a ZIP without SKILL.md", chromedp.SetUploadFiles(chromedp.CSS(`input[name="skill-zip"]`), []string{badPath}))
	b.until("the server's reason", `document.querySelector('.admin [role="alert"]')?.textContent.includes('SKILL.md')`)
	b.do("upload the skill", chromedp.SetUploadFiles(chromedp.CSS(`input[name="skill-zip"]`), []string{zipPath}))
	b.until("the skill in the list", `!!document.querySelector('tr[data-skill="team-style"]')`)
	b.do("view it", chromedp.Click(chromedp.CSS(`tr[data-skill="team-style"] button[aria-label="View team-style"]`)))
	b.until("SKILL.md rendered", `document.querySelector('.skill-view .markdown h2')?.textContent === 'Team style' && document.querySelector('.skill-view strong')?.textContent === 'short' && document.querySelectorAll('.skill-view .markdown li').length === 2 && document.querySelector('.skill-view pre.frontmatter').textContent.includes('name: team-style')`)
	if got := b.eval(`String(document.querySelectorAll('.skill-view script').length)`); got != "0" {
		t.Errorf("SKILL.md's raw HTML made %s script elements; want 0", got)
	}
	b.shot("admin-skills")
	b.axe("admin, skills")
	was := b.eval(`String(document.querySelector('tr[data-skill="team-style"] input[type="checkbox"]').checked)`)
	b.do("switch it", chromedp.Click(chromedp.CSS(`tr[data-skill="team-style"] input[type="checkbox"]`)))
	b.until("the switch stored", `String(document.querySelector('tr[data-skill="team-style"] input[type="checkbox"]').checked) !== '`+was+`'`)
	var listed struct {
		Skills []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"skills"`
	}
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/admin/skills", "", nil).Body).Decode(&listed); err != nil || len(listed.Skills) != 1 ||
		strconv.FormatBool(listed.Skills[0].Enabled) == was {
		t.Errorf("the skills after the switch (it was enabled=%s): %+v %v", was, listed, err)
	}
	b.do("delete it", chromedp.Click(chromedp.CSS(`tr[data-skill="team-style"] button[aria-label="Delete team-style"]`)), chromedp.Click(chromedp.CSS(`tr[data-skill="team-style"] button.confirm-yes`)))
	b.until("the skill gone, and its view", `!document.querySelector('tr[data-skill="team-style"]') && !document.querySelector('.skill-view')`)

	md := filepath.Join(dir, "wifi.md")
	if err := os.WriteFile(md, []byte("# Office wifi\n\nThe wifi password for the guest network is pelican-42.\n\n# Printers\n\nThe printer is on the second floor.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("the knowledge tab", chromedp.Click(chromedp.CSS(`#tab-knowledge`)), chromedp.WaitVisible(chromedp.CSS(`input[name="kb-name"]`)))
	b.do("add a base",
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-name"]`), "faq"),
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-description"]`), "Questions new colleagues ask"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)),
	)
	b.do("the base, open", chromedp.WaitVisible(chromedp.CSS(`tr[data-base="faq"]`)), chromedp.WaitVisible(chromedp.CSS(`input[name="kb-files"]`)))
	b.do("upload a document", chromedp.SetUploadFiles(chromedp.CSS(`input[name="kb-files"]`), []string{md}))
	b.until("the document in the base", `!!document.querySelector('.kb-files li[data-path="wifi.md"]') && document.querySelector('tr[data-base="faq"]').textContent.includes('1 ·')`)
	b.do("refresh the index", chromedp.Click(chromedp.Search(`//button[starts-with(text(),"Refresh the index")]`)))
	b.until("the base indexed", `document.querySelector('.admin p.status')?.textContent.includes('faq (')`)
	b.do("try a query",
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-query"]`), "wifi password"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"kb-query")]//button[@type="submit"]`)),
	)
	b.until("the hit", `document.querySelector('ol.hits li')?.textContent.includes('Office wifi') && document.querySelector('ol.hits li').textContent.includes('pelican-42') && document.querySelector('ol.hits li').textContent.includes('wifi.md')`)
	// The query asks the search route, not a run: it leaves no session behind.
	b.until("the query's button free again", `!document.querySelector('form.kb-query button[type="submit"]').disabled`)
	b.mu.Lock()
	searched := slices.Contains(b.paths, "GET /wunder/admin/knowledge/search")
	b.mu.Unlock()
	if !searched {
		t.Error("\"try a query\" did not ask GET /wunder/admin/knowledge/search")
	}
	var sessions struct {
		Sessions []struct{ Title string } `json:"sessions"`
	}
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/sessions?user_id=root", "", nil).Body).Decode(&sessions); err != nil || len(sessions.Sessions) != 0 {
		t.Errorf("root's sessions after \"try a query\": %+v %v; want none", sessions, err)
	}
	b.shot("admin-knowledge")
	b.axe("admin, knowledge")
	b.do("a phone's width", chromedp.EmulateViewport(390, 800))
	b.axe("admin, knowledge, phone")
	b.do("the dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.until("dark", `document.documentElement.dataset.theme === 'dark'`)
	b.axe("admin, knowledge, dark")
	b.shot("admin-knowledge-phone-dark")
	b.eval(`(() => { const s = document.querySelector('header select'); s.value = 'zh'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.until("the new tabs in Chinese", `document.querySelector('#tab-knowledge').textContent === '知识库' && document.querySelector('#tab-skills').textContent === '技能' && document.querySelector('form.kb-query h4').textContent === '试一试检索'`)
	b.clean()
}

// A finished session reopened shows the plan its last run wrote (from
// GET /wunder/runs/{id}/plan); the memory tab shows a user's record,
// switches memory on and deletes the record.
func TestConsolePlanReopenAndMemory(t *testing.T) {
	s := startServer(t, nil)
	b := openAnon(t, s, "root")
	b.do("tools", chromedp.WaitVisible(chromedp.Search(`//label[span[text()="plan"]]`)))
	b.pickTool("plan")
	b.ask(`call plan {"steps":[{"title":"gather","status":"completed"},{"title":"draft","status":"completed"},{"title":"review","status":"skipped"}],"strategy":"skip_failed"}`)
	b.until("the run to finish with its plan", lastRun+`?.dataset.state === 'finished' && document.querySelectorAll('details.plan li.step').length === 3`)
	b.do("a new chat", chromedp.Click(chromedp.Search(`//aside//button[contains(.,"New chat")]`)))
	b.until("no plan", `!document.querySelector('details.plan')`)
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.sessions button.session`)))
	b.do("reopen the session", chromedp.Click(chromedp.CSS(`.sessions button.session`)))
	b.until("the plan of its last run", `document.querySelectorAll('details.plan li.step').length === 3 && document.querySelector('details.plan li.step[data-status="skipped"]')?.textContent.includes('review') && document.querySelector('details.plan').textContent.includes('skip_failed')`)
	b.shot("plan-reopened")
	b.axe("chat, reopened plan")

	// Memory: a record seeded through the store (records are otherwise
	// written by the summariser after runs), then the tab.
	rec := &memory.Record{ID: "m-1", UserID: "ivy", SessionID: "sess-ivy", Summary: "Ivy prefers tea to coffee"}
	if err := s.app.store.PutMemoryRecord(t.Context(), rec, 30); err != nil {
		t.Fatal(err)
	}
	b.adminTab("memory", `#memory-h`)
	b.do("ivy's records", chromedp.WaitVisible(chromedp.Search(`//section//button[text()="ivy"]`)), chromedp.Click(chromedp.Search(`//section//button[text()="ivy"]`)))
	b.until("the record", `document.querySelector('.records')?.textContent.includes('Ivy prefers tea')`)
	b.do("switch memory on", chromedp.Click(chromedp.Search(`//section//div[contains(@class,"actions")]/button[text()="Enable"]`)))
	b.until("memory on", `[...document.querySelectorAll('.admin .actions button')].some(x => x.textContent === 'Disable') && [...document.querySelectorAll('.admin li')].some(l => l.textContent.includes('ivy') && l.textContent.includes('on'))`)
	var got struct {
		Enabled bool `json:"enabled"`
	}
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/admin/memory/ivy", "", nil).Body).Decode(&got); err != nil || !got.Enabled {
		t.Errorf("ivy's memory after the switch: %+v %v; want enabled", got, err)
	}
	b.shot("admin-memory")
	b.axe("admin, memory")
	b.do("delete the record", chromedp.Click(chromedp.CSS(`.records button[aria-label="Delete sess-ivy"]`)))
	b.until("the record gone", `!document.querySelector('.records').textContent.includes('Ivy prefers tea')`)
	b.clean()
}
