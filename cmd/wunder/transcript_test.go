package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// The golden transcripts (after go-sdk's mcp/testdata/conformance): what a
// client of each front-end sends and the exchange it must see, in
// testdata/transcripts/<front-end>/<case>.txtar, run against the real
// server in process with the one fake model (internal/testutil/fakellm).
// A case's archive holds, in order:
//
//   - its comment: what it shows;
//   - "config.yaml", optional: the server's configuration, read as an
//     operator's file is (config.Load: defaults, each new list entry's
//     own, unknown keys refused), its model the fake one; a placeholder
//     such as <upstream> or <a2a-peer> in it is the URL of a server
//     started for the case (transcript_upstream_test.go);
//   - steps, each "NN METHOD PATH" (headers, a blank line, the body) or
//     "NN restart" (the server stops and starts again on the same data
//     directory, as a crash's recovery or a rolling restart would);
//   - after each request, "want NN": the status, the headers a client reads
//     (content type, session and run ids, Retry-After, WWW-Authenticate,
//     the A2A extensions a response applied),
//     a blank line and the body as the client gets it: JSON indented, an
//     event stream's events without its heartbeats, Connect's frames one a
//     line.
//
// Ids, times and durations are normalised: the first run id seen becomes
// <run-1>, an upstream's first UUID <uuid-1>, a time <time>, a duration
// <ms>; a request may name <run-1> and gets the real id. Any changed
// letter of a want section fails the test; go test ./cmd/wunder -run
// TestTranscripts -update rewrites them, to be read in review like code.

var updateTranscripts = flag.Bool("update", false, "rewrite the want sections of testdata/transcripts")

const transcriptDir = "../../testdata/transcripts"

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(transcriptDir, "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no transcripts under %s", transcriptDir)
	}
	for _, file := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(file), transcriptDir+"/"), ".txtar")
		t.Run(name, func(t *testing.T) { runTranscript(t, file) })
	}
}

