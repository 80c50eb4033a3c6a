package gateway_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// The workspace routes' own contract (gateway/workspace*.go), over a
// workspace kept in memory: whom a request acts for, what its query and
// body may say, the upload form, the batch, the download's headers, the
// quota refusal. The real workspaces behind these routes (the built-in
// tools' directories, their resolver and deny globs) are tested through
// the wired server in cmd/wunder.

// memWorkspaces keeps files per user; a path holding ".." escapes (denied),
// writes past quota bytes per user are quota refusals, and it records the
// listing and search requests it was asked.
type memWorkspaces struct {
	mu     sync.Mutex
	files  map[string]map[string][]byte // user -> path -> data; a dir has nil data
	quota  int64
	lists  []gateway.WorkspaceListOptions
	search []gateway.WorkspaceSearch
}

// quotaErr is a quota refusal as adapters/builtin's QuotaError is one: a
// permission denial with a QuotaExceeded method.
type quotaErr struct{ msg string }

func (q quotaErr) Error() string       { return q.msg }
func (q quotaErr) Unwrap() error       { return orchestrator.ErrPermissionDenied }
func (q quotaErr) QuotaExceeded() bool { return true }

func newMemWorkspaces() *memWorkspaces {
	return &memWorkspaces{files: map[string]map[string][]byte{}}
}

func (m *memWorkspaces) put(user, p string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[user] == nil {
		m.files[user] = map[string][]byte{}
	}
	m.files[user][p] = data
}

func (m *memWorkspaces) get(user, p string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.files[user][p]
	return d, ok
}

func resolve(p string) (string, error) {
	if strings.Contains(p, "..") || strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%w: %q is outside the workspace", orchestrator.ErrPermissionDenied, p)
	}
	return strings.Trim(path.Clean("/" + p)[1:], "/"), nil
}

func (m *memWorkspaces) entry(user, p string) (gateway.WorkspaceEntry, bool) {
	if p == "" {
		return gateway.WorkspaceEntry{Type: "dir"}, true
	}
	d, ok := m.files[user][p]
	if !ok {
		return gateway.WorkspaceEntry{}, false
	}
	e := gateway.WorkspaceEntry{Name: path.Base(p), Path: p, Type: "file", Size: int64(len(d)), UpdatedAt: time.Unix(1700000000, 0).UTC()}
	if d == nil {
		e.Type = "dir"
	}
	return e, true
}

func (m *memWorkspaces) WorkspaceUsage(_ context.Context, user string) (gateway.WorkspaceUsage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var u gateway.WorkspaceUsage
	for _, d := range m.files[user] {
		if d == nil {
			u.Dirs++
		} else {
			u.Files++
			u.Bytes += int64(len(d))
		}
	}
	u.QuotaBytes, u.QuotaUsedBytes = m.quota, u.Bytes
	return u, nil
}

func (m *memWorkspaces) StatWorkspace(_ context.Context, user, p string) (gateway.WorkspaceEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := resolve(p)
	if err != nil {
		return gateway.WorkspaceEntry{}, err
	}
	if e, ok := m.entry(user, p); ok {
		return e, nil
	}
	return gateway.WorkspaceEntry{}, fmt.Errorf("%w: %s", orchestrator.ErrNotFound, p)
}

