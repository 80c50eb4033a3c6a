package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
)

// The web console's browser tests (issue 16): Debian's chromium, headless,
// driven over CDP against the real server of startServer. Without chromium
// they skip loudly, and fail when CI=true (.ci/run installs it). Every
// wait is a DOM condition under the test's deadline, never a sleep. Each
// test saves screenshots under $WUNDER_ARTEFACTS (default: a temp dir, in
// the log); -update-screenshots also rewrites docs/img/console-*.png.

var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite the screenshots in docs/img named by docScreenshots (docs/img/console-<name>.png)")

// docScreenshots are the screenshots docs/console.md shows (docs/img/console-<name>.png).
var docScreenshots = []string{"chat", "monitor", "question", "markdown", "mine-knowledge", "mine-sharing", "a2ui", "pending-list", "performance", "admin-models-test"}

// browser is one headless chromium tab with what the page did recorded.
type browser struct {
	t       *testing.T
	ctx     context.Context // carries the test's deadline
	root    context.Context // the browser's, without it (screenshots after a timeout)
	origin  string
	artDir  string
	mu      sync.Mutex
	errs    []string // console errors, exceptions, failed loads
	allowed []string // substrings of errors a test provokes on purpose
	foreign []string // requests to any other origin
	paths   []string // the paths of the requests to the server
	bytes   float64  // encoded (compressed) bytes received
}

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium is not installed (apt-get install chromium): the web console's browser tests cannot run"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPING: " + msg)
	return ""
}

func newBrowser(t *testing.T, origin string) *browser {
	t.Helper()
	exe := chromiumPath(t)
	b := &browser{t: t, origin: origin}
	b.artDir = os.Getenv("WUNDER_ARTEFACTS")
	if b.artDir == "" {
		b.artDir = filepath.Join(os.TempDir(), "wunder-artefacts")
	}
	b.artDir = filepath.Join(b.artDir, strings.ReplaceAll(t.Name(), "/", "_"))
	if err := os.MkdirAll(b.artDir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", b.artDir)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(b.record))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser and lives as long as ctx: no
	// deadline on it; the deadline goes on the context of the steps.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(tcancel)
	b.ctx, b.root = tctx, ctx
	return b
}

func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			b.errs = append(b.errs, "console.error: "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		msg := ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil {
			msg += " " + ex.Description
		}
		b.errs = append(b.errs, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			b.errs = append(b.errs, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u, err := url.Parse(ev.Request.URL); err == nil && u.Scheme != "data" && u.Scheme != "about" && u.Scheme+"://"+u.Host != b.origin {
			b.foreign = append(b.foreign, ev.Request.URL)
		} else if err == nil && u.Scheme+"://"+u.Host == b.origin {
			b.paths = append(b.paths, ev.Request.Method+" "+u.Path)
		}
	case *network.EventLoadingFinished:
		b.bytes += ev.EncodedDataLength
	}
}

// do runs steps, failing the test with what it was waiting for.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// until waits for a JavaScript condition to hold.
func (b *browser) until(what, js string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(0))); err != nil {
		b.shot("failed")
		b.t.Fatalf("waiting for %s (%s): %v", what, js, err)
	}
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// shot saves a screenshot as an artefact, and under docs/img when asked.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.root, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	_ = os.WriteFile(filepath.Join(b.artDir, name+".png"), png, 0o644)
	if *updateScreenshots && slices.Contains(docScreenshots, name) {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "img", "console-"+name+".png"), png, 0o644); err != nil {
			b.t.Error(err)
		}
	}
}

// allow makes clean accept the errors containing substr: the failed
// loads of the answers a test provokes (a 400, a 409).
func (b *browser) allow(substr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, substr)
}

// clean fails the test if the page logged an error or reached another origin.
func (b *browser) clean() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []string
	for _, e := range b.errs {
		ok := false
		for _, a := range b.allowed {
			ok = ok || strings.Contains(e, a)
		}
		if !ok {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		b.t.Errorf("the page logged errors:\n%s", strings.Join(errs, "\n"))
	}
	if len(b.foreign) > 0 {
		b.t.Errorf("the page made requests to other origins: %v", b.foreign)
	}
}

