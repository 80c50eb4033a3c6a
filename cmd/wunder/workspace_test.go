package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The workspace API (gateway/workspace*.go over adapters/builtin) on the
// real wired server: each route's behaviour, then the escape corpus
// against every route.

// wsFixture is a server whose alice has a workspace with the usual escape
// routes (after adapters/builtin's escapeFixture): symlinks to /etc, to
// /etc/passwd and to a directory outside holding secret.txt, an inside
// symlink, a symlink to a denied file, a dangling one, and denied files.
type wsFixture struct {
	f       *fixture
	dir     string // alice's workspace
	outside string
	admin   map[string]string
}

const outsideSecret = "TOP SECRET outside"

func newWSFixture(t *testing.T) *wsFixture {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Security.DenyGlobs = []string{".env", "**/*.pem", "secrets"}
		c.Security.MaxFileBytes = 1024
		c.Workspace.MaxUploadBytes = 4096
		c.Workspace.MaxUploadTotalBytes = 64 << 10
	})
	w := &wsFixture{f: &fixture{s: s}, dir: filepath.Join(s.dir, "workspaces", "alice"), outside: t.TempDir(),
		admin: map[string]string{"X-API-Key": "admin-key"}}
	files := map[string]string{
		"a.txt":         "alpha\n",
		"sub/b.txt":     "bravo needle\n",
		"big.txt":       strings.Repeat("x", 2000),
		"bin.dat":       "ab\x00cd needle",
		".env":          "TOKEN=needle\n",
		"keys/id.pem":   "PEM needle\n",
		"secrets/s.txt": "hidden needle\n",
	}
	for p, c := range files {
		writeFile(t, filepath.Join(w.dir, p), c)
	}
	writeFile(t, filepath.Join(w.outside, "secret.txt"), outsideSecret+" needle\n")
	for link, target := range map[string]string{"etc_link": "/etc", "passwd_link": "/etc/passwd", "out_dir": w.outside,
		"in_link": "sub", "env_link": ".env", "dangling": "nowhere/x"} {
		if err := os.Symlink(target, filepath.Join(w.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
		t.Fatal(err)
	}
}

// do makes a request as the admin for alice; query values are escaped.
func (w *wsFixture) do(t *testing.T, method, route string, q url.Values, body string) (*http.Response, []byte) {
	t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("user_id", "alice")
	r := w.f.rest(t, method, route+"?"+q.Encode(), body, w.admin)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

func (w *wsFixture) json(t *testing.T, method, route string, q url.Values, body string, want int) map[string]any {
	t.Helper()
	r, b := w.do(t, method, route, q, body)
	if r.StatusCode != want {
		t.Fatalf("%s %s %v = %d %s; want %d", method, route, q, r.StatusCode, b, want)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, route, err, b)
	}
	return m
}

// problemCode asserts a problem answer and returns its code.
func problemCode(t *testing.T, r *http.Response, b []byte) string {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s %s = %d %s (%s); want a problem", r.Request.Method, r.Request.URL, r.StatusCode, b, ct)
	}
	var p struct{ Code string }
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p.Code
}