func (m *memWorkspaces) ListWorkspace(ctx context.Context, user, p string, o gateway.WorkspaceListOptions) (*gateway.WorkspaceListing, error) {
	e, err := m.StatWorkspace(ctx, user, p)
	if err != nil {
		return nil, err
	}
	if e.Type != "dir" {
		return nil, fmt.Errorf("%w: %s is not a directory", orchestrator.ErrInvalidArgument, p)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lists = append(m.lists, o)
	var out []gateway.WorkspaceEntry
	for fp := range m.files[user] {
		if dir := path.Dir(fp); dir == e.Path || (dir == "." && e.Path == "") {
			c, _ := m.entry(user, fp)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	total := len(out)
	out = out[min(o.Offset, total):min(o.Offset+o.Limit, total)]
	return &gateway.WorkspaceListing{Entries: out, Total: total}, nil
}

func (m *memWorkspaces) ReadWorkspaceFile(ctx context.Context, user, p string, maxBytes int) (*gateway.WorkspaceFile, error) {
	e, err := m.StatWorkspace(ctx, user, p)
	if err != nil {
		return nil, err
	}
	d, _ := m.get(user, e.Path)
	f := &gateway.WorkspaceFile{Entry: e, Data: d, Binary: bytes.IndexByte(d, 0) >= 0, Limit: 64}
	if len(d) > 64 {
		return &gateway.WorkspaceFile{Entry: e, TooLarge: true, Limit: 64}, nil
	}
	if maxBytes > 0 && len(d) > maxBytes {
		f.Data, f.Truncated = d[:maxBytes], true
	}
	return f, nil
}

type nopSeekCloser struct{ *bytes.Reader }

func (nopSeekCloser) Close() error { return nil }

func (m *memWorkspaces) OpenWorkspaceFile(ctx context.Context, user, p string) (io.ReadSeekCloser, gateway.WorkspaceEntry, error) {
	e, err := m.StatWorkspace(ctx, user, p)
	if err != nil {
		return nil, e, err
	}
	if e.Type == "dir" {
		return nil, e, fmt.Errorf("%w: %s is a directory", orchestrator.ErrInvalidArgument, p)
	}
	d, _ := m.get(user, e.Path)
	return nopSeekCloser{bytes.NewReader(d)}, e, nil
}

func (m *memWorkspaces) SearchWorkspace(_ context.Context, user string, q gateway.WorkspaceSearch) (*gateway.WorkspaceSearchResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.search = append(m.search, q)
	res := &gateway.WorkspaceSearchResult{}
	for fp := range m.files[user] {
		if strings.Contains(fp, q.Query) && len(res.Names) < q.MaxResults {
			e, _ := m.entry(user, fp)
			res.Names = append(res.Names, e)
		}
	}
	return res, nil
}

func (m *memWorkspaces) ArchiveWorkspace(_ context.Context, user, p string) (*gateway.WorkspaceArchive, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for fp, d := range m.files[user] {
		if d != nil && (p == "" || strings.HasPrefix(fp, p+"/")) {
			names = append(names, fp)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: nothing to archive at %q", orchestrator.ErrNotFound, p)
	}
	slices.Sort(names)
	snapshot := map[string][]byte{}
	for _, n := range names {
		snapshot[n] = m.files[user][n]
	}
	name := "workspace.zip"
	if p != "" {
		name = path.Base(p) + ".zip"
	}
	return &gateway.WorkspaceArchive{Name: name, Entries: len(names), WriteTo: func(_ context.Context, w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, n := range names {
			f, _ := zw.Create(n)
			_, _ = f.Write(snapshot[n])
		}
		return zw.Close()
	}, Close: func() error { return nil }}, nil
}

func (m *memWorkspaces) MkdirWorkspace(_ context.Context, user, p string) error {
	p, err := resolve(p)
	if err != nil {
		return err
	}
	m.put(user, p, nil)
	return nil
}

func (m *memWorkspaces) WriteWorkspaceFile(ctx context.Context, user, p string, src io.Reader, create bool) (gateway.WorkspaceEntry, error) {
	rp, err := resolve(p)
	if err != nil {
		return gateway.WorkspaceEntry{}, err
	}
	if _, exists := m.get(user, rp); !exists && !create {
		return gateway.WorkspaceEntry{}, fmt.Errorf("%w: %s", orchestrator.ErrNotFound, rp)
	}
	d, err := io.ReadAll(src)
	if err != nil {
		return gateway.WorkspaceEntry{}, err
	}
	if u, _ := m.WorkspaceUsage(ctx, user); m.quota > 0 && u.Bytes+int64(len(d)) > m.quota {
		return gateway.WorkspaceEntry{}, quotaErr{fmt.Sprintf("the workspace quota of %d bytes (workspace.max_bytes_per_user) would be exceeded", m.quota)}
	}
	if d == nil {
		d = []byte{}
	}
	m.put(user, rp, d)
	e, _ := m.StatWorkspace(ctx, user, rp)
	return e, nil
}

func (m *memWorkspaces) MoveWorkspace(ctx context.Context, user, src, dst string) error {
	if _, err := m.CopyWorkspace(ctx, user, src, dst); err != nil {
		return err
	}
	_, err := m.RemoveWorkspace(ctx, user, src)
	return err
}

func (m *memWorkspaces) CopyWorkspace(ctx context.Context, user, src, dst string) (int, error) {
	e, err := m.StatWorkspace(ctx, user, src)
	if err != nil {
		return 0, err
	}
	d, _ := m.get(user, e.Path)
	if _, err := m.WriteWorkspaceFile(ctx, user, dst, bytes.NewReader(d), true); err != nil {
		return 0, err
	}
	return 1, nil
}

func (m *memWorkspaces) RemoveWorkspace(ctx context.Context, user, p string) (int, error) {
	e, err := m.StatWorkspace(ctx, user, p)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files[user], e.Path)
	return 0, nil
}

func (m *memWorkspaces) EmptyWorkspace(_ context.Context, user string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.files, user)
	return 0, nil
}

// wsEnv is a gateway with accounts (alice and bob, users), the admin key
// and workspaces in memory; alice's workspace holds a.txt, bin.dat and
// docs/.
type wsEnv struct {
	*authEnv
	ws         *memWorkspaces
	alice, bob []string // their bearer headers
	admin      []string
}

func newWSEnv(t *testing.T, limits gateway.WorkspaceLimits) *wsEnv {
	t.Helper()
	ws := newMemWorkspaces()
	e := newEnv(t, envOpts{noModel: true, gw: gateway.Options{APIKey: adminKey, Workspaces: ws, WorkspaceLimits: limits,
		Auth: gateway.AuthOptions{Accounts: accountstest.NewMemStore(), TokenTTL: time.Hour}}})
	ae := &authEnv{env: e}
	ae.addUser(t, "alice", "alice-password")
	ae.addUser(t, "bob", "bob-password!")
	w := &wsEnv{authEnv: ae, ws: ws, admin: []string{"X-API-Key", adminKey}}
	w.alice, w.bob = bearer(ae.login(t, "alice", "alice-password").Token), bearer(ae.login(t, "bob", "bob-password!").Token)
	ws.put("alice", "a.txt", []byte("hello alice"))
	ws.put("alice", "bin.dat", []byte{'x', 0, 'y'})
	ws.put("alice", "docs", nil)
	ws.put("alice", "docs/n.md", []byte("# notes"))
	return w
}

func body[T any](t *testing.T, r *http.Response, want int) T { return decode[T](t, r, want) }

// A user's token acts in its own workspace and may not name another's;
// the admin key must name the user; nobody reaches a workspace without
// credentials.
func TestWorkspaceRoutesActForThePrincipal(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	got := body[map[string]any](t, w.do(t, "GET", "/wunder/workspace", "", w.alice...), 200)
	if got["user_id"] != "alice" || got["total"] != 3.0 || got["summary"].(map[string]any)["files"] != 3.0 {
		t.Fatalf("alice's listing = %v", got)
	}
	if got := body[map[string]any](t, w.do(t, "GET", "/wunder/workspace", "", w.bob...), 200); got["total"] != 0.0 {
		t.Errorf("bob sees %v of alice's entries", got["total"])
	}
	if got := body[map[string]any](t, w.do(t, "GET", "/wunder/workspace?user_id=alice", "", w.admin...), 200); got["user_id"] != "alice" || got["total"] != 3.0 {
		t.Errorf("the admin naming alice = %v", got)
	}
	wantProblem(t, w.do(t, "GET", "/wunder/workspace", "", w.admin...), 400, "missing_user_id")
	wantProblem(t, w.do(t, "GET", "/wunder/workspace", ""), 401, "unauthenticated")

	// Every route, as bob naming alice: refused, and nothing of alice's
	// changes.
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/wunder/workspace?user_id=alice", ""},
		{"GET", "/wunder/workspace/content?user_id=alice&path=a.txt", ""},
		{"GET", "/wunder/workspace/search?user_id=alice&query=a", ""},
		{"GET", "/wunder/workspace/download?user_id=alice&path=a.txt", ""},
		{"GET", "/wunder/workspace/archive?user_id=alice", ""},
		{"DELETE", "/wunder/workspace?user_id=alice&path=a.txt", ""},
		{"DELETE", "/wunder/workspace?user_id=alice&confirm=true", ""},
		{"POST", "/wunder/workspace/dir", `{"user_id":"alice","path":"x"}`},
		{"POST", "/wunder/workspace/file", `{"user_id":"alice","path":"a.txt","content":"bob was here"}`},
		{"POST", "/wunder/workspace/move?user_id=alice", `{"source":"a.txt","destination":"b.txt"}`},
		{"POST", "/wunder/workspace/copy", `{"user_id":"alice","source":"a.txt","destination":"b.txt"}`},
		{"POST", "/wunder/workspace/batch", `{"user_id":"alice","action":"delete","paths":["a.txt"]}`},
	} {
		wantProblem(t, w.do(t, rq.method, rq.path, rq.body, w.bob...), 403, "permission_denied")
	}
	r := w.upload(t, "/wunder/workspace/upload?user_id=alice", w.bob, formPart{field: "files", file: "evil.txt", data: "x"})
	wantProblem(t, r, 403, "permission_denied")
	if d, _ := w.ws.get("alice", "a.txt"); string(d) != "hello alice" {
		t.Fatalf("alice's a.txt = %q after bob's attempts", d)
	}
	if _, ok := w.ws.get("alice", "evil.txt"); ok {
		t.Fatal("bob's upload reached alice's workspace")
	}
}

// The query of the listing routes is checked before the workspace is
// asked; what passes arrives parsed, limits capped.
func TestWorkspaceQueryBounds(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	for _, q := range []string{"offset=-1", "offset=x", "limit=1.5", "depth=-2", "sort_by=colour", "order=up", "sort_by=NAME"} {
		wantProblem(t, w.do(t, "GET", "/wunder/workspace?"+q, "", w.alice...), 400, "invalid_argument")
		wantProblem(t, w.do(t, "GET", "/wunder/workspace/content?path=docs&"+q, "", w.alice...), 400, "invalid_argument")
	}
	for _, q := range []string{"include_content=maybe", "max_bytes=-1", "max_bytes=ten"} {
		wantProblem(t, w.do(t, "GET", "/wunder/workspace/content?path=a.txt&"+q, "", w.alice...), 400, "invalid_argument")
	}
	for _, q := range []string{"", "query=", "query=a&limit=-1", "query=a&regex=yes", "query=a&ignore_case=2", "query=a&include_files=no", "query=a&include_dirs=t1", "query=a&content=off"} {
		wantProblem(t, w.do(t, "GET", "/wunder/workspace/search?"+q, "", w.alice...), 400, "invalid_argument")
	}
	w.ws.mu.Lock()
	asked := len(w.ws.lists) + len(w.ws.search)
	w.ws.mu.Unlock()
	if asked != 0 {
		t.Fatalf("the workspace was asked %d times for refused queries", asked)
	}

	got := body[map[string]any](t, w.do(t, "GET", "/wunder/workspace?offset=1&limit=99999&depth=50&sort_by=size&order=desc&keyword=a", "", w.alice...), 200)
	if got["offset"] != 1.0 || got["limit"] != 1000.0 || len(got["entries"].([]any)) != 2 || got["total"] != 3.0 {
		t.Errorf("page = %v", got)
	}
	got = body[map[string]any](t, w.do(t, "GET", "/wunder/workspace?limit=0", "", w.alice...), 200)
	if got["limit"] != 200.0 {
		t.Errorf("limit=0 means the default page of 200; got %v", got["limit"])
	}
	w.ws.mu.Lock()
	first := w.ws.lists[0]
	w.ws.mu.Unlock()
	if first != (gateway.WorkspaceListOptions{Depth: 8, Offset: 1, Limit: 1000, Keyword: "a", SortBy: "size", Order: "desc"}) {
		t.Errorf("the workspace was asked for %+v", first)
	}

	// Search: the original's "keyword" names the query too; the flags
	// arrive as given, the limit at least 1 and at most 1000.
	body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/search?keyword=a&limit=0&regex=true&ignore_case=1&include_files=false&include_dirs=F&content=false&glob=*.md&path=docs", "", w.alice...), 200)
	body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/search?query=n&limit=5000", "", w.alice...), 200)
	w.ws.mu.Lock()
	searches := slices.Clone(w.ws.search)
	w.ws.mu.Unlock()
	want := []gateway.WorkspaceSearch{
		{Query: "a", Path: "docs", Glob: "*.md", Regex: true, IgnoreCase: true, MaxResults: 1},
		{Query: "n", MaxResults: 1000, Files: true, Dirs: true, Content: true},
	}
	if !slices.Equal(searches, want) {
		t.Errorf("searches = %+v; want %+v", searches, want)
	}
}

// The listing names the path as the client would write it, with its
// parent (null at the root), and a summary only at the root.
func TestWorkspaceListingPaths(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	for q, want := range map[string][2]any{
		"":                  {"", nil},
		"path=docs":         {"docs", ""},
		"path=./docs/":      {"docs", ""},
		"path=docs/../docs": {"docs", ""},
	} {
		r := w.do(t, "GET", "/wunder/workspace?"+q, "", w.alice...)
		if strings.Contains(q, "..") {
			wantProblem(t, r, 403, "permission_denied") // the resolver refuses; the route does not clean it away
			continue
		}
		got := body[map[string]any](t, r, 200)
		_, hasSummary := got["summary"]
		if got["path"] != want[0] || got["parent"] != want[1] || hasSummary != (want[0] == "") {
			t.Errorf("%q: path %v parent %v summary %v; want %v %v", q, got["path"], got["parent"], hasSummary, want[0], want[1])
		}
	}
	wantProblem(t, w.do(t, "GET", "/wunder/workspace?path=nope", "", w.alice...), 404, "not_found")
}

// /content: a text file's text (cut at max_bytes), a directory's page, a
// binary or over-large file refused in a problem that points at the
// download.
func TestWorkspaceContent(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{MaxFileBytes: 5})
	w.ws.put("alice", "big.txt", bytes.Repeat([]byte("b"), 100))
	got := body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/content?path=a.txt", "", w.alice...), 200)
	if got["content"] != "hello alice" || got["format"] != "text" || got["truncated"] != false || got["size"] != 11.0 {
		t.Errorf("a.txt = %v", got)
	}
	// max_bytes is capped at the read limit (security.max_file_bytes).
	got = body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/content?path=a.txt&max_bytes=999", "", w.alice...), 200)
	if got["content"] != "hello" || got["truncated"] != true {
		t.Errorf("a.txt cut = %v", got)
	}
	got = body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/content?path=a.txt&include_content=false", "", w.alice...), 200)
	if _, has := got["content"]; has || got["type"] != "file" {
		t.Errorf("without content = %v", got)
	}
	got = body[map[string]any](t, w.do(t, "GET", "/wunder/workspace/content?path=docs", "", w.alice...), 200)
	if got["format"] != "dir" || got["total"] != 1.0 || got["entries"].([]any)[0].(map[string]any)["path"] != "docs/n.md" {
		t.Errorf("docs = %v", got)
	}
	p := wantProblem(t, w.do(t, "GET", "/wunder/workspace/content?path=bin.dat", "", w.alice...), 422, "binary_file")
	if !strings.Contains(p.Detail, "/wunder/workspace/download") {
		t.Errorf("binary refusal %q does not point at the download", p.Detail)
	}
	p = wantProblem(t, w.do(t, "GET", "/wunder/workspace/content?path=big.txt", "", w.alice...), 422, "file_too_large")
	if !strings.Contains(p.Detail, "100 bytes") || !strings.Contains(p.Detail, "64-byte") {
		t.Errorf("too large refusal %q lacks the sizes", p.Detail)
	}
	wantProblem(t, w.do(t, "GET", "/wunder/workspace/content?path=none.txt", "", w.alice...), 404, "not_found")
}