// axe runs axe-core (web/node_modules, pinned in web/package-lock.json) on
// the page and fails on serious or critical violations.
func (b *browser) axe(label string) {
	b.t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "web", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		msg := "axe-core is not installed (cd web && npm ci): " + err.Error()
		if os.Getenv("CI") == "true" {
			b.t.Fatal(msg)
		}
		b.t.Log("!!! SKIPPING the accessibility pass: " + msg)
		return
	}
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](string(src)+";true")); err != nil {
		b.t.Fatalf("inject axe-core: %v", err)
	}
	out := b.eval(`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))))`)
	var vs []struct {
		ID, Impact, Help string
		Nodes            []string
	}
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatal(err)
	}
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("axe (%s): %s %s: %s at %v", label, v.Impact, v.ID, v.Help, v.Nodes)
		} else {
			b.t.Logf("axe (%s): %s %s: %s at %v", label, v.Impact, v.ID, v.Help, v.Nodes)
		}
	}
}

// ask types a question into the chat box and sends it with Enter.
func (b *browser) ask(q string) {
	b.t.Helper()
	b.do("ask "+q,
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
		chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="Message"]`), q+"\r"),
	)
}

func (b *browser) pickTool(name string) {
	b.t.Helper()
	b.do("pick "+name, chromedp.Click(chromedp.Search(`//label[span[text()="`+name+`"]]/input`)))
}

// lastRun is the JavaScript for the newest run's block in the transcript.
const lastRun = `[...document.querySelectorAll('.msg.assistant[data-state]')].pop()`

func restDo(t *testing.T, method, u, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Body.Close() })
	return r
}

// Anonymous local mode (no API key, loopback): the console asks only for
// a user id; a question with tools streams its answer and shows each tool
// call with its arguments, result and timing; the first load is small,
// reaches no other origin and logs no error; axe finds no serious issue in
// either theme.
func TestConsoleAnonymousChat(t *testing.T) {
	s := startServer(t, nil)
	b := newBrowser(t, s.url)
	b.do("open the console",
		chromedp.Navigate(s.url+"/"), // redirects to /wunder/web/
		chromedp.WaitVisible(chromedp.CSS(`input[name="user_id"]`)),
	)
	b.mu.Lock()
	firstLoad := b.bytes
	b.mu.Unlock()
	t.Logf("first load transferred %.1f KB (compressed)", firstLoad/1024)
	if firstLoad > 300*1024 {
		t.Errorf("first load transferred %.0f bytes; want under 300 KB", firstLoad)
	}
	if b.eval(`String(!!document.querySelector('input[type="password"]'))`) != "false" {
		t.Fatal("anonymous mode shows a password field")
	}
	b.shot("login-anonymous")
	b.do("continue as alice",
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), "alice"),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
		chromedp.WaitVisible(chromedp.Search(`//label[span[text()="write_file"]]`)),
	)
	b.pickTool("write_file")
	b.pickTool("read_file")
	b.ask("please write a note and read it back")
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	b.until("the answer", `[...`+lastRun+`.querySelectorAll('.text')].pop()?.textContent.includes('hello from fakellm')`)
	b.until("both tool calls with their timing", `document.querySelectorAll('details.tool[data-tool="write_file"], details.tool[data-tool="read_file"]').length === 2 && document.querySelector('details.tool summary').textContent.includes('ms')`)
	b.do("open the write_file call", chromedp.Click(chromedp.CSS(`details.tool[data-tool="write_file"] summary`)))
	b.until("its arguments", `document.querySelector('details.tool[data-tool="write_file"] pre').textContent.includes('notes.txt')`)
	b.until("token usage", `!!document.querySelector('.usage')`)
	b.until("the session in the list", `document.querySelectorAll('.sessions button.session').length === 1`)
	b.shot("chat")
	b.axe("chat, light")
	b.do("dark theme", chromedp.Click(chromedp.CSS(`header button[aria-label^="Theme"]`)))
	b.until("the dark theme", `document.documentElement.dataset.theme === 'dark'`)
	b.axe("chat, dark")
	b.shot("chat-dark")

	// Continue the session from its history after a reload.
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`.sessions button.session`)))
	b.do("open the session", chromedp.Click(chromedp.CSS(`.sessions button.session`)))
	b.until("its history", `document.querySelectorAll('.msg.user').length === 1 && document.querySelector('details.tool[data-tool="write_file"]') !== null`)
	b.ask("hello again")
	b.until("the second answer in the same session", lastRun+`?.dataset.state === 'finished' && `+lastRun+`.textContent.includes('echo: hello again')`)
	if n := b.eval(`String(document.querySelectorAll('.sessions button.session').length)`); n != "1" {
		t.Errorf("sessions after continuing: %s; want 1", n)
	}
	b.clean()
}

