package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/memory"
)

// "My tools" (issue 40): a plain user, logged in, uses each self-service
// page — an MCP server added (the go-sdk, in-process) and its tools
// listed and shared, a skill uploaded and shared, a .docx uploaded to a
// knowledge base of theirs and found by the search box, the base shared,
// a share stopped from the sharing tab, the extra prompt set, memory
// turned off and a record edited — and each result is read back through
// the user routes with the user's own token, and what they share through
// another user's catalog. The page never calls an admin route.

// openLogin opens the console and logs in as user with password.
func openLogin(t *testing.T, s *server, user, password string) *browser {
	t.Helper()
	b := newBrowser(t, s.url)
	b.do("open the console", chromedp.Navigate(s.url+"/wunder/web/"), chromedp.WaitVisible(chromedp.CSS(`input[type="password"]`)))
	b.do("log in as "+user,
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), user),
		chromedp.SendKeys(chromedp.CSS(`input[type="password"]`), password),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
	)
	return b
}

// getJSON GETs path with hdr and decodes the 200 answer into v.
func getJSON(t *testing.T, s *server, path string, hdr map[string]string, v any) {
	t.Helper()
	r := restDo(t, "GET", s.url+path, "", hdr)
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, r.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// mustDo sends a request that must answer 2xx.
func mustDo(t *testing.T, s *server, method, path, body string, hdr map[string]string) {
	t.Helper()
	r := restDo(t, method, s.url+path, body, hdr)
	if r.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(r.Body)
		t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, msg)
	}
}