// upload posts files (name -> content) into dir, as the admin for alice.
func (w *wsFixture) upload(t *testing.T, dir string, names []string, contents []string) (*http.Response, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("user_id", "alice")
	_ = mw.WriteField("path", dir)
	for i, n := range names {
		// Not CreateFormFile: it would escape quotes only, as a browser
		// does; the raw name is what the server must judge.
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="files"; filename="`+strings.ReplaceAll(n, `"`, `\"`)+`"`)
		h.Set("Content-Type", "application/octet-stream")
		pw, _ := mw.CreatePart(h)
		_, _ = pw.Write([]byte(contents[i]))
	}
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", w.f.s.url+"/wunder/workspace/upload", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", "admin-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func names(entries any) []string {
	var out []string
	for _, e := range entries.([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

func TestWorkspaceRead(t *testing.T) {
	w := newWSFixture(t)
	t.Run("list the root with a summary", func(t *testing.T) {
		m := w.json(t, "GET", "/wunder/workspace", nil, "", 200)
		got := names(m["entries"])
		want := []string{"a.txt", "big.txt", "bin.dat", "dangling", "env_link", "etc_link", "in_link", "keys", "out_dir", "passwd_link", "sub"}
		if !slices.Equal(got, want) {
			t.Errorf("entries = %q; want %q (denied .env and secrets left out)", got, want)
		}
		sum := m["summary"].(map[string]any)
		// a.txt big.txt bin.dat sub/b.txt; keys/id.pem, .env, secrets/ denied.
		if sum["files"] != 4.0 || sum["dirs"] != 2.0 || sum["bytes"] != float64(6+13+2000+12) {
			t.Errorf("summary = %v", sum)
		}
		if m["parent"] != nil || m["total"] != float64(len(want)) {
			t.Errorf("parent %v total %v", m["parent"], m["total"])
		}
	})
	t.Run("page and sort", func(t *testing.T) {
		m := w.json(t, "GET", "/wunder/workspace", url.Values{"offset": {"1"}, "limit": {"2"}, "sort_by": {"size"}, "order": {"desc"}}, "", 200)
		if got := names(m["entries"]); !slices.Equal(got, []string{"bin.dat", "a.txt"}) || m["total"] != 11.0 {
			t.Errorf("page = %q total %v; want [bin.dat a.txt] of 11", got, m["total"])
		}
		r, b := w.do(t, "GET", "/wunder/workspace", url.Values{"sort_by": {"colour"}}, "")
		if r.StatusCode != 400 || problemCode(t, r, b) != "invalid_argument" {
			t.Errorf("bad sort_by = %d %s", r.StatusCode, b)
		}
	})
	t.Run("content of a file", func(t *testing.T) {
		m := w.json(t, "GET", "/wunder/workspace/content", url.Values{"path": {"sub/b.txt"}}, "", 200)
		if m["content"] != "bravo needle\n" || m["type"] != "file" || m["format"] != "text" || m["truncated"] != false {
			t.Errorf("content = %v", m)
		}
		m = w.json(t, "GET", "/wunder/workspace/content", url.Values{"path": {"a.txt"}, "max_bytes": {"2"}}, "", 200)
		if m["content"] != "al" || m["truncated"] != true {
			t.Errorf("max_bytes=2: %v", m)
		}
		for path, code := range map[string]string{"bin.dat": "binary_file", "big.txt": "file_too_large"} {
			r, b := w.do(t, "GET", "/wunder/workspace/content", url.Values{"path": {path}}, "")
			if r.StatusCode != 422 || problemCode(t, r, b) != code {
				t.Errorf("%s = %d %s; want 422 %s", path, r.StatusCode, b, code)
			}
		}
		m = w.json(t, "GET", "/wunder/workspace/content", url.Values{"path": {"big.txt"}, "include_content": {"false"}}, "", 200)
		if m["size"] != 2000.0 || m["content"] != nil {
			t.Errorf("metadata only: %v", m)
		}
	})
	t.Run("content of a directory as a tree", func(t *testing.T) {
		m := w.json(t, "GET", "/wunder/workspace/content", url.Values{"path": {""}, "depth": {"2"}, "keyword": {"sub"}}, "", 200)
		es := m["entries"].([]any)
		if m["format"] != "dir" || len(es) != 1 {
			t.Fatalf("tree = %v", m)
		}
		kids := es[0].(map[string]any)["children"]
		if got := names(kids); !slices.Equal(got, []string{"b.txt"}) {
			t.Errorf("children of sub = %q", got)
		}
	})
	t.Run("search names and contents with search_content's engine", func(t *testing.T) {
		m := w.json(t, "GET", "/wunder/workspace/search", url.Values{"query": {"needle"}}, "", 200)
		matches := m["matches"].([]any)
		if len(matches) != 1 {
			t.Fatalf("matches = %v; want sub/b.txt only (binary, denied and outside skipped)", matches)
		}
		if mt := matches[0].(map[string]any); mt["path"] != "sub/b.txt" || mt["line"] != 1.0 || mt["text"] != "bravo needle" {
			t.Errorf("match = %v", mt)
		}
		if m["skipped_files"] != 2.0 {
			t.Errorf("skipped_files = %v; want 2 (bin.dat, and big.txt over the read limit)", m["skipped_files"])
		}
		m = w.json(t, "GET", "/wunder/workspace/search", url.Values{"query": {"B.TXT"}, "ignore_case": {"true"}, "content": {"false"}}, "", 200)
		if got := names(m["entries"]); !slices.Equal(got, []string{"b.txt"}) {
			t.Errorf("name search = %q", got)
		}
		r, b := w.do(t, "GET", "/wunder/workspace/search", url.Values{"query": {"("}, "regex": {"true"}}, "")
		if r.StatusCode != 400 || problemCode(t, r, b) != "invalid_argument" {
			t.Errorf("bad regex = %d %s", r.StatusCode, b)
		}
	})
	t.Run("download", func(t *testing.T) {
		r, b := w.do(t, "GET", "/wunder/workspace/download", url.Values{"path": {"sub/b.txt"}}, "")
		if r.StatusCode != 200 || string(b) != "bravo needle\n" {
			t.Fatalf("download = %d %q", r.StatusCode, b)
		}
		if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename=b.txt` {
			t.Errorf("Content-Disposition = %q", cd)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type = %q", ct)
		}
		r, b = w.do(t, "GET", "/wunder/workspace/download", url.Values{"path": {"sub"}}, "")
		if r.StatusCode != 400 {
			t.Errorf("download of a directory = %d %s; want 400", r.StatusCode, b)
		}
	})
	t.Run("archive", func(t *testing.T) {
		got := w.archive(t, "")
		want := []string{"a.txt", "big.txt", "bin.dat", "keys/", "sub/", "sub/b.txt"}
		if !slices.Equal(got, want) {
			t.Errorf("archive of the workspace = %q; want %q (denied entries and symlinks left out)", got, want)
		}
		if got := w.archive(t, "sub"); !slices.Equal(got, []string{"sub/", "sub/b.txt"}) {
			t.Errorf("archive of sub = %q", got)
		}
	})
}