// With an API key: the login form; an approval as a dialog; the monitor
// with a live run and its cancel button; Chinese.
func TestConsoleLoginApprovalMonitor(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Approvals.Tools = []string{"write_file"}
	})
	admin := map[string]string{"X-API-Key": "admin-key"}
	if r := restDo(t, "POST", s.url+"/wunder/admin/user_accounts", `{"user_id":"ops","password":"ops-password","roles":["admin"]}`, admin); r.StatusCode != 201 {
		t.Fatalf("create ops: %d", r.StatusCode)
	}
	b := newBrowser(t, s.url)
	b.do("open the console",
		chromedp.Navigate(s.url+"/wunder/web"),
		chromedp.WaitVisible(chromedp.CSS(`input[type="password"]`)),
	)
	b.do("log in",
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), "ops"),
		chromedp.SendKeys(chromedp.CSS(`input[type="password"]`), "ops-password"),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
	)
	if u := b.eval(`location.href`); strings.Contains(u, "wdr_") {
		t.Fatalf("the token is in the URL: %s", u)
	}

	// The approval dialog.
	b.do("tools", chromedp.WaitVisible(chromedp.Search(`//label[span[text()="write_file"]]`)))
	b.pickTool("write_file")
	b.pickTool("read_file")
	b.ask("please write a note")
	b.do("the approval dialog", chromedp.WaitVisible(chromedp.CSS(`dialog.approval[open]`)))
	b.until("the arguments in the dialog's schema-built form", `document.querySelector('dialog.approval input[name="path"]')?.value === 'notes.txt'`)
	b.do("the arguments as JSON", chromedp.Click(chromedp.Search(`//dialog//button[text()="Edit as JSON"]`)))
	b.until("the JSON", `document.querySelector('dialog.approval textarea')?.value.includes('notes.txt')`)
	b.shot("approval")
	b.do("approve", chromedp.Click(chromedp.Search(`//dialog//button[text()="Approve"]`)))
	b.until("the run to finish after the approval", lastRun+`?.dataset.state === 'finished' && `+lastRun+`.textContent.includes('hello from fakellm')`)
	b.until("the dialog to close", `!document.querySelector('dialog.approval')`)

	// The monitor: another user's run hangs in its model call.
	var run struct {
		RunID string `json:"run_id"`
	}
	r := restDo(t, "POST", s.url+"/wunder/runs", `{"user_id":"bob","question":"#hang forever"}`, admin)
	if err := json.NewDecoder(r.Body).Decode(&run); err != nil || r.StatusCode != 202 {
		t.Fatalf("submit: %d %v", r.StatusCode, err)
	}
	row := fmt.Sprintf(`tr[data-run-id=%q]`, run.RunID)
	b.do("the monitor", chromedp.Click(chromedp.CSS(`nav a[href="#/monitor"]`)), chromedp.WaitVisible(chromedp.CSS(row)))
	b.until("the tool usage", `document.querySelector('table.usage')?.textContent.includes('write_file')`)
	b.until("the heatmap's write_file row with a call this hour", `[...document.querySelectorAll('svg.heatmap rect.cell title')].some(t => t.textContent.startsWith('write_file') && !t.textContent.includes(': 0 '))`)
	b.until("the system snapshot", `document.querySelectorAll('dl.system dd').length >= 8`)
	b.eval(`(() => { const s = document.querySelector('#heat-h + label select'); s.value = 'user'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.until("the heatmap by user", `[...document.querySelectorAll('svg.heatmap text')].some(t => t.textContent === 'ops')`)
	b.shot("monitor")
	b.axe("monitor")
	b.do("cancel it", chromedp.Click(chromedp.CSS(row+` button`)))
	b.until("the run to leave the live list", `!document.querySelector('`+row+`')`)
	var got struct{ State string }
	if err := json.NewDecoder(restDo(t, "GET", s.url+"/wunder/runs/"+run.RunID, "", admin).Body).Decode(&got); err != nil || got.State != "cancelled" {
		t.Fatalf("the run after cancel: %+v %v", got, err)
	}

	// Chinese.
	b.do("back to chat", chromedp.Click(chromedp.CSS(`nav a[href="#/chat"]`)), chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)))
	b.eval(`(() => { const s = document.querySelector('header select'); s.value = 'zh'; s.dispatchEvent(new Event('change', {bubbles: true})); return '' })()`)
	b.do("the Chinese chat box", chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="消息"]`)))
	b.until("the Send button to read 发送", `[...document.querySelectorAll('.composer button')].some(x => x.textContent.trim() === '发送')`)
	if l := b.eval(`document.documentElement.lang`); l != "zh-CN" {
		t.Errorf("html lang = %q", l)
	}
	b.shot("chat-zh")
	b.clean()
}

