package edge

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/wunderproc"
)

// Issue 35, bounded document conversions: every hostile document sent to
// POST /wunder/doc2md/convert (open to every caller) is refused with a
// problem that names the limit and its config key (or, for a shape that
// only a tree made large, converted as a stream), the server stays up,
// and its peak RSS stays under maxPeakRSS. A watchdog kills the server
// past killRSS so that a failing run does not take the machine with it.

// killRSS is where the watchdog kills a server that a bomb got hold of.
const killRSS = 2 << 30

// convertProblem is what the tests read of a convert route's answer.
type convertProblem struct {
	Code       string `json:"code"`
	Detail     string `json:"detail"`
	Limit      string `json:"limit"`
	LimitValue int64  `json:"limit_value"`
	Content    string `json:"content"`
}

// String shows the problem, or the start of the Markdown.
func (p convertProblem) String() string {
	if p.Code == "" {
		return fmt.Sprintf("content %.200q", p.Content)
	}
	return fmt.Sprintf("%s %q (limit %s = %d)", p.Code, p.Detail, p.Limit, p.LimitValue)
}

type doc2mdBomb struct {
	name, file string
	data       func(testing.TB) []byte
	status     int
	limit      string
}

var doc2mdBombs = []doc2mdBomb{
	// Issue 35 (a): 97 KB on main, rows padded to 16384 columns each.
	{"xlsx rows padded to column XFD", "wide.xlsx", func(t testing.TB) []byte { return wideRowsXLSX(t, 18500) },
		http.StatusRequestEntityTooLarge, "attachments.max_columns"},
	// Issue 35 (b): table cells nested 100,000 deep.
	{"docx tables nested 100000 deep", "deep.docx", func(t testing.TB) []byte { return nestedTablesDOCX(t, 100000) },
		http.StatusUnprocessableEntity, "attachments.max_xml_depth"},
	// The ZIP bomb that was refused already: 128 MiB of blanks in a few hundred KB.
	{"docx zip bomb", "bomb.docx", func(t testing.TB) []byte { return zipBombDOCX(t, 128<<20) },
		http.StatusRequestEntityTooLarge, "attachments.max_unzip_bytes"},
	// The same nesting in HTML: 9 MB of <div>s.
	{"html divs nested 800000 deep", "deep.html", func(testing.TB) []byte { return nestedHTML(800000) },
		http.StatusUnprocessableEntity, "attachments.max_xml_depth"},
	// A tree of 2.25 million paragraphs took 641 MiB on main: read as a
	// stream it is a long page, converted (and clipped) within bounds.
	{"html 2.25 million paragraphs", "many.html", func(testing.TB) []byte { return manyElementsHTML("p", "x", 2250000) },
		http.StatusOK, ""},
	// Formatting elements left open nest: 3 million deep.
	{"html 3 million open italics", "italics.html", func(testing.TB) []byte { return manyElementsHTML("i", "", 3000000) },
		http.StatusUnprocessableEntity, "attachments.max_xml_depth"},
}

// answered reports whether the convert route answered as b wants: a
// refusal naming b.limit in the problem's limit and detail, or (for the
// shapes that a stream reads in bounded memory) the clipped Markdown.
func (b doc2mdBomb) answered(status int, p convertProblem) bool {
	if status != b.status {
		return false
	}
	if b.status == http.StatusOK {
		return strings.Contains(p.Content, "[clipped: the document has")
	}
	return p.Limit == b.limit && strings.Contains(p.Detail, b.limit) && p.LimitValue > 0
}

// TestDoc2mdBombsAreRefused sends each bomb to a fresh server (VmHWM is
// the whole process's peak, so one server per bomb).
func TestDoc2mdBombsAreRefused(t *testing.T) {
	wunderproc.NeedLinux(t)
	bin := wunderproc.Build(t)
	for _, b := range doc2mdBombs {
		t.Run(b.name, func(t *testing.T) {
			data := b.data(t)
			p := wunderproc.Start(t, bin, "")
			dog := watchRSS(t, p)
			status, prob, err := convertFile(p.URL, b.file, data)
			peak, killed := dog.stop()
			t.Logf("%s: %d bytes sent; answer %d %s (limit %s); peak RSS %d MiB", b.name, len(data), status, prob.Code, prob.Limit, peak>>20)
			if killed {
				t.Fatalf("the server passed %d MiB and was killed (peak %d MiB)", killRSS>>20, peak>>20)
			}
			if err != nil {
				t.Fatalf("convert: %v", err)
			}
			if !b.answered(status, prob) {
				t.Errorf("answer %d %s; want %d naming %q in limit and detail", status, prob, b.status, b.limit)
			}
			if peak >= maxPeakRSS {
				t.Errorf("peak RSS %d MiB; want under %d MiB", peak>>20, maxPeakRSS>>20)
			}
			stillConverts(t, p)
		})
	}
}

