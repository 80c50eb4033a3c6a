package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// fakeKnowledge keeps bases and files per owner, as the adapter would: a
// base is looked up under its owner only. A path containing "bad" is
// refused.
type fakeKnowledge struct {
	mu    sync.Mutex
	bases map[string][]gateway.KnowledgeBase
	files map[string]map[string][]byte // owner/base -> path -> data
}

func newFakeKnowledge() *fakeKnowledge {
	return &fakeKnowledge{bases: map[string][]gateway.KnowledgeBase{}, files: map[string]map[string][]byte{}}
}

func (f *fakeKnowledge) has(owner, base string) bool {
	for _, b := range f.bases[owner] {
		if b.Name == base {
			return true
		}
	}
	return false
}

func (f *fakeKnowledge) KnowledgeBases(_ context.Context, owner string) ([]gateway.KnowledgeBase, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bases[owner], nil
}

func (f *fakeKnowledge) SetKnowledgeBases(_ context.Context, owner string, bases []gateway.KnowledgeBase) ([]gateway.KnowledgeBase, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range bases {
		if strings.Contains(b.Name, " ") {
			return nil, fmt.Errorf("%w: knowledge base name %q", orchestrator.ErrInvalidArgument, b.Name)
		}
	}
	f.bases[owner] = bases
	return bases, nil
}

func (f *fakeKnowledge) KnowledgeFiles(_ context.Context, owner, base string) ([]gateway.KnowledgeFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.has(owner, base) {
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, base)
	}
	var out []gateway.KnowledgeFile
	for p, d := range f.files[owner+"/"+base] {
		out = append(out, gateway.KnowledgeFile{Path: p, Size: int64(len(d)), UpdatedAt: time.Now()})
	}
	return out, nil
}

func (f *fakeKnowledge) ReadKnowledgeFile(_ context.Context, owner, base, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.files[owner+"/"+base][path]
	if !ok || !f.has(owner, base) {
		return nil, fmt.Errorf("%w: file %q of knowledge base %q", orchestrator.ErrNotFound, path, base)
	}
	return d, nil
}

func (f *fakeKnowledge) WriteKnowledgeFile(_ context.Context, owner, base, path string, data []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case strings.Contains(path, "bad"):
		return fmt.Errorf("%w: file path %q", orchestrator.ErrInvalidArgument, path)
	case base == "config":
		return fmt.Errorf("%w: knowledge base %q is a directory of the configuration", orchestrator.ErrConflict, base)
	case !f.has(owner, base):
		return fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, base)
	}
	if f.files[owner+"/"+base] == nil {
		f.files[owner+"/"+base] = map[string][]byte{}
	}
	f.files[owner+"/"+base][path] = data
	return nil
}

func (f *fakeKnowledge) DeleteKnowledgeFile(_ context.Context, owner, base, path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[owner+"/"+base][path]; !ok || !f.has(owner, base) {
		return fmt.Errorf("%w: file %q of knowledge base %q", orchestrator.ErrNotFound, path, base)
	}
	delete(f.files[owner+"/"+base], path)
	return nil
}

func (f *fakeKnowledge) RefreshKnowledge(_ context.Context, base string) (any, error) {
	if base == "nope" {
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, base)
	}
	return []map[string]any{{"name": "handbook", "points": 3}}, nil
}

func (f *fakeKnowledge) SearchKnowledge(_ context.Context, owner, base, query string, limit int) (any, error) {
	if !f.has(owner, base) {
		return nil, fmt.Errorf("%w: knowledge base %q", orchestrator.ErrNotFound, base)
	}
	return []map[string]any{{"title": base, "content": query, "limit": limit}}, nil
}

type knowledgeEnv struct {
	e              *env
	fake           *fakeKnowledge
	admin          []string
	asAlice, asBob []string
}

