package a2a_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// memFiles is an in-memory a2a.FileStore; refuse makes a write of a
// name containing it fail with permission denied, removeFails makes that
// many removals fail (-1: all).
type memFiles struct {
	mu          sync.Mutex
	files       map[string]string // user/path -> content
	removed     []string          // every removal tried
	refuse      string
	removeFails int
}

func newMemFiles() *memFiles { return &memFiles{files: map[string]string{}} }

func (m *memFiles) WriteFile(_ context.Context, userID, path string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refuse != "" && strings.Contains(path, m.refuse) {
		return fmt.Errorf("%w: %s is denied by security.deny_globs", orchestrator.ErrPermissionDenied, path)
	}
	m.files[userID+"/"+path] = string(data)
	return nil
}

func (m *memFiles) RemoveAll(_ context.Context, userID, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.removed = append(m.removed, userID+"/"+path)
	if m.removeFails != 0 {
		m.removeFails--
		return fmt.Errorf("remove %s: device or resource busy", path)
	}
	for k := range m.files {
		if strings.HasPrefix(k, userID+"/"+path+"/") {
			delete(m.files, k)
		}
	}
	return nil
}

// paths lists the stored files, sorted.
func (m *memFiles) paths() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.files {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sendParts(t *testing.T, e *env, parts string) rpcResp {
	t.Helper()
	return post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[`+parts+`]}}}`)
}

// Names are cleaned to one path element of the message's folder, and two
// files of one name are told apart; a file without a name is named after
// its place and type.
func TestFilePartNames(t *testing.T) {
	fs := newMemFiles()
	e := newEnv(t, &a2a.Options{Files: &a2a.FileOptions{Store: fs}})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	r := sendParts(t, e, `{"text":"q"},{"raw":"`+b64("one")+`","filename":"../../etc/a.txt","mediaType":"text/plain"},`+
		`{"raw":"`+b64("two")+`","filename":"A.txt","mediaType":"text/plain"},{"raw":"`+b64("\x89PNG\r\n\x1a\n")+`","mediaType":"image/png"},`+
		`{"raw":"`+b64("x")+`","filename":"`+strings.Repeat("é", 100)+`.md"}`)
	if r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	var names []string
	for _, p := range fs.paths() {
		user, rest, _ := strings.Cut(p, "/")
		dir, name, _ := strings.Cut(strings.TrimPrefix(rest, a2a.DefaultFilesDir+"/"), "/")
		if user != "a2a" || !strings.HasPrefix(dir, "msg_") || strings.Contains(name, "/") {
			t.Errorf("saved at %s", p)
		}
		names = append(names, name)
	}
	long := strings.Repeat("é", 58) + ".md" // 116 bytes + 3: at most 120, no character cut
	if want := []string{"A-2.txt", "a.txt", "file-3.png", long}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}

// A URL is fetched through the SSRF guard: loopback is refused before any
// connection unless allowed; a file over attachments.max_bytes, or one
// that does not come within the fetch timeout, refuses the message; each
// refusal is invalid params naming the file, and leaves no file and no
// task.
func TestFilePartURLBounds(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/big.txt":
			_, _ = w.Write([]byte(strings.Repeat("x", 2000)))
		case "/slow.txt":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done() // until the fetch gives up
		default:
			_, _ = w.Write([]byte("small"))
		}
	}))
	t.Cleanup(srv.Close)
	part := func(path string) string {
		return `{"text":"q"},{"url":"` + srv.URL + path + `","filename":"f` + path + `"}`
	}

	guarded := newMemFiles()
	e := newEnv(t, &a2a.Options{Files: &a2a.FileOptions{Store: guarded, FetchURLs: true}})
	r := sendParts(t, e, part("/small.txt"))
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "private, loopback or link-local") || hits.Load() != 0 {
		t.Fatalf("loopback URL: %+v after %d requests; want -32602 from the guard and no request", r.Error, hits.Load())
	}

	fs := newMemFiles()
	e = newEnv(t, &a2a.Options{Attachments: doc2md.New(&doc2md.Options{MaxBytes: 1000}),
		Files: &a2a.FileOptions{Store: fs, FetchURLs: true, AllowPrivate: true, FetchTimeout: 300 * time.Millisecond}})
	for _, tc := range []struct{ path, want string }{
		{"/big.txt", "over the limit of 1000 (attachments.max_bytes)"},
		{"/slow.txt", "not fetched within 300ms"},
	} {
		r := sendParts(t, e, part(tc.path))
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, tc.want) || !strings.Contains(r.Error.Message, "f"+tc.path) {
			t.Errorf("%s: %+v; want -32602 naming the file and %q", tc.path, r.Error, tc.want)
		}
	}
	// A URL of another scheme is not fetched: it is text, as before.
	r = sendParts(t, e, `{"text":"q"},{"url":"ftp://example.com/f.txt","filename":"f.txt"}`)
	if r.Error != nil || !strings.Contains(string(r.Result), "ftp://example.com/f.txt") {
		t.Errorf("ftp URL: %s %+v; want it in the question", r.Result, r.Error)
	}
	if got := fs.paths(); len(got) != 0 {
		t.Errorf("files saved by refused messages: %v", got)
	}
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`)
	if strings.Count(string(r.Result), `"id":"run_`) != 1 { // the ftp one
		t.Errorf("tasks: %s; want only the one that was not refused", r.Result)
	}
}