// transcript is one case being run.
type transcript struct {
	t    *testing.T
	file string
	ar   *txtar.Archive
	cfg  *config.Config
	s    *server
	stop func()
	norm *normalizer
	// changed: a want section was rewritten (-update).
	changed bool
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tr := &transcript{t: t, file: file, ar: ar, norm: newNormalizer()}
	tr.start()
	for i := 0; i < len(ar.Files); i++ {
		f := ar.Files[i]
		num, step, ok := strings.Cut(f.Name, " ")
		switch {
		case f.Name == "config.yaml", strings.HasPrefix(f.Name, "want "):
			continue
		case !ok || num == "" || strings.Trim(num, "0123456789") != "":
			t.Fatalf("%s: section %q: want NN METHOD PATH, NN restart, want NN or config.yaml", file, f.Name)
		case step == "restart":
			tr.stop()
			tr.s, tr.stop = serveConfig(t, tr.cfg)
			continue
		}
		got := tr.do(step, string(f.Data))
		tr.want(i, "want "+num, got)
	}
	if tr.changed {
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// start serves a wunder configured as the case says, on the fake model.
func (tr *transcript) start() {
	t := tr.t
	fake := &fakellm.Server{Chunks: 3}
	model := httptest.NewServer(fake)
	t.Cleanup(model.Close)
	// The case's config.yaml is read as an operator's file is
	// (config.Load: a new list entry starts from its defaults, an unknown
	// key fails), with no environment but the data directory, then the
	// test server's model.
	var caseYAML []byte
	for _, f := range tr.ar.Files {
		if f.Name == "config.yaml" {
			caseYAML = withUpstreams(t, f.Data)
		}
	}
	dir := dataDir(t)
	cfg, err := config.Load(config.LoadOptions{Path: "config.yaml", Override: []byte{},
		ReadFile: func(string) ([]byte, error) { return caseYAML, nil },
		LookupEnv: func(k string) (string, bool) {
			if k == "WUNDER_DATA_DIR" {
				return dir, true
			}
			return "", false
		}})
	if err != nil {
		t.Fatalf("config.yaml: %v", err)
	}
	m := config.NewModel()
	m.Provider, m.BaseURL, m.Model = config.ProviderLocal, model.URL+"/v1", "fake"
	m.Retry.InitialBackoffMillis, m.Retry.MaxAttempts = 1, 1
	cfg.LLM.Models = map[string]config.Model{"fake": m}
	// Every streamed chunk its own event: how many chunks a reader sees
	// joined otherwise depends on the store's speed.
	cfg.Observability.KeepOutputChunks = true
	tr.cfg = cfg
	tr.s, tr.stop = serveConfig(t, cfg)
}

// do sends one request (its section's text, placeholders replaced) and
// returns the exchange as the want section shows it.
func (tr *transcript) do(step, text string) string {
	t := tr.t
	method, path, ok := strings.Cut(step, " ")
	if !ok {
		t.Fatalf("%s: step %q: want METHOD PATH", tr.file, step)
	}
	text = tr.norm.fill(text)
	head, body, _ := strings.Cut(text, "\n\n")
	if strings.HasPrefix(text, "\n") { // no headers: the blank line comes first
		head, body = "", text[1:]
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	req, err := http.NewRequestWithContext(ctx, method, tr.s.url+tr.norm.fill(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	events := 0 // Transcript-Events: read only so many events
	for line := range strings.SplitSeq(head, "\n") {
		k, v, ok := strings.Cut(line, ":")
		switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); {
		case !ok:
		case strings.EqualFold(k, "Host"): // the authority a client names, as a rebound DNS name makes it
			req.Host = v
		case strings.EqualFold(k, eventsHeader):
			if events, err = strconv.Atoi(v); err != nil || events < 1 {
				t.Fatalf("%s: step %q: %s: %q, want a count of events", tr.file, step, eventsHeader, v)
			}
		default:
			req.Header.Set(k, v)
		}
	}
	b := []byte(strings.TrimSuffix(body, "\n"))
	if req.Header.Get("Content-Type") == "application/connect+json" {
		b = connectFrame(0, b)
	}
	if len(b) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if events > 0 {
		// The stream stays open until the case ends, as a client that
		// keeps listening holds it: the steps after it meet it open.
		t.Cleanup(func() { resp.Body.Close(); cancel() })
	} else {
		defer cancel()
		defer resp.Body.Close()
	}
	return tr.norm.apply(render(t, resp, events))
}

// eventsHeader, in a step's headers, is not sent: "Transcript-Events: N"
// reads only the first N events of the response's event stream, then
// leaves it open until the case ends (a stream that never ends by
// itself, such as MCP's subscriptions/listen). The want section says so
// in its last line.
const eventsHeader = "Transcript-Events"

// want compares got with the want section after the step at index i; with
// -update it writes got there (adding the section when missing).
func (tr *transcript) want(i int, name, got string) {
	ar := tr.ar
	at := slices.IndexFunc(ar.Files, func(f txtar.File) bool { return f.Name == name })
	if *updateTranscripts {
		switch {
		case at < 0:
			ar.Files = slices.Insert(ar.Files, i+1, txtar.File{Name: name, Data: []byte(got)})
			tr.changed = true
		case string(ar.Files[at].Data) != got:
			ar.Files[at].Data = []byte(got)
			tr.changed = true
		}
		return
	}
	if at < 0 {
		tr.t.Fatalf("%s: no %q section; run go test ./cmd/wunder -run TestTranscripts -update", tr.file, name)
	}
	if want := string(ar.Files[at].Data); want != got {
		tr.t.Errorf("%s: %s differs (-want +got):\n%s", tr.file, name, cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")))
	}
}

// shownHeaders are the response headers a transcript shows.
var shownHeaders = []string{"Content-Type", "Mcp-Session-Id", "X-Run-Id", "X-Session-Id", "Retry-After", "Www-Authenticate", "Allow", "A2A-Extensions"}

// render is a response as a client reads it; of an event stream, the
// first events only when events > 0 (see eventsHeader).
func render(t *testing.T, resp *http.Response, events int) string {
	var out strings.Builder
	fmt.Fprintf(&out, "%d\n", resp.StatusCode)
	for _, h := range shownHeaders {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(&out, "%s: %s\n", h, v)
		}
	}
	out.WriteString("\n")
	ct := resp.Header.Get("Content-Type")
	if events > 0 && strings.HasPrefix(ct, "text/event-stream") {
		renderEvents(t, resp.Body, events, &out)
		return out.String()
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if line := sc.Text(); !strings.HasPrefix(line, ":") { // heartbeats are comments
				out.WriteString(line + "\n")
			}
		}
	case strings.HasPrefix(ct, "application/connect+json"):
		for len(body) >= 5 {
			n := int(binary.BigEndian.Uint32(body[1:5]))
			if 5+n > len(body) {
				break
			}
			// protojson varies its whitespace from build to build on
			// purpose (detrand): compacted, a frame reads the same.
			msg := body[5 : 5+n]
			var buf bytes.Buffer
			if json.Compact(&buf, msg) == nil {
				msg = buf.Bytes()
			}
			fmt.Fprintf(&out, "frame %d %s\n", body[0], msg)
			body = body[5+n:]
		}
	case strings.Contains(ct, "json"):
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			out.Write(buf.Bytes())
			out.WriteString("\n")
			break
		}
		out.Write(body)
	default:
		out.Write(body)
	}
	return out.String()
}

// renderEvents writes the first n events of an event stream that is still
// open, as render writes a whole one, and says that it stays open.
func renderEvents(t *testing.T, body io.Reader, n int, out *strings.Builder) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	fields := false // the event being read has a field
	for n > 0 && sc.Scan() {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, ":"): // heartbeats are comments
		case line == "":
			out.WriteString("\n")
			if fields {
				n--
			}
			fields = false
		default:
			out.WriteString(line + "\n")
			fields = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the event stream: %v", err)
	}
	if n > 0 {
		out.WriteString("(the stream ended)\n")
		return
	}
	out.WriteString("(the stream stays open)\n")
}