func newKnowledgeEnv(t *testing.T) *knowledgeEnv {
	t.Helper()
	fake := newFakeKnowledge()
	accts := accountstest.NewMemStore()
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: adminKey, Knowledge: fake, MaxBodyBytes: 4096, AttachmentBodyBytes: 64 << 10,
		Attachments: doc2md.New(&doc2md.Options{MaxBytes: 32 << 10}),
		Auth:        gateway.AuthOptions{Accounts: accts, TokenTTL: time.Hour}}})
	ae := &authEnv{env: e}
	ae.addUser(t, "alice", "alice-password")
	ae.addUser(t, "bob", "bob-password")
	k := &knowledgeEnv{e: e, fake: fake, admin: []string{"X-API-Key", adminKey}}
	k.asAlice = []string{"Authorization", "Bearer " + ae.login(t, "alice", "alice-password").Token}
	k.asBob = []string{"Authorization", "Bearer " + ae.login(t, "bob", "bob-password").Token}
	return k
}

// upload posts a multipart form: fields, then each file as (name, data).
func (k *knowledgeEnv) upload(t *testing.T, path string, fields map[string]string, files [][2]string, hdr []string) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for n, v := range fields {
		_ = mw.WriteField(n, v)
	}
	for _, f := range files {
		fw, _ := mw.CreateFormFile("file", f[0])
		_, _ = fw.Write([]byte(f[1]))
	}
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", k.e.srv.URL+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func expect(t *testing.T, what string, resp *http.Response, status int, contains string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || !strings.Contains(string(body), contains) {
		t.Errorf("%s: %d %s, want %d with %q", what, resp.StatusCode, body, status, contains)
	}
}