// A file the workspace refuses (a denied name) refuses the message and
// leaves nothing of it; a run that does not start removes what was saved;
// too many data parts are refused.
func TestFilePartsLeaveNothingWhenRefused(t *testing.T) {
	fs := newMemFiles()
	fs.refuse = "secret"
	e := newEnv(t, &a2a.Options{Files: &a2a.FileOptions{Store: fs}})
	raw := base64.StdEncoding.EncodeToString([]byte("k"))
	r := sendParts(t, e, `{"data":{"a":1}},{"raw":"`+raw+`","filename":"secret.txt","mediaType":"text/plain"}`)
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `"secret.txt" not saved`) {
		t.Fatalf("denied name: %+v; want -32602 naming it", r.Error)
	}
	if got := fs.paths(); len(got) != 0 || len(fs.removed) != 1 {
		t.Fatalf("after a denied file: files %v, removed %v; want the folder removed", got, fs.removed)
	}

	// An issued contextId that is not the caller's: the run does not start.
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER",`+
		`"contextId":"sess_none","parts":[{"text":"q"},{"data":{"a":1}}]}}}`)
	if r.Error == nil || len(fs.paths()) != 0 || len(fs.removed) != 2 {
		t.Fatalf("a run refused by the core: %+v, files %v, removed %v", r.Error, fs.paths(), fs.removed)
	}

	many := strings.TrimSuffix(strings.Repeat(`{"data":{"n":1}},`, 33), ",")
	if r := sendParts(t, e, many); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "32 data parts") {
		t.Fatalf("33 data parts: %+v", r.Error)
	}
}

// A folder that fails to go is tried again; one that stays after the
// tries is counted (FileOptions.CleanupFailed) and said in the refusal,
// whose code and message otherwise stay: a part the workspace refuses,
// and a run the core refuses.
func TestFilePartsCleanupFailures(t *testing.T) {
	fs := newMemFiles()
	fs.refuse = "secret"
	var failed atomic.Int32
	e := newEnv(t, &a2a.Options{Files: &a2a.FileOptions{Store: fs, CleanupFailed: func() { failed.Add(1) }}})
	raw := base64.StdEncoding.EncodeToString([]byte("k"))
	refused := `{"data":{"a":1}},{"raw":"` + raw + `","filename":"secret.txt","mediaType":"text/plain"}`

	// One failure: the second try removes the folder, nothing is said.
	fs.removeFails = 1
	r := sendParts(t, e, refused)
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `"secret.txt" not saved`) || strings.Contains(r.Error.Message, "stay") {
		t.Fatalf("denied name, one failed removal: %+v; want -32602 naming it, nothing more", r.Error)
	}
	if got := fs.paths(); len(got) != 0 || len(fs.removed) != 2 || failed.Load() != 0 {
		t.Fatalf("after a retried removal: files %v, removals %v, %d counted; want none left after 2 tries, none counted", got, fs.removed, failed.Load())
	}

	// The folder stays: counted once, and the refusal says where.
	fs.removeFails, fs.removed = -1, nil
	r = sendParts(t, e, refused)
	left := fs.paths()
	if len(left) != 1 || !strings.HasSuffix(left[0], "/data-1.json") {
		t.Fatalf("files left: %v; want the data part's", left)
	}
	dir := strings.TrimSuffix(strings.TrimPrefix(left[0], "a2a/"), "/data-1.json")
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `"secret.txt" not saved`) ||
		!strings.Contains(r.Error.Message, "stay in your workspace, in "+dir) {
		t.Fatalf("denied name, the folder stays: %+v; want -32602 naming the file and %s", r.Error, dir)
	}
	if len(fs.removed) != 3 || failed.Load() != 1 {
		t.Fatalf("removals %v, %d counted; want 3 tries and 1 counted", fs.removed, failed.Load())
	}

	// A run the core refuses (a contextId that is not the caller's).
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER",`+
		`"contextId":"sess_none","parts":[{"text":"q"},{"data":{"a":1}}]}}}`)
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, `contextId "sess_none"`) ||
		!strings.Contains(r.Error.Message, "stay in your workspace") || failed.Load() != 2 {
		t.Fatalf("a run refused by the core, its folder stays: %+v, %d counted", r.Error, failed.Load())
	}
}