// connectFrame is one message of the Connect streaming protocol.
func connectFrame(flags byte, msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	b[0] = flags
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// normalizer replaces what differs from run to run (ids, times,
// durations, ports) with placeholders, numbering each kind of id in order
// of first appearance, and fills placeholders back in requests.
type normalizer struct {
	ids  map[string]string // real -> placeholder
	back map[string]string // placeholder -> real
	next map[string]int    // kind -> last number
}

func newNormalizer() *normalizer {
	return &normalizer{ids: map[string]string{}, back: map[string]string{}, next: map[string]int{}}
}

var (
	// wunder's ids: a prefix (letters, then letters or digits: a2ui_)
	// and 26 characters of Crockford base32.
	idRE = regexp.MustCompile(`\b([a-z][a-z0-9]*(?:_[a-z]+)?)_([0-9a-hjkmnp-tv-z]{26})\b`)
	// UUIDs: the ids of an upstream's own (an a2a-go peer's tasks,
	// contexts, messages and artifacts).
	uuidRE = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// The MCP SDK's session ids and random request ids, by where they stand.
	mcpSessionRE = regexp.MustCompile(`(Mcp-Session-Id: )(\S+)`)
	requestIDRE  = regexp.MustCompile(`("request_?[iI]d": ?")([^"]+)(")`)
	// The SSE event ids of an MCP session's streams (<stream>_<index>),
	// by which a client resumes one.
	mcpEventRE = regexp.MustCompile(`(?m)^(id: )([A-Z2-7]{26})(_\d+)$`)
	// Page cursors hold an item's time and id: each is named, and a
	// request may send it back by its placeholder.
	cursorRE = regexp.MustCompile(`("(?:next_cursor|nextCursor|nextPageToken|next_page_token)": ?")([^"]+)(")`)
	// The requestState of an MCP input-required result, which the retry
	// sends back by its placeholder.
	requestStateRE = regexp.MustCompile(`("requestState": ?")([^"<]+)(")`)
	timeRE         = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	durationRE     = regexp.MustCompile(`("(?:duration_ms|durationMs|elapsed_ms|run_seconds|wait_ms)": ?)[0-9.]+`)
	// A local server: a URL's host, or a gRPC target (host:port alone).
	hostRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// name is the placeholder of real, an id of kind.
func (n *normalizer) name(kind, real string) string {
	if p, ok := n.ids[real]; ok {
		return p
	}
	n.next[kind]++
	p := "<" + kind + "-" + strconv.Itoa(n.next[kind]) + ">"
	n.ids[real], n.back[p] = p, real
	return p
}

func (n *normalizer) apply(s string) string {
	s = idRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := idRE.FindStringSubmatch(m)
		return n.name(strings.ReplaceAll(sub[1], "_", "-"), m)
	})
	s = uuidRE.ReplaceAllStringFunc(s, func(m string) string { return n.name("uuid", m) })
	s = mcpSessionRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := mcpSessionRE.FindStringSubmatch(m)
		return sub[1] + n.name("mcp-session", sub[2])
	})
	s = mcpEventRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := mcpEventRE.FindStringSubmatch(m)
		return sub[1] + n.name("mcp-stream", sub[2]) + sub[3]
	})
	s = requestIDRE.ReplaceAllString(s, `${1}<request-id>${3}`)
	s = cursorRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := cursorRE.FindStringSubmatch(m)
		return sub[1] + n.name("cursor", sub[2]) + sub[3]
	})
	s = requestStateRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := requestStateRE.FindStringSubmatch(m)
		return sub[1] + n.name("request-state", sub[2]) + sub[3]
	})
	s = timeRE.ReplaceAllString(s, "<time>")
	s = durationRE.ReplaceAllString(s, "${1}<ms>")
	return hostRE.ReplaceAllString(s, "<host>")
}

// fill puts the real values back for the placeholders of a request.
func (n *normalizer) fill(s string) string {
	for p, real := range n.back {
		s = strings.ReplaceAll(s, p, real)
	}
	return s
}