// A download is an attachment that is never rendered: its type by its
// extension, nosniff, a sandbox CSP, a name encoded for any script, and
// byte ranges.
func TestWorkspaceDownload(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	w.ws.put("alice", "页面.html", []byte("<script>alert(1)</script>"))
	r := w.do(t, "GET", "/wunder/workspace/download?path="+url.QueryEscape("页面.html"), "", w.alice...)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || string(b) != "<script>alert(1)</script>" {
		t.Fatalf("download = %d %q", r.StatusCode, b)
	}
	h := r.Header
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("headers %v", h)
	}
	if cd := h.Get("Content-Disposition"); cd != "attachment; filename*=utf-8''%E9%A1%B5%E9%9D%A2.html" {
		t.Errorf("Content-Disposition %q", cd)
	}
	r = w.do(t, "GET", "/wunder/workspace/download?path=a.txt", "", append(w.alice, "Range", "bytes=6-")...)
	b, _ = io.ReadAll(r.Body)
	if r.StatusCode != http.StatusPartialContent || string(b) != "alice" {
		t.Errorf("range = %d %q", r.StatusCode, b)
	}
	if ct := w.do(t, "GET", "/wunder/workspace/download?path=bin.dat", "", w.alice...).Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("a file of no known type is %q", ct)
	}
	wantProblem(t, w.do(t, "GET", "/wunder/workspace/download", "", w.alice...), 400, "invalid_argument")
	wantProblem(t, w.do(t, "GET", "/wunder/workspace/download?path=docs", "", w.alice...), 400, "invalid_argument")
	wantProblem(t, w.do(t, "GET", "/wunder/workspace/download?path=../etc/passwd", "", w.alice...), 403, "permission_denied")
}

