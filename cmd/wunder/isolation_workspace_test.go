package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// workspaceRows are the isolation matrix's rows of the workspace API.
// Alice's files live under ws-iso/. A read by bob reaches his own
// workspace, where they are not found ("denied"); a write by bob
// succeeds in his own workspace, so a write row's outcome is where it
// landed, checked by the admin in alice's: "ok" there, "denied" not. The
// row that empties the workspace comes last of all (it would take
// notes.txt from the rows that read it).
func (f *fixture) workspaceRows() []matrixRow {
	admin := map[string]string{"X-API-Key": "admin-key"}
	slug := func(c caller) string { return strings.ReplaceAll(c.name, " ", "-") }
	var once sync.Once
	setup := func(t *testing.T) {
		once.Do(func() {
			for _, p := range []string{"doc.txt", "mv-alice.txt", "mv-bob.txt", "mv-bob-naming-alice.txt", "mv-admin-key-naming-alice.txt",
				"del-alice.txt", "del-bob.txt", "del-bob-naming-alice.txt", "del-admin-key-naming-alice.txt",
				"bd-alice.txt", "bd-bob.txt", "bd-bob-naming-alice.txt", "bd-admin-key-naming-alice.txt"} {
				mustStatus(t, f.rest(t, "POST", "/wunder/workspace/file?user_id=alice",
					`{"path":"ws-iso/`+p+`","content":"wsmarker-alice","create_if_missing":true}`, admin), 200)
			}
		})
	}
	// inAlices reports whether alice's workspace holds p, as the admin sees it.
	inAlices := func(t *testing.T, p string) bool {
		r := f.rest(t, "GET", "/wunder/workspace/content?user_id=alice&include_content=false&path="+url.QueryEscape(p), "", admin)
		_, _ = io.Copy(io.Discard, r.Body)
		return r.StatusCode == 200
	}
	naming := func(p string, c caller) string {
		if c.names == "" {
			return p
		}
		return p + sep(p) + "user_id=" + c.names
	}
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	row := func(resource, action string, try func(t *testing.T, c caller) string) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string { setup(t); return try(t, c) }})
	}
	read := func(resource, action, path string) {
		row(resource, action, func(t *testing.T, c caller) string { return restOutcome(f.rest(t, "GET", naming(path, c), "", c.hdr)) })
	}
	list := func(resource, action, path, marker string) {
		row(resource, action, func(t *testing.T, c caller) string {
			return listOutcome(f.rest(t, "GET", naming(path, c), "", c.hdr), marker)
		})
	}
	// landed: the call succeeded; ok when p is now in alice's workspace.
	landed := func(t *testing.T, r *http.Response, p string) string {
		if r.StatusCode >= 300 {
			return restOutcome(r)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if inAlices(t, p) {
			return ok
		}
		return denied
	}
	const ws = "/wunder/workspace"
	list("workspace", "list", ws+"?path=ws-iso", "doc.txt")
	read("workspace file", "read (content)", ws+"/content?path=ws-iso/doc.txt")
	list("workspace", "search", ws+"/search?query=wsmarker-alice", "ws-iso/doc.txt")
	read("workspace file", "download", ws+"/download?path=ws-iso/doc.txt")
	list("workspace", "archive", ws+"/archive", "ws-iso/doc.txt")
	row("workspace file", "write (file)", func(t *testing.T, c caller) string {
		p := "w-" + slug(c) + ".txt"
		return landed(t, f.rest(t, "POST", naming(ws+"/file", c), `{"path":"`+p+`","content":"x","create_if_missing":true}`, c.hdr), p)
	})
	row("workspace directory", "create (dir)", func(t *testing.T, c caller) string {
		p := "d-" + slug(c)
		return landed(t, f.rest(t, "POST", naming(ws+"/dir", c), `{"path":"`+p+`"}`, c.hdr), p)
	})
	row("workspace file", "upload", func(t *testing.T, c caller) string {
		p := "u-" + slug(c) + ".txt"
		return landed(t, f.wsUpload(t, naming(ws+"/upload", c), p, c.hdr), p)
	})
	row("workspace file", "move", func(t *testing.T, c caller) string {
		return restOutcome(f.rest(t, "POST", naming(ws+"/move", c), `{"source":"ws-iso/mv-`+slug(c)+`.txt","destination":"mv-`+slug(c)+`.txt"}`, c.hdr))
	})
	row("workspace file", "copy", func(t *testing.T, c caller) string {
		return restOutcome(f.rest(t, "POST", naming(ws+"/copy", c), `{"source":"ws-iso/doc.txt","destination":"cp-`+slug(c)+`.txt"}`, c.hdr))
	})
	row("workspace file", "delete", func(t *testing.T, c caller) string {
		return restOutcome(f.rest(t, "DELETE", naming(ws+"?path=ws-iso/del-"+slug(c)+".txt", c), "", c.hdr))
	})
	row("workspace files", "batch delete", func(t *testing.T, c caller) string {
		r := f.rest(t, "POST", naming(ws+"/batch", c), `{"action":"delete","paths":["ws-iso/bd-`+slug(c)+`.txt"]}`, c.hdr)
		if r.StatusCode != 200 {
			return restOutcome(r)
		}
		var res struct {
			OK     bool
			Failed []struct{ Code string }
		}
		if err := json.NewDecoder(r.Body).Decode(&res); err != nil || (!res.OK && (len(res.Failed) != 1 || res.Failed[0].Code != "not_found")) {
			return "unexpected batch answer"
		}
		if res.OK {
			return ok
		}
		return denied
	})
	row("workspace", "empty (DELETE, confirm)", func(t *testing.T, c caller) string {
		mustStatus(t, f.rest(t, "POST", "/wunder/workspace/file?user_id=alice", `{"path":"probe.txt","content":"p","create_if_missing":true}`, admin), 200)
		r := f.rest(t, "DELETE", naming(ws+"?confirm=true", c), "", c.hdr)
		if r.StatusCode >= 300 {
			return restOutcome(r)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if inAlices(t, "probe.txt") {
			return denied
		}
		return ok
	})
	return rows
}

// wsUpload uploads one small file named name to the workspace route.
func (f *fixture) wsUpload(t *testing.T, path, name string, hdr map[string]string) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("files", name)
	_, _ = fw.Write([]byte("u"))
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", f.s.url+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