// The admin routes are the admin's (owner ""), for admins only; the user
// routes act for the token's user, or for the user an admin names.
func TestKnowledgeRoutesScope(t *testing.T) {
	t.Parallel()
	k := newKnowledgeEnv(t)
	e := k.e
	expect(t, "admin list, user token", e.do(t, "GET", "/wunder/admin/knowledge", "", k.asAlice...), 403, "admin only")
	expect(t, "admin list, no credentials", e.do(t, "GET", "/wunder/admin/knowledge", ""), 401, "")
	expect(t, "admin set, user token", e.do(t, "POST", "/wunder/admin/knowledge", `{"knowledge":{"bases":[]}}`, k.asAlice...), 403, "admin only")
	expect(t, "admin upload, user token", k.upload(t, "/wunder/admin/knowledge/upload", map[string]string{"base": "faq"}, [][2]string{{"a.md", "x"}}, k.asAlice), 403, "admin only")
	expect(t, "admin refresh, user token", e.do(t, "POST", "/wunder/admin/knowledge/refresh", "", k.asAlice...), 403, "admin only")
	// The admin routes with a body decide before they read it: a user
	// gets 403, not 415, 400 or 413 about the body.
	expect(t, "admin upload as JSON, user token", e.do(t, "POST", "/wunder/admin/knowledge/upload", `{"base":"faq"}`, k.asAlice...), 403, "admin only")
	expect(t, "admin upload, broken form, user token", k.e.do(t, "POST", "/wunder/admin/knowledge/upload", "--x\r\n",
		append(k.asAlice, "Content-Type", "multipart/form-data; boundary=x")...), 403, "admin only")
	expect(t, "admin put, not JSON, user token", e.do(t, "PUT", "/wunder/admin/knowledge/file", `base=faq`, append(k.asAlice, "Content-Type", "text/plain")...), 403, "admin only")
	expect(t, "admin put, broken JSON, user token", e.do(t, "PUT", "/wunder/admin/knowledge/file", `{"base":`, k.asAlice...), 403, "admin only")

	expect(t, "admin set", e.do(t, "POST", "/wunder/admin/knowledge", `{"knowledge":{"bases":[{"name":"faq","description":"questions"}]}}`, k.admin...), 200, `"bases":[{"name":"faq","description":"questions"`)
	expect(t, "admin set, shared", e.do(t, "POST", "/wunder/admin/knowledge", `{"knowledge":{"bases":[{"name":"faq","shared":true}]}}`, k.admin...), 400, "unknown_field")
	expect(t, "admin list", e.do(t, "GET", "/wunder/admin/knowledge", "", k.admin...), 200, `"knowledge":{"bases":[{"name":"faq"`)
	expect(t, "admin upload naming a user", k.upload(t, "/wunder/admin/knowledge/upload", map[string]string{"base": "faq", "user_id": "alice"}, [][2]string{{"a.md", "x"}}, k.admin), 400, "/wunder/user_tools/knowledge")
	expect(t, "admin upload", k.upload(t, "/wunder/admin/knowledge/upload", map[string]string{"base": "faq"}, [][2]string{{"q.md", "# Q"}}, k.admin), 200, `"path":"q.md"`)
	if _, ok := k.fake.files["/faq"]["q.md"]; !ok {
		t.Errorf("the admin's upload is not the admin's (owner \"\"): %v", k.fake.files)
	}
	expect(t, "admin refresh", e.do(t, "POST", "/wunder/admin/knowledge/refresh", "", k.admin...), 200, `"points":3`)
	expect(t, "admin refresh, unknown", e.do(t, "POST", "/wunder/admin/knowledge/refresh?base=nope", "", k.admin...), 404, "nope")

	// Users.
	expect(t, "alice sets her list", e.do(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"notes","description":"mine","shared":true}]}}`, k.asAlice...), 200, `"shared":true`)
	expect(t, "alice's list", e.do(t, "GET", "/wunder/user_tools/knowledge", "", k.asAlice...), 200, `{"knowledge":{"bases":[{"name":"notes","description":"mine","shared":true,"file_count":0,"bytes":0}]},"user_id":"alice"}`)
	expect(t, "bob's list is his", e.do(t, "GET", "/wunder/user_tools/knowledge", "", k.asBob...), 200, `{"knowledge":{"bases":[]},"user_id":"bob"}`)
	expect(t, "bob naming alice", e.do(t, "GET", "/wunder/user_tools/knowledge?user_id=alice", "", k.asBob...), 403, "permission_denied")
	expect(t, "bob sets alice's list", e.do(t, "POST", "/wunder/user_tools/knowledge", `{"user_id":"alice","knowledge":{"bases":[]}}`, k.asBob...), 403, "")
	expect(t, "admin naming no user", e.do(t, "GET", "/wunder/user_tools/knowledge", "", k.admin...), 400, "missing_user_id")
	expect(t, "admin naming alice", e.do(t, "GET", "/wunder/user_tools/knowledge?user_id=alice", "", k.admin...), 200, `"name":"notes"`)
	expect(t, "alice uploads", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"n.md", "# N"}}, k.asAlice), 200, `"path":"n.md"`)
	expect(t, "bob uploads to alice's base", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes", "user_id": "alice"}, [][2]string{{"x.md", "x"}}, k.asBob), 403, "")
	expect(t, "bob uploads to his own 'notes'", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"x.md", "x"}}, k.asBob), 404, "notes")
	expect(t, "admin uploads for alice", k.upload(t, "/wunder/user_tools/knowledge/upload?user_id=alice", map[string]string{"base": "notes", "path": "sub/m.md"}, [][2]string{{"ignored.md", "# M"}}, k.admin), 200, `"path":"sub/m.md"`)
	expect(t, "alice's files", e.do(t, "GET", "/wunder/user_tools/knowledge/files?base=notes", "", k.asAlice...), 200, `"files":[`)
	expect(t, "bob lists alice's files", e.do(t, "GET", "/wunder/user_tools/knowledge/files?base=notes", "", k.asBob...), 404, "")
	expect(t, "alice reads", e.do(t, "GET", "/wunder/user_tools/knowledge/file?base=notes&path=n.md", "", k.asAlice...), 200, `"content":"# N"`)
	expect(t, "bob reads alice's", e.do(t, "GET", "/wunder/user_tools/knowledge/file?base=notes&path=n.md", "", k.asBob...), 404, "")
	expect(t, "alice puts", e.do(t, "PUT", "/wunder/user_tools/knowledge/file", `{"base":"notes","path":"p.md","content":"# P"}`, k.asAlice...), 200, `"ok":true`)
	expect(t, "bob deletes alice's", e.do(t, "DELETE", "/wunder/user_tools/knowledge/file?base=notes&path=p.md", "", k.asBob...), 404, "")
	expect(t, "alice deletes", e.do(t, "DELETE", "/wunder/user_tools/knowledge/file?base=notes&path=p.md", "", k.asAlice...), 200, `"ok":true`)
}

// Bad requests get a clear 4xx before (or from) the adapter.
func TestKnowledgeRoutesBadInput(t *testing.T) {
	t.Parallel()
	k := newKnowledgeEnv(t)
	e := k.e
	expect(t, "setup", e.do(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"notes"}]}}`, k.asAlice...), 200, "")
	cases := []struct {
		what   string
		resp   *http.Response
		status int
		want   string
	}{
		{"no list", e.do(t, "POST", "/wunder/user_tools/knowledge", `{}`, k.asAlice...), 400, "knowledge.bases is required"},
		{"typo", e.do(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"base":[]}}`, k.asAlice...), 400, "unknown_field"},
		{"bad name (adapter)", e.do(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"a b"}]}}`, k.asAlice...), 400, "invalid_argument"},
		{"files without base", e.do(t, "GET", "/wunder/user_tools/knowledge/files", "", k.asAlice...), 400, "base query parameter is required"},
		{"file without path", e.do(t, "GET", "/wunder/user_tools/knowledge/file?base=notes", "", k.asAlice...), 400, "path query parameter is required"},
		{"delete without path", e.do(t, "DELETE", "/wunder/user_tools/knowledge/file?base=notes", "", k.asAlice...), 400, "path query parameter is required"},
		{"put without content", e.do(t, "PUT", "/wunder/user_tools/knowledge/file", `{"base":"notes","path":"a.md"}`, k.asAlice...), 400, "content are required"},
		{"put, bad path (adapter)", e.do(t, "PUT", "/wunder/user_tools/knowledge/file", `{"base":"notes","path":"bad.md","content":""}`, k.asAlice...), 400, "invalid_argument"},
		{"put, config base", e.do(t, "PUT", "/wunder/user_tools/knowledge/file", `{"base":"config","path":"a.md","content":""}`, k.asAlice...), 409, "conflict"},
		{"unknown file", e.do(t, "GET", "/wunder/user_tools/knowledge/file?base=notes&path=none.md", "", k.asAlice...), 404, "none.md"},
		{"upload as JSON", e.do(t, "POST", "/wunder/user_tools/knowledge/upload", `{"base":"notes"}`, k.asAlice...), 415, "multipart/form-data"},
		{"upload without file", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, nil, k.asAlice), 400, "base and file are required"},
		{"upload without base", k.upload(t, "/wunder/user_tools/knowledge/upload", nil, [][2]string{{"a.md", "x"}}, k.asAlice), 400, "base and file are required"},
		{"two files", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"a.md", "x"}, {"b.md", "y"}}, k.asAlice), 400, "one file per upload"},
		{"unknown field", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes", "folder": "x"}, [][2]string{{"a.md", "x"}}, k.asAlice), 400, `unknown form field \"folder\"`},
		{"file name traversal is cut to its base", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"../../etc/x.md", "x"}}, k.asAlice), 200, `"path":"x.md"`},
		{"over the body limit", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"big.md", strings.Repeat("x", 70<<10)}}, k.asAlice), 413, "body_too_large"},
		{"over attachments.max_bytes", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{"big.md", strings.Repeat("x", 33<<10)}}, k.asAlice), 413, `"limit":"attachments.max_bytes"`},
		{"long field", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": strings.Repeat("n", 1100)}, [][2]string{{"a.md", "x"}}, k.asAlice), 400, "longer than 1024"},
		{"search without query", e.do(t, "GET", "/wunder/user_tools/knowledge/search?base=notes", "", k.asAlice...), 400, "query query parameter is required"},
		{"search, bad limit", e.do(t, "GET", "/wunder/user_tools/knowledge/search?base=notes&query=x&limit=99", "", k.asAlice...), 400, "limit must be an integer from 1 to 20"},
		{"search, unknown base", e.do(t, "GET", "/wunder/user_tools/knowledge/search?base=none&query=x", "", k.asAlice...), 404, "none"},
		{"search", e.do(t, "GET", "/wunder/user_tools/knowledge/search?base=notes&query=x&limit=3", "", k.asAlice...), 200, `"hits":[{"content":"x","limit":3`},
		{"admin search, a user's base", e.do(t, "GET", "/wunder/admin/knowledge/search?base=notes&query=x", "", k.admin...), 404, "notes"},
	}
	for _, c := range cases {
		expect(t, c.what, c.resp, c.status, c.want)
	}
	// Problems are problem JSON.
	resp := e.do(t, "GET", "/wunder/user_tools/knowledge/files", "", k.asAlice...)
	var p gateway.Problem
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.Header.Get("Content-Type") != "application/problem+json" || p.Code != "invalid_argument" {
		t.Errorf("problem %+v %v (%s)", p, err, resp.Header.Get("Content-Type"))
	}
}