// A dropped connection (the server's side cut mid-answer) resumes from
// the last seq: the answer ends whole, nothing lost or repeated.
func TestConsoleReconnect(t *testing.T) {
	s := startServer(t, nil)
	s.fake.Chunks = 40
	s.fake.ChunkDelay = 40 * time.Millisecond
	b := newBrowser(t, s.url)
	b.do("open", chromedp.Navigate(s.url+"/wunder/web/"), chromedp.WaitVisible(chromedp.CSS(`input[name="user_id"]`)))
	b.do("continue",
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), "carol"),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
	)
	q := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree twentyfour twentyfive twentysix twentyseven twentyeight twentynine thirty"
	b.ask(q)
	b.until("the answer to start", lastRun+`?.querySelector('.text')?.textContent.length > 0`)
	if n := s.conns.drop(); n == 0 {
		t.Fatal("no connection to drop")
	}
	b.do("the reconnecting notice", chromedp.WaitVisible(chromedp.CSS(`p.status[role="status"]`)))
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	if got := b.eval(lastRun + `.querySelector('.text').textContent`); got != "echo: "+q {
		t.Fatalf("answer after the reconnect:\n%q\nwant\n%q", got, "echo: "+q)
	}
	b.shot("reconnected")
}

// A run of more than 1,000 events renders without stalling the tab: the
// time from Enter to the final state, and the longest task the page ran.
func TestConsoleThousandEvents(t *testing.T) {
	// Each chunk its own event: merged, the chunks the fake model sends
	// at once would be a few dozen events.
	s := startServer(t, func(c *config.Config) { c.Observability.KeepOutputChunks = true })
	s.fake.Chunks = 1100
	b := newBrowser(t, s.url)
	b.do("open", chromedp.Navigate(s.url+"/wunder/web/"), chromedp.WaitVisible(chromedp.CSS(`input[name="user_id"]`)))
	b.do("continue",
		chromedp.SendKeys(chromedp.CSS(`input[name="user_id"]`), "dave"),
		chromedp.WaitEnabled(chromedp.CSS(`form button[type="submit"]`)), // disabled until /wunder/auth/config answers
		chromedp.Click(chromedp.CSS(`form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`textarea[aria-label="Message"]`)),
	)
	b.eval(`(() => { window.__long = 0; new PerformanceObserver(l => l.getEntries().forEach(e => { window.__long = Math.max(window.__long, e.duration) })).observe({type: 'longtask', buffered: false}); return '' })()`)
	words := make([]string, 1200)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	q := strings.Join(words, " ")
	// The question goes in as one input event: typed key by key (SendKeys)
	// its 7,000 characters took 28 of the test's 30 s before the run
	// even started (the server streamed the run in 0.1 s).
	qj, _ := json.Marshal(q)
	b.eval(`(() => { const t = document.querySelector('textarea[aria-label="Message"]'); t.value = ` + string(qj) + `; t.dispatchEvent(new Event('input', {bubbles: true})); return '' })()`)
	start := time.Now()
	b.do("send", chromedp.SendKeys(chromedp.CSS(`textarea[aria-label="Message"]`), "\r"))
	b.until("the run to finish", lastRun+`?.dataset.state === 'finished'`)
	took := time.Since(start)
	events := b.eval(`String(` + lastRun + `.dataset.events)`)
	long := b.eval(`String(Math.round(window.__long))`)
	t.Logf("%s events rendered in %v; longest task %s ms", events, took.Round(time.Millisecond), long)
	if got := b.eval(lastRun + `.querySelector('.text').textContent`); got != "echo: "+q {
		t.Fatalf("the answer is not whole (%d bytes, want %d)", len(got), len("echo: "+q))
	}
	var n int
	fmt.Sscan(events, &n)
	if n < 1000 {
		t.Fatalf("only %d events; the test wants more than 1,000", n)
	}
	var ms int
	fmt.Sscan(long, &ms)
	if ms > 500 {
		t.Errorf("the page stalled for %d ms", ms)
	}
	b.clean()
}

// connTracker is a listener that remembers its open connections so a test
// can cut them all at once, as a failing network would.
type connTracker struct {
	net.Listener
	mu   sync.Mutex
	open map[net.Conn]bool
}

func (l *connTracker) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open[c] = true
	l.mu.Unlock()
	return &trackedConn{Conn: c, l: l}, nil
}

// drop closes every connection open now.
func (l *connTracker) drop() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.open)
	for c := range l.open {
		_ = c.Close()
	}
	return n
}

type trackedConn struct {
	net.Conn
	l *connTracker
}

func (c *trackedConn) Close() error {
	c.l.mu.Lock()
	delete(c.l.open, c.Conn)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