// archive fetches a zip of path and returns its entry names, checking
// each is a plain relative path (no zip slip).
func (w *wsFixture) archive(t *testing.T, path string) []string {
	t.Helper()
	r, b := w.do(t, "GET", "/wunder/workspace/archive", url.Values{"path": {path}}, "")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("archive %q = %d %s", path, r.StatusCode, b)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range zr.File {
		if !fs.ValidPath(strings.TrimSuffix(f.Name, "/")) {
			t.Errorf("zip entry %q is not a plain relative path", f.Name)
		}
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

func TestWorkspaceWrite(t *testing.T) {
	w := newWSFixture(t)
	exists := func(p string) bool { _, err := os.Lstat(filepath.Join(w.dir, p)); return err == nil }
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(w.dir, p)); return string(b) }
	t.Run("dir", func(t *testing.T) {
		w.json(t, "POST", "/wunder/workspace/dir", nil, `{"path":"new/deep"}`, 200)
		if fi, err := os.Stat(filepath.Join(w.dir, "new/deep")); err != nil || !fi.IsDir() {
			t.Errorf("new/deep not created: %v", err)
		}
		r, b := w.do(t, "POST", "/wunder/workspace/dir", nil, `{"path":"a.txt"}`)
		if r.StatusCode != 409 {
			t.Errorf("mkdir over a file = %d %s; want 409", r.StatusCode, b)
		}
	})
	t.Run("file", func(t *testing.T) {
		w.json(t, "POST", "/wunder/workspace/file", nil, `{"path":"a.txt","content":"changed"}`, 200)
		if read("a.txt") != "changed" {
			t.Errorf("a.txt = %q", read("a.txt"))
		}
		r, b := w.do(t, "POST", "/wunder/workspace/file", nil, `{"path":"nope.txt","content":"x"}`)
		if r.StatusCode != 404 || exists("nope.txt") {
			t.Errorf("without create_if_missing = %d %s", r.StatusCode, b)
		}
		w.json(t, "POST", "/wunder/workspace/file", nil, `{"path":"made/n.txt","content":"new","create_if_missing":true}`, 200)
		if read("made/n.txt") != "new" {
			t.Errorf("made/n.txt = %q", read("made/n.txt"))
		}
		r, b = w.do(t, "POST", "/wunder/workspace/file", nil, `{"path":"a.txt","content":"`+strings.Repeat("y", 1025)+`"}`)
		if r.StatusCode != 413 || problemCode(t, r, b) != "file_too_large" || read("a.txt") != "changed" {
			t.Errorf("over security.max_file_bytes = %d %s", r.StatusCode, b)
		}
		entries, _ := os.ReadDir(w.dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary file left: %s", e.Name())
			}
		}
	})
	t.Run("upload", func(t *testing.T) {
		w.json(t, "POST", "/wunder/workspace/dir", nil, `{"path":"up"}`, 200)
		r, b := w.upload(t, "up", []string{"one.txt", "nested/two.txt"}, []string{"1", "22"})
		if r.StatusCode != 200 || read("up/one.txt") != "1" || read("up/nested/two.txt") != "22" {
			t.Fatalf("upload = %d %s", r.StatusCode, b)
		}
		r, b = w.upload(t, "up", []string{"huge.bin"}, []string{strings.Repeat("z", 4097)})
		if r.StatusCode != 413 || problemCode(t, r, b) != "file_too_large" || exists("up/huge.bin") {
			t.Errorf("over workspace.max_upload_bytes = %d %s", r.StatusCode, b)
		}
		r, b = w.upload(t, "missing-dir", []string{"x.txt"}, []string{"x"})
		if r.StatusCode != 404 {
			t.Errorf("into a missing directory = %d %s; want 404", r.StatusCode, b)
		}
	})
	t.Run("move", func(t *testing.T) {
		writeFile(t, filepath.Join(w.dir, "mv.txt"), "m")
		w.json(t, "POST", "/wunder/workspace/move", nil, `{"source":"mv.txt","destination":"moved/mv.txt"}`, 200)
		if exists("mv.txt") || read("moved/mv.txt") != "m" {
			t.Error("mv.txt not moved")
		}
		r, b := w.do(t, "POST", "/wunder/workspace/move", nil, `{"path":"moved/mv.txt","destination":"a.txt"}`)
		if r.StatusCode != 409 || read("a.txt") != "changed" {
			t.Errorf("onto an existing file = %d %s; want 409", r.StatusCode, b)
		}
		r, b = w.do(t, "POST", "/wunder/workspace/move", nil, `{"source":"moved","destination":"moved/inner"}`)
		if r.StatusCode != 400 {
			t.Errorf("into itself = %d %s; want 400", r.StatusCode, b)
		}
		// A symlink moves as a link; what it points to stays.
		w.json(t, "POST", "/wunder/workspace/move", nil, `{"source":"in_link","destination":"in_link2"}`, 200)
		if target, err := os.Readlink(filepath.Join(w.dir, "in_link2")); err != nil || target != "sub" || !exists("sub/b.txt") {
			t.Errorf("in_link2 -> %q (%v)", target, err)
		}
		// A directory holding denied entries would take them out of the
		// deny globs' reach.
		writeFile(t, filepath.Join(w.dir, "cfg/keys/k.pem"), "k")
		r, b = w.do(t, "POST", "/wunder/workspace/move", nil, `{"source":"cfg","destination":"cfg2"}`)
		if r.StatusCode != 403 || !exists("cfg/keys/k.pem") {
			t.Errorf("move of a directory holding denied paths = %d %s; want 403", r.StatusCode, b)
		}
	})
	t.Run("copy", func(t *testing.T) {
		writeFile(t, filepath.Join(w.dir, "tree/x.txt"), "x")
		writeFile(t, filepath.Join(w.dir, "tree/k.pem"), "SECRET")
		m := w.json(t, "POST", "/wunder/workspace/copy", nil, `{"source":"tree","destination":"tree2"}`, 200)
		if read("tree2/x.txt") != "x" || read("tree/x.txt") != "x" || m["entries"] != 2.0 {
			t.Errorf("copy = %v", m)
		}
		if exists("tree2/k.pem") {
			t.Error("a denied file was copied")
		}
	})
	t.Run("batch reports each path", func(t *testing.T) {
		writeFile(t, filepath.Join(w.dir, "b1.txt"), "1")
		m := w.json(t, "POST", "/wunder/workspace/batch", nil, `{"action":"delete","paths":["b1.txt","missing.txt","../x",".env"]}`, 200)
		if m["ok"] != false || exists("b1.txt") {
			t.Errorf("batch = %v", m)
		}
		var codes []string
		for _, f := range m["failed"].([]any) {
			codes = append(codes, f.(map[string]any)["code"].(string))
		}
		if !slices.Equal(codes, []string{"not_found", "invalid_argument", "permission_denied"}) || len(m["succeeded"].([]any)) != 1 {
			t.Errorf("failed codes = %q, succeeded %v", codes, m["succeeded"])
		}
		writeFile(t, filepath.Join(w.dir, "c1.txt"), "1")
		w.json(t, "POST", "/wunder/workspace/batch", nil, `{"action":"copy","paths":["c1.txt"],"destination":"dest"}`, 200)
		if read("dest/c1.txt") != "1" {
			t.Error("batch copy did not land in the destination directory")
		}
	})
	t.Run("delete", func(t *testing.T) {
		w.json(t, "DELETE", "/wunder/workspace", url.Values{"path": {"tree2"}}, "", 200)
		if exists("tree2") {
			t.Error("tree2 not deleted")
		}
		// A symlink is deleted as a link.
		w.json(t, "DELETE", "/wunder/workspace", url.Values{"path": {"in_link2"}}, "", 200)
		if exists("in_link2") || !exists("sub/b.txt") {
			t.Error("deleting a link touched its target")
		}
		r, b := w.do(t, "DELETE", "/wunder/workspace", nil, "")
		if r.StatusCode != 400 || problemCode(t, r, b) != "confirmation_required" || !exists("a.txt") {
			t.Errorf("empty without confirm = %d %s", r.StatusCode, b)
		}
		m := w.json(t, "DELETE", "/wunder/workspace", url.Values{"confirm": {"true"}}, "", 200)
		left, _ := os.ReadDir(w.dir)
		var got []string
		for _, e := range left {
			got = append(got, e.Name())
		}
		// Denied entries stay: .env, keys/ (holding id.pem), secrets/,
		// cfg/ (holding keys/k.pem), tree/ (holding k.pem).
		if want := []string{".env", "cfg", "keys", "secrets", "tree"}; !slices.Equal(got, want) || m["kept"] == 0.0 {
			t.Errorf("after emptying: %q (kept %v); want %q", got, m["kept"], want)
		}
	})
}

// TestWorkspaceChangeReachesPrompt: the prompt builder reads the
// workspace summary afresh, so a file written through the API is in the
// next system prompt.
func TestWorkspaceChangeReachesPrompt(t *testing.T) {
	w := newWSFixture(t)
	prompt := func() string {
		m := w.json(t, "POST", "/wunder/system_prompt", nil, `{"user_id":"alice"}`, 200)
		return m["prompt"].(string)
	}
	if strings.Contains(prompt(), "fresh-note.md") {
		t.Fatal("the prompt names the file before it exists")
	}
	w.json(t, "POST", "/wunder/workspace/file", nil, `{"path":"fresh-note.md","content":"hi","create_if_missing":true}`, 200)
	if !strings.Contains(prompt(), "fresh-note.md") {
		t.Error("the prompt does not name a file written through the workspace API")
	}
	w.json(t, "DELETE", "/wunder/workspace", url.Values{"path": {"fresh-note.md"}}, "", 200)
	if strings.Contains(prompt(), "fresh-note.md") {
		t.Error("the prompt still names a deleted file")
	}
}