// An archive is planned before a byte is sent: a refusal is a problem; a
// zip comes with its name and entry count.
func TestWorkspaceArchive(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	r := w.do(t, "GET", "/wunder/workspace/archive?path=docs", "", w.alice...)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/zip" || r.Header.Get("X-Archive-Entries") != "1" ||
		r.Header.Get("Content-Disposition") != `attachment; filename=docs.zip` {
		t.Fatalf("archive = %d %v", r.StatusCode, r.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "docs/n.md" {
		t.Fatalf("zip: %v %v", err, zr)
	}
	wantProblem(t, w.do(t, "GET", "/wunder/workspace/archive?path=empty", "", w.alice...), 404, "not_found")
}

// The write routes: what each body needs, the file size limit before the
// workspace is touched, and quota refusals as 413 quota_exceeded.
func TestWorkspaceWrites(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{MaxFileBytes: 16})
	for _, rq := range []struct{ path, body, code string }{
		{"/wunder/workspace/dir", `{}`, "invalid_argument"},
		{"/wunder/workspace/file", `{"path":"a.txt"}`, "invalid_argument"}, // no content is not empty content
		{"/wunder/workspace/file", `{"content":"x"}`, "invalid_argument"},
		{"/wunder/workspace/move", `{"source":"a.txt"}`, "invalid_argument"},
		{"/wunder/workspace/copy", `{"destination":"b"}`, "invalid_argument"},
		{"/wunder/workspace/file", `{"path":"a.txt","content":5}`, "invalid_json"},
		{"/wunder/workspace/dir", `{"path":"x","colour":"red"}`, "unknown_field"},
		{"/wunder/workspace/dir", `[]`, "invalid_json"},
	} {
		wantProblem(t, w.do(t, "POST", rq.path, rq.body, w.alice...), 400, rq.code)
	}
	p := wantProblem(t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"a.txt","content":"`+strings.Repeat("z", 17)+`"}`, w.alice...), 413, "file_too_large")
	if !strings.Contains(p.Detail, "17 bytes") || !strings.Contains(p.Detail, "16-byte") {
		t.Errorf("detail %q", p.Detail)
	}
	if d, _ := w.ws.get("alice", "a.txt"); string(d) != "hello alice" {
		t.Fatalf("a refused write changed a.txt to %q", d)
	}

	got := body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"a.txt","content":""}`, w.alice...), 200)
	if got["ok"] != true || got["size"] != 0.0 {
		t.Errorf("emptying a.txt = %v", got)
	}
	wantProblem(t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"new.txt","content":"x"}`, w.alice...), 404, "not_found")
	got = body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"./new.txt","content":"x","create_if_missing":true}`, w.alice...), 200)
	if fmt.Sprint(got["files"]) != "[new.txt]" {
		t.Errorf("files = %v", got["files"])
	}
	got = body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/dir", `{"path":"out/"}`, w.alice...), 200)
	if fmt.Sprint(got["files"]) != "[out]" || got["message"] != "created" {
		t.Errorf("mkdir = %v", got)
	}
	// path names the source of a move, as on every route.
	body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/move", `{"path":"new.txt","destination":"out/new.txt"}`, w.alice...), 200)
	if _, ok := w.ws.get("alice", "out/new.txt"); !ok {
		t.Error("move did not happen")
	}
	got = body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/copy", `{"source":"out/new.txt","destination":"copy.txt"}`, w.alice...), 200)
	if got["entries"] != 1.0 {
		t.Errorf("copy = %v", got)
	}

	w.ws.mu.Lock()
	w.ws.quota = 20
	w.ws.mu.Unlock()
	p = wantProblem(t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"q.txt","content":"0123456789abcdef","create_if_missing":true}`, w.alice...), 413, "quota_exceeded")
	if !strings.Contains(p.Detail, "workspace.max_bytes_per_user") {
		t.Errorf("quota detail %q", p.Detail)
	}
	body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/file", `{"path":"q.txt","content":"0123456","create_if_missing":true}`, w.alice...), 200)
	wantProblem(t, w.do(t, "POST", "/wunder/workspace/copy", `{"source":"q.txt","destination":"q2.txt"}`, w.alice...), 413, "quota_exceeded")
}

// DELETE without a path empties the workspace only when confirmed.
func TestWorkspaceDelete(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	for _, q := range []string{"", "?path=", "?path=.", "?confirm=false"} {
		wantProblem(t, w.do(t, "DELETE", "/wunder/workspace"+q, "", w.alice...), 400, "confirmation_required")
	}
	wantProblem(t, w.do(t, "DELETE", "/wunder/workspace?confirm=sure", "", w.alice...), 400, "invalid_argument")
	if _, ok := w.ws.get("alice", "a.txt"); !ok {
		t.Fatal("an unconfirmed delete removed a.txt")
	}
	got := body[map[string]any](t, w.do(t, "DELETE", "/wunder/workspace?path=docs/n.md", "", w.alice...), 200)
	if got["message"] != "deleted" || got["path"] != "docs/n.md" {
		t.Errorf("delete = %v", got)
	}
	wantProblem(t, w.do(t, "DELETE", "/wunder/workspace?path=docs/n.md", "", w.alice...), 404, "not_found")
	got = body[map[string]any](t, w.do(t, "DELETE", "/wunder/workspace?confirm=true", "", w.alice...), 200)
	if got["message"] != "emptied" {
		t.Errorf("empty = %v", got)
	}
	if u, _ := w.ws.WorkspaceUsage(t.Context(), "alice"); u.Files != 0 {
		t.Errorf("%d files left", u.Files)
	}
}

// A batch handles each path on its own: failures are listed with their
// code, the others still happen; its bounds are checked first.
func TestWorkspaceBatch(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{})
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	manyJSON, _ := json.Marshal(many)
	for _, b := range []string{
		`{"action":"shred","paths":["a.txt"]}`,
		`{"action":"delete","paths":[]}`,
		`{"action":"delete"}`,
		`{"action":"delete","paths":` + string(manyJSON) + `}`,
		`{"action":"move","paths":["a.txt"]}`,
		`{"action":"copy","paths":["a.txt"],"destination":""}`,
	} {
		wantProblem(t, w.do(t, "POST", "/wunder/workspace/batch", b, w.alice...), 400, "invalid_argument")
	}

	w.ws.put("alice", "c.txt", []byte("0123456789"))
	w.ws.mu.Lock()
	w.ws.quota = 45 // 31 bytes held: room for a.txt's copy (11), not for c.txt's as well (10 more)
	w.ws.mu.Unlock()
	got := body[struct {
		OK        bool
		Succeeded []string
		Failed    []struct{ Path, Code, Message string }
	}](t, w.do(t, "POST", "/wunder/workspace/batch", `{"action":"copy","paths":["a.txt","missing.txt","../x","c.txt"],"destination":"docs"}`, w.alice...), 200)
	codes := map[string]string{}
	for _, f := range got.Failed {
		codes[f.Path] = f.Code
		if f.Message == "" {
			t.Errorf("failure of %s has no message", f.Path)
		}
	}
	if got.OK || !slices.Equal(got.Succeeded, []string{"a.txt"}) ||
		!maps.Equal(codes, map[string]string{"missing.txt": "not_found", "../x": "permission_denied", "c.txt": "quota_exceeded"}) {
		t.Errorf("batch = %+v", got)
	}
	if _, ok := w.ws.get("alice", "docs/a.txt"); !ok {
		t.Error("the copy that could happen did not")
	}
	got2 := body[map[string]any](t, w.do(t, "POST", "/wunder/workspace/batch", `{"action":"delete","paths":["docs/a.txt","bin.dat"]}`, w.alice...), 200)
	if got2["ok"] != true || got2["message"] != "2 succeeded, 0 failed" {
		t.Errorf("delete batch = %v", got2)
	}
}

// formPart is one part of an upload form.
type formPart struct {
	field, file, data string
	disposition       string // raw Content-Disposition, instead of field and file
}

func (w *wsEnv) upload(t *testing.T, target string, hdr []string, parts ...formPart) *http.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		switch {
		case p.disposition != "":
			h.Set("Content-Disposition", p.disposition)
		case p.file != "":
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.field, p.file))
		default:
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.field))
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write([]byte(p.data))
	}
	_ = mw.Close()
	return w.do(t, "POST", target, buf.String(), append([]string{"Content-Type", mw.FormDataContentType()}, hdr...)...)
}

// The upload form: path and user_id before the files, names that are
// plain relative paths (subdirectories kept), each file bounded, a
// failure saying which files came before it.
func TestWorkspaceUploadForm(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{MaxUploadBytes: 8})
	got := body[map[string]any](t, w.upload(t, "/wunder/workspace/upload", w.alice,
		formPart{field: "path", data: " docs "}, formPart{field: "files", file: "one.txt", data: "12345678"},
		formPart{field: "files", file: "sub/two.txt", data: ""}), 200)
	if fmt.Sprint(got["files"]) != "[docs/one.txt docs/sub/two.txt]" || got["bytes"] != 8.0 {
		t.Fatalf("upload = %v", got)
	}
	if d, _ := w.ws.get("alice", "docs/one.txt"); string(d) != "12345678" {
		t.Errorf("one.txt = %q", d)
	}
	// The admin names the user in the form.
	body[map[string]any](t, w.upload(t, "/wunder/workspace/upload", w.admin,
		formPart{field: "user_id", data: "bob"}, formPart{field: "files", file: "b.txt", data: "bob's"}), 200)
	if _, ok := w.ws.get("bob", "b.txt"); !ok {
		t.Error("the admin's upload for bob did not land in bob's workspace")
	}

	for name, tc := range map[string]struct {
		parts  []formPart
		status int
		code   string
		detail string
	}{
		"a file one byte over": {[]formPart{{field: "files", file: "ok.txt", data: "1"}, {field: "files", file: "big.txt", data: "123456789"}},
			413, "file_too_large", `1 file(s) were uploaded before it: ["ok.txt"]`},
		"a field after a file": {[]formPart{{field: "files", file: "x.txt", data: "1"}, {field: "path", data: "docs"}},
			400, "invalid_form", "before the files"},
		"an unknown field":     {[]formPart{{field: "colour", data: "red"}}, 400, "unknown_field", `"colour"`},
		"no files":             {[]formPart{{field: "path", data: "docs"}}, 400, "invalid_form", "one or more files"},
		"a long field":         {[]formPart{{field: "path", data: strings.Repeat("p", 1025)}}, 400, "invalid_form", "longer than 1024"},
		"a name with ..":       {[]formPart{{field: "files", file: "../up.txt", data: "1"}}, 400, "invalid_filename", "plain relative path"},
		"an absolute name":     {[]formPart{{field: "files", file: "/etc/x", data: "1"}}, 400, "invalid_filename", "plain relative path"},
		"a backslash":          {[]formPart{{field: "files", file: `a\b.txt`, data: "1"}}, 400, "invalid_filename", "plain relative path"},
		"an empty element":     {[]formPart{{field: "files", file: "a//b.txt", data: "1"}}, 400, "invalid_filename", "plain relative path"},
		"no file name":         {[]formPart{{field: "files", data: "1"}}, 400, "invalid_filename", "no file name"},
		"a broken disposition": {[]formPart{{disposition: `form-data; name=files; filename="a.txt`, data: "1"}}, 400, "unknown_field", `""`},
		"into a file":          {[]formPart{{field: "path", data: "a.txt"}, {field: "files", file: "x.txt", data: "1"}}, 409, "conflict", "not a directory"},
		"into nothing":         {[]formPart{{field: "path", data: "nope"}, {field: "files", file: "x.txt", data: "1"}}, 404, "not_found", "nope"},
		"outside":              {[]formPart{{field: "path", data: "../.."}, {field: "files", file: "x.txt", data: "1"}}, 403, "permission_denied", ""},
	} {
		t.Run(name, func(t *testing.T) {
			p := wantProblem(t, w.upload(t, "/wunder/workspace/upload", w.alice, tc.parts...), tc.status, tc.code)
			if !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("detail %q lacks %q", p.Detail, tc.detail)
			}
		})
	}
	if _, ok := w.ws.get("alice", "big.txt"); ok {
		t.Error("the file over the limit was written")
	}

	wantProblem(t, w.do(t, "POST", "/wunder/workspace/upload", `{"files":[]}`, w.alice...), 415, "unsupported_media_type")
	wantProblem(t, w.do(t, "POST", "/wunder/workspace/upload", "--x--", append([]string{"Content-Type", "multipart/form-data"}, w.alice...)...), 400, "invalid_form")
	wantProblem(t, w.do(t, "POST", "/wunder/workspace/upload", "garbage", append([]string{"Content-Type", "multipart/form-data; boundary=zz"}, w.alice...)...), 400, "invalid_form")
}

// The upload's body limit is its own (workspace.max_upload_total_bytes),
// not the API's 1 MiB: a body over it is refused as too large, one under
// it passes though it is over the API's limit.
func TestWorkspaceUploadBodyLimit(t *testing.T) {
	w := newWSEnv(t, gateway.WorkspaceLimits{MaxUploadBytes: 4 << 20, MaxUploadTotalBytes: 3 << 20})
	two := strings.Repeat("u", 2<<20)
	got := body[map[string]any](t, w.upload(t, "/wunder/workspace/upload", w.alice, formPart{field: "files", file: "two.bin", data: two}), 200)
	if got["bytes"] != float64(2<<20) {
		t.Fatalf("upload = %v", got)
	}
	r := w.upload(t, "/wunder/workspace/upload", w.alice, formPart{field: "files", file: "one.bin", data: "1"},
		formPart{field: "files", file: "four.bin", data: two + two})
	wantProblem(t, r, 413, "body_too_large")
	if _, ok := w.ws.get("alice", "four.bin"); ok {
		t.Error("the file cut by the body limit was written")
	}
}