// TestDoc2mdBombsTogether sends all the bombs at once, twice over, to one
// server: their memory does not add up past the bound
// (attachments.max_concurrent lets only a few convert at a time).
func TestDoc2mdBombsTogether(t *testing.T) {
	wunderproc.NeedLinux(t)
	bin := wunderproc.Build(t)
	type sent struct {
		b    doc2mdBomb
		data []byte
	}
	var all []sent
	for range 2 {
		for _, b := range doc2mdBombs {
			all = append(all, sent{b, b.data(t)})
		}
	}
	p := wunderproc.Start(t, bin, "")
	dog := watchRSS(t, p)
	var wg sync.WaitGroup
	results := make([]string, len(all))
	for i, s := range all {
		wg.Go(func() {
			status, prob, err := convertFile(p.URL, s.b.file, s.data)
			switch {
			case err != nil:
				results[i] = fmt.Sprintf("%s: %v", s.b.name, err)
			case status == http.StatusServiceUnavailable && prob.Limit == "attachments.max_concurrent":
				// Turned away while the others convert: a bound too.
			case !s.b.answered(status, prob):
				results[i] = fmt.Sprintf("%s: %d %s; want %d naming %q", s.b.name, status, prob, s.b.status, s.b.limit)
			}
		})
	}
	wg.Wait()
	peak, killed := dog.stop()
	t.Logf("%d bombs at once: peak RSS %d MiB", len(all), peak>>20)
	if killed {
		t.Fatalf("the server passed %d MiB and was killed (peak %d MiB)", killRSS>>20, peak>>20)
	}
	for _, r := range results {
		if r != "" {
			t.Error(r)
		}
	}
	if peak >= maxPeakRSS {
		t.Errorf("peak RSS %d MiB; want under %d MiB", peak>>20, maxPeakRSS>>20)
	}
	stillConverts(t, p)
}

// TestDoc2mdNormalDocumentsConvert: a real table of 20,000 rows × 50
// columns still converts, in a spreadsheet and in a Word document, within
// the memory bound.
func TestDoc2mdNormalDocumentsConvert(t *testing.T) {
	wunderproc.NeedLinux(t)
	bin := wunderproc.Build(t)
	for _, tc := range []struct {
		file string
		data func(testing.TB) []byte
	}{
		{"table.xlsx", func(t testing.TB) []byte { return tableXLSX(t, 20000, 50) }},
		{"table.docx", func(t testing.TB) []byte { return tableDOCX(t, 20000, 50) }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := tc.data(t)
			p := wunderproc.Start(t, bin, "")
			dog := watchRSS(t, p)
			status, prob, err := convertFile(p.URL, tc.file, data)
			peak, killed := dog.stop()
			t.Logf("%s: %d bytes; answer %d; peak RSS %d MiB", tc.file, len(data), status, peak>>20)
			if killed {
				t.Fatalf("the server passed %d MiB and was killed", killRSS>>20)
			}
			if err != nil || status != http.StatusOK {
				t.Fatalf("convert: %d %+v %v", status, prob, err)
			}
			for _, want := range []string{"| r0c0 | r0c1 |", "| --- | --- |", "| r1c0 | r1c1 |", "[clipped: the document has"} {
				if !strings.Contains(prob.Content, want) {
					t.Errorf("the Markdown lacks %q: %.300s", want, prob.Content)
				}
			}
			if peak >= maxPeakRSS {
				t.Errorf("peak RSS %d MiB; want under %d MiB", peak>>20, maxPeakRSS>>20)
			}
		})
	}
}

// stillConverts checks that the server is up and converts a small
// document after a bomb.
func stillConverts(t *testing.T, p *wunderproc.Proc) {
	t.Helper()
	if !p.Alive() {
		t.Fatal("the server died")
	}
	status, prob, err := convertFile(p.URL, "ok.xlsx", tableXLSX(t, 2, 2))
	if err != nil || status != http.StatusOK || !strings.Contains(prob.Content, "| r0c0 | r0c1 |\n| --- | --- |\n| r1c0 | r1c1 |") {
		t.Fatalf("after the bomb, a small spreadsheet: %d %+v %v", status, prob, err)
	}
}

// doc2mdClient waits long enough for any conversion (attachments.timeout_s
// is 30 s) but not forever.
var doc2mdClient = &http.Client{Timeout: 3 * time.Minute}

