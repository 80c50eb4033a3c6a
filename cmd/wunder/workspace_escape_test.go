package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// workspaceEscapes is the escape corpus of adapters/builtin's TestResolve,
// as HTTP sees it: each path must be refused by every workspace route,
// with 400 (a malformed path) or 403 (denied, or leading outside).
var workspaceEscapes = map[string]int{
	"../x":               400,
	"a/../../x":          400,
	"..":                 400,
	"../bob/a.txt":       400,
	"/etc/passwd":        400,
	"/":                  400,
	"a\x00b":             400,
	"dangling":           400,
	"dangling/y":         400,
	"etc_link":           403,
	"etc_link/passwd":    403,
	"passwd_link":        403,
	"out_dir":            403,
	"out_dir/secret.txt": 403,
	"out_dir/new.txt":    403,
	".env":               403,
	"./.env":             403,
	"env_link":           403,
	"keys/id.pem":        403,
	"deep/new.pem":       403,
	"secrets":            403,
	"secrets/s.txt":      403,
}

// TestWorkspaceEscapeCorpus runs the corpus against every workspace route,
// in every field that takes a path: nothing outside is read or written,
// no answer holds an outside secret or a host path, and every refusal is
// a problem with the status the resolver's error says.
func TestWorkspaceEscapeCorpus(t *testing.T) {
	w := newWSFixture(t)
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	get := func(route string, extra url.Values) func(t *testing.T, h string) (*http.Response, []byte) {
		return func(t *testing.T, h string) (*http.Response, []byte) {
			q := url.Values{"path": {h}}
			for k, v := range extra {
				q[k] = v
			}
			return w.do(t, "GET", route, q, "")
		}
	}
	post := func(route, tmpl string) func(t *testing.T, h string) (*http.Response, []byte) {
		return func(t *testing.T, h string) (*http.Response, []byte) {
			return w.do(t, "POST", route, nil, strings.ReplaceAll(tmpl, "{}", quote(h)))
		}
	}
	routes := []struct {
		name string
		do   func(t *testing.T, h string) (*http.Response, []byte)
	}{
		{"GET /wunder/workspace", get("/wunder/workspace", nil)},
		{"DELETE /wunder/workspace", func(t *testing.T, h string) (*http.Response, []byte) {
			return w.do(t, "DELETE", "/wunder/workspace", url.Values{"path": {h}, "confirm": {"true"}}, "")
		}},
		{"content", get("/wunder/workspace/content", nil)},
		{"search", get("/wunder/workspace/search", url.Values{"query": {"needle"}})},
		{"archive", get("/wunder/workspace/archive", nil)},
		{"download", get("/wunder/workspace/download", nil)},
		{"upload (path)", func(t *testing.T, h string) (*http.Response, []byte) {
			return w.upload(t, h, []string{"u.txt"}, []string{"pwned"})
		}},
		{"dir", post("/wunder/workspace/dir", `{"path":{}}`)},
		{"move (source)", post("/wunder/workspace/move", `{"source":{},"destination":"moved-here"}`)},
		{"move (destination)", post("/wunder/workspace/move", `{"source":"a.txt","destination":{}}`)},
		{"copy (source)", post("/wunder/workspace/copy", `{"source":{},"destination":"copied-here"}`)},
		{"copy (destination)", post("/wunder/workspace/copy", `{"source":"sub","destination":{}}`)},
		{"file", post("/wunder/workspace/file", `{"path":{},"content":"pwned","create_if_missing":true}`)},
	}
	for _, rt := range routes {
		for h, want := range workspaceEscapes {
			t.Run(rt.name+"/"+h, func(t *testing.T) {
				r, b := rt.do(t, h)
				w.noLeak(t, b)
				if r.StatusCode != want {
					t.Fatalf("= %d %s; want %d", r.StatusCode, b, want)
				}
				code := problemCode(t, r, b)
				if (want == 400) != (code == "invalid_argument") || (want == 403) != (code == "permission_denied") {
					t.Errorf("code %q for status %d", code, want)
				}
			})
		}
	}
	// The batch answers 200 and reports each path's refusal.
	for h, want := range workspaceEscapes {
		for _, body := range []string{
			`{"action":"delete","paths":[{}]}`,
			`{"action":"move","paths":[{}],"destination":"dest"}`,
			`{"action":"copy","paths":[{}],"destination":"dest"}`,
			`{"action":"copy","paths":["a.txt"],"destination":{}}`,
		} {
			t.Run("batch "+body+"/"+h, func(t *testing.T) {
				b := strings.ReplaceAll(body, "{}", quote(h))
				m := w.json(t, "POST", "/wunder/workspace/batch", nil, b, 200)
				raw, _ := json.Marshal(m)
				w.noLeak(t, raw)
				failed := m["failed"].([]any)
				if len(failed) != 1 || m["ok"] != false {
					t.Fatalf("batch %s = %s; want one failure", b, raw)
				}
				wantCode := map[int]string{400: "invalid_argument", 403: "permission_denied"}[want]
				code := failed[0].(map[string]any)["code"]
				// As the destination directory, a path to a file outside
				// (passwd_link/a.txt) is malformed before it is outside.
				if code != wantCode && !(strings.Contains(body, `"destination":{}`) && code == "invalid_argument") {
					t.Errorf("code %v; want %s", code, wantCode)
				}
			})
		}
	}
	w.untouched(t)
}