func TestConsoleMyTools(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.UserTools.AllowPrivateURLs = true // the MCP server below is on loopback
	})
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustDo(t, s, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password-1"}`, admin)
	}
	var login struct{ Token string }
	r := restDo(t, "POST", s.url+"/wunder/auth/login", `{"user_id":"alice","password":"alice-password-1"}`, nil)
	if err := json.NewDecoder(r.Body).Decode(&login); err != nil || login.Token == "" {
		t.Fatalf("alice's login: %d %v", r.StatusCode, err)
	}
	alice := map[string]string{"Authorization": "Bearer " + login.Token}
	mcpURL := echoMCP(t)

	// Bob shares a knowledge base; alice's memory is on, with a record.
	mustDo(t, s, "POST", "/wunder/user_tools/knowledge", `{"user_id":"bob","knowledge":{"bases":[{"name":"handbook","description":"Bob's handbook","shared":true}]}}`, admin)
	mustDo(t, s, "PUT", "/wunder/user_tools/knowledge/file", `{"user_id":"bob","base":"handbook","path":"a.md","content":"# Holidays\n\nTwenty days."}`, admin)
	mustDo(t, s, "PUT", "/wunder/memory/enabled", `{"enabled":true}`, alice)
	if err := s.app.store.PutMemoryRecord(t.Context(), &memory.Record{ID: "m-alice", UserID: "alice", SessionID: "sess-tea", Summary: "Alice prefers tea"}, 30); err != nil {
		t.Fatal(err)
	}

	b := openLogin(t, s, "alice", "alice-password-1")
	if got := b.eval(`[...document.querySelectorAll('header nav a')].map(a => a.getAttribute('href')).join(' ')`); got != "#/chat #/workspace #/mine #/pending" {
		t.Errorf("a plain user's navigation: %q; want chat, workspace, My tools and Waiting for you", got)
	}
	b.do("My tools", chromedp.Click(chromedp.CSS(`nav a[href="#/mine"]`)), chromedp.WaitVisible(chromedp.CSS(`#mytab-mcp`)))

	// 1. MCP: add a server, list its tools, share one, edit the server.
	b.do("add an MCP server",
		chromedp.WaitVisible(chromedp.CSS(`#my-mcp-add-h`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="mcp-name"]`), "echo"),
		chromedp.SendKeys(chromedp.CSS(`input[name="mcp-target"]`), mcpURL),
		chromedp.SendKeys(chromedp.CSS(`input[name="mcp-token"]`), "sk-alice-1"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)),
	)
	b.until("the server in the list", `!!document.querySelector('tr[data-server="echo"]')`)
	b.do("its tools", chromedp.Click(chromedp.CSS(`tr[data-server="echo"] button[aria-label="Tools echo"]`)))
	b.until("the tool, by its name in alice's catalog", `document.querySelector('.server-tools li[data-tool="shout"]')?.textContent.includes('alice@echo@shout') && document.querySelector('.server-tools li[data-tool="shout"]').textContent.includes('upper-cases text')`)
	b.do("share it", chromedp.Click(chromedp.CSS(`.server-tools li[data-tool="shout"] input[name="tool-shared"]`)))
	b.until("shared", `document.querySelector('tr[data-server="echo"]').textContent.includes('shout') && document.querySelector('.server-tools li[data-tool="shout"] input').checked`)
	b.shot("mine-mcp")
	b.axe("my tools, mcp")
	b.do("edit the server", chromedp.Click(chromedp.CSS(`tr[data-server="echo"] button[aria-label="Edit the server echo"]`)), chromedp.WaitVisible(chromedp.CSS(`#my-mcp-edit-h`)))
	if got := b.eval(`document.querySelector('input[name="mcp-token"]').value`); got != "******" {
		t.Errorf("the token in the edit form: %q; want the mask", got)
	}
	b.do("describe it", chromedp.SendKeys(chromedp.CSS(`input[name="mcp-description"]`), "Shouts back"), chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)))
	b.do("the add form again", chromedp.WaitVisible(chromedp.CSS(`#my-mcp-add-h`)))
	var servers struct {
		Servers []struct {
			Name, URL, Description string
			BearerToken            string   `json:"bearer_token"`
			SharedTools            []string `json:"shared_tools"`
		}
	}
	getJSON(t, s, "/wunder/user_tools/mcp", alice, &servers)
	if len(servers.Servers) != 1 || servers.Servers[0].Name != "echo" || servers.Servers[0].URL != mcpURL || servers.Servers[0].Description != "Shouts back" ||
		servers.Servers[0].BearerToken != "******" || !slices.Equal(servers.Servers[0].SharedTools, []string{"shout"}) {
		t.Errorf("alice's MCP servers through the API: %+v", servers)
	}
	// The token written back as the mask kept the stored one: every
	// route shows it masked, so ask the store.
	cfg, err := s.app.store.GetUserToolConfig(t.Context(), "alice")
	if err != nil || len(cfg.MCPServers) != 1 || !strings.Contains(string(cfg.MCPServers[0].Config), `"sk-alice-1"`) {
		t.Errorf("alice's stored server after the edit (%v): %+v; want the token kept", err, cfg)
	}

	// 2. Skills: upload a ZIP, share the skill.
	dir := t.TempDir()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	f, _ := zw.Create("review/SKILL.md")
	_, _ = f.Write([]byte("---\nname: review\ndescription: How alice reviews a change\n---\n# Review\n\nRead the tests first.\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zipPath := filepath.Join(dir, "review.zip")
	if err := os.WriteFile(zipPath, zbuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("the skills tab", chromedp.Click(chromedp.CSS(`#mytab-skills`)), chromedp.WaitVisible(chromedp.CSS(`#skills-h`)))
	b.do("upload a skill", chromedp.SetUploadFiles(chromedp.CSS(`input[name="skill-zip"]`), []string{zipPath}))
	b.until("the skill, enabled", `document.querySelector('tr[data-skill="review"] input[name="skill-enabled"]')?.checked === true`)
	b.do("share it", chromedp.Click(chromedp.CSS(`tr[data-skill="review"] input[name="skill-shared"]`)))
	b.until("shared as alice@review", `document.querySelector('tr[data-skill="review"]').textContent.includes('alice@review')`)
	b.do("view it", chromedp.Click(chromedp.CSS(`tr[data-skill="review"] button[aria-label="View review"]`)))
	b.until("SKILL.md rendered", `document.querySelector('.skill-view .markdown h2')?.textContent === 'Review'`)
	b.shot("mine-skills")
	b.axe("my tools, skills")
	var skills struct {
		Enabled, Shared []string
		Skills          []struct{ Name string }
	}
	getJSON(t, s, "/wunder/user_tools/skills", alice, &skills)
	if len(skills.Skills) != 1 || skills.Skills[0].Name != "review" || !slices.Equal(skills.Enabled, []string{"review"}) || !slices.Equal(skills.Shared, []string{"review"}) {
		t.Errorf("alice's skills through the API: %+v", skills)
	}

	// 3. Knowledge: a base, a .docx converted on upload, the search box, sharing.
	docx := filepath.Join(dir, "wifi.docx")
	if err := os.WriteFile(docx, doc2mdtest.DOCX("Office wifi", []string{"The guest network password is pelican-42."}, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	b.do("the knowledge tab", chromedp.Click(chromedp.CSS(`#mytab-knowledge`)), chromedp.WaitVisible(chromedp.CSS(`input[name="kb-name"]`)))
	b.do("add a base",
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-name"]`), "notes"),
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-description"]`), "Alice's notes"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"add-form")]//button[@type="submit"]`)),
	)
	b.do("the base, open", chromedp.WaitVisible(chromedp.CSS(`tr[data-base="notes"]`)), chromedp.WaitVisible(chromedp.CSS(`input[name="kb-files"]`)))
	if got := b.eval(`document.querySelector('input[name="kb-files"]').accept`); !strings.Contains(got, ".docx") || !strings.Contains(got, ".pdf") || !strings.Contains(got, ".xlsx") {
		t.Errorf("the upload takes %q; want documents too", got)
	}
	b.do("upload the .docx", chromedp.SetUploadFiles(chromedp.CSS(`input[name="kb-files"]`), []string{docx}))
	b.until("the document, as Markdown", `!!document.querySelector('.kb-files li[data-path="wifi.md"]') && document.querySelector('tr[data-base="notes"]').textContent.includes('1 ·')`)
	b.do("search it",
		chromedp.SendKeys(chromedp.CSS(`input[name="kb-query"]`), "guest password"),
		chromedp.Click(chromedp.Search(`//form[contains(@class,"kb-query")]//button[@type="submit"]`)),
	)
	b.until("the hit", `document.querySelector('ol.hits li')?.textContent.includes('Office wifi') && document.querySelector('ol.hits li').textContent.includes('pelican-42') && document.querySelector('ol.hits li').textContent.includes('wifi.md')`)
	b.do("share the base", chromedp.Click(chromedp.CSS(`tr[data-base="notes"] input[name="kb-shared"]`)))
	b.until("shared as alice@notes", `document.querySelector('tr[data-base="notes"]').textContent.includes('alice@notes')`)
	b.do("a window tall enough for the hit", chromedp.EmulateViewport(1280, 960))
	b.shot("mine-knowledge")
	b.axe("my tools, knowledge")
	var kb struct {
		Knowledge struct {
			Bases []struct {
				Name      string
				Shared    bool
				FileCount int `json:"file_count"`
			}
		}
	}
	getJSON(t, s, "/wunder/user_tools/knowledge", alice, &kb)
	if len(kb.Knowledge.Bases) != 1 || kb.Knowledge.Bases[0].Name != "notes" || !kb.Knowledge.Bases[0].Shared || kb.Knowledge.Bases[0].FileCount != 1 {
		t.Errorf("alice's bases through the API: %+v", kb)
	}
	var file struct{ Content string }
	getJSON(t, s, "/wunder/user_tools/knowledge/file?base=notes&path=wifi.md", alice, &file)
	if !strings.Contains(file.Content, "# Office wifi") || !strings.Contains(file.Content, "pelican-42") {
		t.Errorf("wifi.md as stored: %q", file.Content)
	}
	var hits struct {
		Hits []struct{ Source, Content string }
	}
	getJSON(t, s, "/wunder/user_tools/knowledge/search?base=notes&query=guest+password", alice, &hits)
	if len(hits.Hits) == 0 || hits.Hits[0].Source != "wifi.md" || !strings.Contains(hits.Hits[0].Content, "pelican-42") {
		t.Errorf("the search route's hits: %+v", hits)
	}

	// What alice shares is in bob's catalog.
	var bobs struct {
		Shared []struct{ Name, Owner string } `json:"shared_tools"`
	}
	getJSON(t, s, "/wunder/user_tools/tools?user_id=bob", admin, &bobs)
	for _, want := range []string{"alice@echo@shout", "alice@review", "alice@notes"} {
		if !slices.ContainsFunc(bobs.Shared, func(x struct{ Name, Owner string }) bool { return x.Name == want && x.Owner == "alice" }) {
			t.Errorf("bob's shared tools lack %s: %+v", want, bobs.Shared)
		}
	}

	// 4. Sharing: the three shares, bob's base; one share stopped here.
	b.do("the sharing tab", chromedp.Click(chromedp.CSS(`#mytab-sharing`)), chromedp.WaitVisible(chromedp.CSS(`#sharing-h`)))
	b.until("what alice shares and what bob shares with her", `['alice@echo@shout', 'alice@review', 'alice@notes'].every(n => !!document.querySelector('.you-share tr[data-shared="' + n + '"]')) && document.querySelector('.shared-with-you tr[data-tool="bob@handbook"]')?.textContent.includes('bob')`)
	b.shot("mine-sharing")
	b.axe("my tools, sharing")
	b.do("stop sharing the skill", chromedp.Click(chromedp.CSS(`.you-share tr[data-shared="alice@review"] button`)))
	b.until("the skill no longer shared", `!document.querySelector('.you-share tr[data-shared="alice@review"]') && !!document.querySelector('.you-share tr[data-shared="alice@notes"]')`)
	getJSON(t, s, "/wunder/user_tools/skills", alice, &skills)
	if len(skills.Shared) != 0 || !slices.Equal(skills.Enabled, []string{"review"}) {
		t.Errorf("alice's skills after \"stop sharing\": %+v", skills)
	}
	bobs.Shared = nil
	getJSON(t, s, "/wunder/user_tools/tools?user_id=bob", admin, &bobs)
	if slices.ContainsFunc(bobs.Shared, func(x struct{ Name, Owner string }) bool { return x.Name == "alice@review" }) {
		t.Errorf("bob still has alice@review: %+v", bobs.Shared)
	}

	// 5. The extra prompt.
	b.do("the prompt tab", chromedp.Click(chromedp.CSS(`#mytab-prompt`)), chromedp.WaitEnabled(chromedp.CSS(`textarea[name="extra-prompt"]`)))
	b.do("write it", chromedp.SendKeys(chromedp.CSS(`textarea[name="extra-prompt"]`), "Answer in French."), chromedp.Click(chromedp.Search(`//form[contains(@class,"extra-prompt")]//button[@type="submit"]`)))
	b.until("saved", `!!document.querySelector('.extra-prompt p.status')`)
	b.axe("my tools, extra prompt")
	var prompt struct {
		ExtraPrompt string `json:"extra_prompt"`
	}
	getJSON(t, s, "/wunder/user_tools/extra_prompt", alice, &prompt)
	if prompt.ExtraPrompt != "Answer in French." {
		t.Errorf("the extra prompt through the API: %q", prompt.ExtraPrompt)
	}

	// 6. Memory: off, and a record edited.
	b.do("the memory tab", chromedp.Click(chromedp.CSS(`#mytab-memory`)), chromedp.WaitVisible(chromedp.CSS(`.memory-records`)))
	b.until("memory on, with the record", `document.querySelector('.memory-state strong')?.textContent === 'on' && document.querySelector('.records li[data-session="sess-tea"]')?.textContent.includes('Alice prefers tea')`)
	b.do("turn memory off", chromedp.Click(chromedp.Search(`//div[contains(@class,"memory-records")]/div[contains(@class,"actions")]/button[text()="Disable"]`)))
	b.until("memory off", `document.querySelector('.memory-state strong')?.textContent === 'off'`)
	b.do("edit the record", chromedp.Click(chromedp.CSS(`.records button[aria-label="Edit sess-tea"]`)), chromedp.WaitVisible(chromedp.CSS(`textarea[name="memory-summary"]`)))
	b.eval(`(() => { const t = document.querySelector('textarea[name="memory-summary"]'); t.value = 'Alice prefers green tea'; t.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	b.do("save it", chromedp.Click(chromedp.Search(`//form[contains(@class,"inline-edit")]//button[@type="submit"]`)))
	b.until("the edited record", `document.querySelector('.records li[data-session="sess-tea"]')?.textContent.includes('green tea') && !document.querySelector('textarea[name="memory-summary"]')`)
	b.shot("mine-memory")
	b.axe("my tools, memory")
	var mem struct {
		Enabled bool
		Records []struct {
			SessionID string `json:"session_id"`
			Summary   string
		}
	}
	getJSON(t, s, "/wunder/memory", alice, &mem)
	if mem.Enabled || len(mem.Records) != 1 || mem.Records[0].Summary != "Alice prefers green tea" {
		t.Errorf("alice's memory through the API: %+v", mem)
	}

	// The pages at a phone's width, dark, and in Chinese.
	b.do("a phone's width", chromedp.EmulateViewport(390, 800))
	b.do("the dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.do("the MCP tab", chromedp.Click(chromedp.CSS(`#mytab-mcp`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-server="echo"]`)))
	b.axe("my tools, mcp, phone, dark")
	b.shot("mine-phone-dark")
	b.eval(`(() => { const s = document.querySelector('header select'); s.value = 'zh'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.until("the tabs in Chinese", `document.querySelector('nav a[href="#/mine"]').textContent === '我的工具' && document.querySelector('#mytab-sharing').textContent === '共享' && document.querySelector('#mytab-prompt').textContent === '附加提示词'`)

	b.mu.Lock()
	paths := slices.Clone(b.paths)
	b.mu.Unlock()
	for _, p := range paths {
		if strings.Contains(p, "/wunder/admin/") {
			t.Errorf("the page called an admin route: %s", p)
		}
	}
	if !slices.Contains(paths, "POST /wunder/user_tools/mcp/tools") || !slices.Contains(paths, "GET /wunder/user_tools/knowledge/search") {
		t.Errorf("the page's requests lack the user routes it should use: %v", paths)
	}
	b.clean()
}