// convertFile posts data as the multipart field "file" to the convert
// route; the answer is the problem or the converted document.
func convertFile(url, name string, data []byte) (int, convertProblem, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		return 0, convertProblem{}, err
	}
	if _, err := fw.Write(data); err != nil {
		return 0, convertProblem{}, err
	}
	if err := mw.Close(); err != nil {
		return 0, convertProblem{}, err
	}
	resp, err := doc2mdClient.Post(url+"/wunder/doc2md/convert", mw.FormDataContentType(), &body)
	if err != nil {
		return 0, convertProblem{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, convertProblem{}, err
	}
	var p convertProblem
	if err := json.Unmarshal(b, &p); err != nil {
		return resp.StatusCode, p, fmt.Errorf("answer %d is not JSON: %.200s", resp.StatusCode, b)
	}
	return resp.StatusCode, p, nil
}

// rssDog reads a server's memory every few milliseconds while a test
// runs, remembers its peak, and kills it past killRSS.
type rssDog struct {
	done   chan struct{}
	wg     sync.WaitGroup
	peak   int64
	killed bool
}

func watchRSS(t *testing.T, p *wunderproc.Proc) *rssDog {
	t.Helper()
	d := &rssDog{done: make(chan struct{})}
	pid := p.PID()
	d.wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, hwm, err := procMemory(pid)
			if err == nil {
				d.peak = max(d.peak, hwm)
				if rss > killRSS {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					d.killed = true
					return
				}
			}
			select {
			case <-d.done:
				return
			case <-tick.C:
			}
		}
	})
	t.Cleanup(func() { d.stop() })
	return d
}

// stop ends the watch and reports the peak RSS seen and whether the
// server was killed. It may be called more than once.
func (d *rssDog) stop() (peak int64, killed bool) {
	select {
	case <-d.done:
	default:
		close(d.done)
	}
	d.wg.Wait()
	return d.peak, d.killed
}

// procMemory reads VmRSS and VmHWM of pid from /proc, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		for field, dst := range map[string]*int64{"VmRSS:": &rss, "VmHWM:": &hwm} {
			if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err != nil {
					return 0, 0, err
				}
				*dst = kb << 10
			}
		}
	}
	return rss, hwm, nil
}

// TestDoc2mdBombsOnEveryPath: the same bounds hold where documents
// arrive other than the convert route — a question's attachments (POST
// /wunder, refused before a run exists) and a knowledge-base upload.
func TestDoc2mdBombsOnEveryPath(t *testing.T) {
	wunderproc.NeedLinux(t)
	bin := wunderproc.Build(t)
	p := wunderproc.Start(t, bin, "")
	dog := watchRSS(t, p)
	base := `{"knowledge":{"bases":[{"name":"kb","description":"bombs land here"}]}}`
	if status, body := postJSON(t, p.URL+"/wunder/admin/knowledge", base); status != http.StatusOK {
		t.Fatalf("creating the base: %d %s", status, body)
	}
	for _, b := range doc2mdBombs[:2] {
		data := b.data(t)
		question, _ := json.Marshal(map[string]any{"user_id": "ann", "question": "read it", "stream": false,
			"attachments": []map[string]string{{"type": "file", "name": b.file,
				"content": "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(data)}}})
		status, body := postJSON(t, p.URL+"/wunder", string(question))
		var prob convertProblem
		_ = json.Unmarshal(body, &prob)
		if !b.answered(status, prob) {
			t.Errorf("%s as an attachment: %d %s; want %d naming %s", b.name, status, body, b.status, b.limit)
		}
		status, prob = uploadKnowledge(t, p.URL, "kb", b.file, data)
		if !b.answered(status, prob) {
			t.Errorf("%s as a knowledge upload: %d %s; want %d naming %s", b.name, status, prob, b.status, b.limit)
		}
	}
	peak, killed := dog.stop()
	t.Logf("the bombs on every path: peak RSS %d MiB", peak>>20)
	if killed || peak >= maxPeakRSS {
		t.Fatalf("peak RSS %d MiB (killed: %v); want under %d MiB", peak>>20, killed, maxPeakRSS>>20)
	}
	// A normal document uploaded to the base is stored as Markdown.
	if status, prob := uploadKnowledge(t, p.URL, "kb", "table.xlsx", tableXLSX(t, 3, 2)); status != http.StatusOK {
		t.Fatalf("a normal upload: %d %s", status, prob)
	}
	resp, err := http.Get(p.URL + "/wunder/admin/knowledge/file?base=kb&path=table.md")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stored, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(stored), `| r2c0 | r2c1 |`) {
		t.Errorf("table.xlsx stored as table.md: %d %s", resp.StatusCode, stored)
	}
}

func postJSON(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := doc2mdClient.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// uploadKnowledge posts a file to the admin's knowledge base.
func uploadKnowledge(t *testing.T, url, base, name string, data []byte) (int, convertProblem) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("base", base)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	_ = mw.Close()
	resp, err := doc2mdClient.Post(url+"/wunder/admin/knowledge/upload", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p convertProblem
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("answer %d is not JSON: %.200s", resp.StatusCode, b)
	}
	return resp.StatusCode, p
}