// TestWorkspaceUploadNames: a file name in the multipart header is judged
// as sent (not reduced to its base name): a name that would leave the
// target directory is refused, and nothing lands anywhere.
func TestWorkspaceUploadNames(t *testing.T) {
	w := newWSFixture(t)
	w.json(t, "POST", "/wunder/workspace/dir", nil, `{"path":"up/inner"}`, 200)
	for _, name := range []string{"../evil.txt", "../../evil.txt", "../../../../../../tmp/evil.txt", "/evil.txt",
		"a/../../evil.txt", `..\evil.txt`, `sub\..\..\evil.txt`, "..", ".", "", "x/", "a//evil.txt", "ev\x00il.txt"} {
		t.Run(name, func(t *testing.T) {
			r, b := w.upload(t, "up/inner", []string{name}, []string{"pwned"})
			w.noLeak(t, b)
			if r.StatusCode != 400 {
				t.Fatalf("= %d %s; want 400", r.StatusCode, b)
			}
			if code := problemCode(t, r, b); code != "invalid_filename" && code != "invalid_form" {
				t.Errorf("code %q", code)
			}
		})
	}
	_ = filepath.WalkDir(w.f.s.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "evil") {
			t.Errorf("ESCAPE: an upload landed at %s", p)
		}
		return nil
	})
	if _, err := os.Stat("/tmp/evil.txt"); err == nil {
		t.Error("ESCAPE: /tmp/evil.txt exists")
	}
	w.untouched(t)
}

// noLeak fails when an answer holds what lies outside the workspace or
// names a host path.
func (w *wsFixture) noLeak(t *testing.T, b []byte) {
	t.Helper()
	for _, l := range []string{outsideSecret, "root:x:", "TOKEN=", "hidden needle", "PEM needle", w.f.s.dir, w.outside} {
		if strings.Contains(string(b), l) {
			t.Errorf("ESCAPE: the answer holds %q: %s", l, b)
		}
	}
}

// untouched checks the directory outside still holds only its secret, as
// it was, and the denied files are unchanged.
func (w *wsFixture) untouched(t *testing.T) {
	t.Helper()
	var got []string
	_ = filepath.WalkDir(w.outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(w.outside, p)
			got = append(got, rel)
		}
		return nil
	})
	if !slices.Equal(got, []string{"secret.txt"}) {
		t.Errorf("ESCAPE: the directory outside now holds %q", got)
	}
	for p, want := range map[string]string{filepath.Join(w.outside, "secret.txt"): outsideSecret + " needle\n",
		filepath.Join(w.dir, ".env"): "TOKEN=needle\n", filepath.Join(w.dir, "secrets/s.txt"): "hidden needle\n",
		filepath.Join(w.dir, "keys/id.pem"): "PEM needle\n"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("ESCAPE: %s changed: %q %v", p, b, err)
		}
	}
}