// An uploaded document (DOCX, XLSX, PPTX, PDF, HTML) is converted to
// Markdown, whole, and stored as <name>.md; one over a conversion limit is
// refused with the limit named, and nothing is stored.
func TestKnowledgeUploadConvertsDocuments(t *testing.T) {
	t.Parallel()
	k := newKnowledgeEnv(t)
	expect(t, "setup", k.e.do(t, "POST", "/wunder/user_tools/knowledge", `{"knowledge":{"bases":[{"name":"notes"}]}}`, k.asAlice...), 200, "")
	up := func(name string, data []byte) *http.Response {
		return k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes"}, [][2]string{{name, string(data)}}, k.asAlice)
	}
	long := strings.Split(strings.Repeat("A paragraph long enough to be clipped by a small max_chars.,", 100), ",")
	for _, tc := range []struct {
		name string
		data []byte
		path string
		want []string
	}{
		{"plan.docx", doc2mdtest.DOCX("Plan", long, nil), "plan.md", []string{"# Plan\n\nA paragraph", "small max_chars."}},
		{"sheet.xlsx", doc2mdtest.XLSX([][]string{{"k", "v"}, {"a", "1"}}), "sheet.md", []string{"## Sheet1\n\n| k | v |\n| --- | --- |\n| a | 1 |"}},
		{"deck.PPTX", doc2mdtest.PPTX("Intro"), "deck.md", []string{"## Slide 1\n\nIntro"}},
		{"report.pdf", doc2mdtest.PDF("Revenue grew 12 percent"), "report.md", []string{"Revenue grew 12 percent"}},
		{"page.html", []byte("<h2>Page</h2><p>body</p>"), "page.md", []string{"## Page\n\nbody"}},
		{"plain.md", []byte("# As it is"), "plain.md", []string{"# As it is"}},
	} {
		expect(t, tc.name, up(tc.name, tc.data), 200, `"path":"`+tc.path+`"`)
		got := string(k.fake.files["alice/notes"][tc.path])
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s stored as %s: %q lacks %q", tc.name, tc.path, got, w)
			}
		}
		if strings.Contains(got, "[clipped") {
			t.Errorf("%s: a stored document is clipped: %q", tc.name, got)
		}
	}
	// The path field names where it goes; its extension says to convert.
	expect(t, "a path", k.upload(t, "/wunder/user_tools/knowledge/upload", map[string]string{"base": "notes", "path": "docs/p.htm"},
		[][2]string{{"ignored.txt", "<p>in docs</p>"}}, k.asAlice), 200, `"path":"docs/p.md"`)
	if got := string(k.fake.files["alice/notes"]["docs/p.md"]); got != "in docs" {
		t.Errorf("docs/p.htm stored as %q", got)
	}
	wide := doc2mdtest.Workbook(`<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>`,
		"xl/worksheets/sheet1.xml", doc2mdtest.Sheet(`<row r="1"><c r="XFD1" t="inlineStr"><is><t>x</t></is></c></row>`))
	expect(t, "a sheet over max_columns", up("wide.xlsx", wide), 413, `"limit":"attachments.max_columns","limit_value":1024`)
	expect(t, "not a document", up("fake.docx", []byte("\x7fELF\x02\x01\x01\x00")), 415, "attachment_unsupported")
	if _, ok := k.fake.files["alice/notes"]["wide.md"]; ok {
		t.Error("a refused document was stored")
	}
}
