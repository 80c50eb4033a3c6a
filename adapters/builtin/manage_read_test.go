package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace API's reads (manage.go) on a real directory: what List,
// Stat, ReadFile, Open and Usage return, and every bound they keep.
// TestManageEscapes holds the escape corpus; these hold the answers.

// names lists the entries' names in order.
func names(es []FileInfo) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// listFixture is a workspace with files of known sizes and times, a
// nested tree and denied entries.
func listFixture(t *testing.T) (*Set, string) {
	t.Helper()
	s := newTestSet(t, Options{DenyGlobs: testDeny})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{
		"b.txt":          "bb",     // 2 bytes
		"A.md":           "aaaa",   // 4 bytes
		"c.log":          "c",      // 1 byte
		"notes/x.txt":    "xxx",    //
		"notes/deep/y":   "y",      //
		".env":           "SECRET", // denied
		"keys/k.pem":     "PEM",    // denied inside an allowed dir
		".git/HEAD":      "ref",    // denied tree
		"secrets/pw.txt": "pw",     // denied dir
	})
	// Times in the reverse of name order, so sorting by time is not sorting
	// by name.
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, n := range []string{"c.log", "b.txt", "A.md"} {
		mt := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, n), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return s, dir
}

func TestManageListSortPageFilter(t *testing.T) {
	s, _ := listFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		o     ListOptions
		want  []string
		total int
	}{
		{"default is by name, denied left out", ListOptions{}, []string{"A.md", "b.txt", "c.log", "keys", "notes"}, 5},
		{"by name descending", ListOptions{Order: "desc"}, []string{"notes", "keys", "c.log", "b.txt", "A.md"}, 5},
		// Directories have size 0 and tie; ties go by name.
		{"by size", ListOptions{SortBy: "size"}, []string{"keys", "notes", "c.log", "b.txt", "A.md"}, 5},
		{"by size descending", ListOptions{SortBy: "size", Order: "desc"}, []string{"A.md", "b.txt", "c.log", "notes", "keys"}, 5},
		{"an unknown sort key sorts by name", ListOptions{SortBy: "colour"}, []string{"A.md", "b.txt", "c.log", "keys", "notes"}, 5},
		{"keyword, case-insensitive", ListOptions{Keyword: "T"}, []string{"b.txt", "notes"}, 2},
		{"keyword matching nothing", ListOptions{Keyword: "zzz"}, []string{}, 0},
		{"keyword never finds a denied entry", ListOptions{Keyword: "env"}, []string{}, 0},
		{"first page", ListOptions{Limit: 2}, []string{"A.md", "b.txt"}, 5},
		{"middle page", ListOptions{Offset: 2, Limit: 2}, []string{"c.log", "keys"}, 5},
		{"last page is short", ListOptions{Offset: 4, Limit: 2}, []string{"notes"}, 5},
		{"offset past the end", ListOptions{Offset: 99, Limit: 2}, []string{}, 5},
		{"offset without a limit", ListOptions{Offset: 3}, []string{"keys", "notes"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := s.List(ctx, testUser, "", tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(l.Entries); !slices.Equal(got, tc.want) {
				t.Errorf("entries = %q; want %q", got, tc.want)
			}
			if l.Total != tc.total {
				t.Errorf("Total = %d; want %d", l.Total, tc.total)
			}
			if l.Truncated {
				t.Error("Truncated on a small tree")
			}
		})
	}
}

func TestManageListByTime(t *testing.T) {
	s, _ := listFixture(t)
	l, err := s.List(context.Background(), testUser, "", ListOptions{SortBy: "updated_time", Keyword: "."})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(l.Entries), []string{"c.log", "b.txt", "A.md"}; !slices.Equal(got, want) {
		t.Errorf("by time = %q; want %q (oldest first)", got, want)
	}
	for _, e := range l.Entries {
		if e.UpdatedAt.Location() != time.UTC {
			t.Errorf("%s: UpdatedAt in %v; want UTC", e.Name, e.UpdatedAt.Location())
		}
	}
}

func TestManageListDepth(t *testing.T) {
	s, _ := listFixture(t)
	ctx := context.Background()
	l, err := s.List(ctx, testUser, "", ListOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if e.Children != nil {
			t.Errorf("depth 1: %s has children %v", e.Name, names(e.Children))
		}
	}
	l, err = s.List(ctx, testUser, "", ListOptions{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]FileInfo{}
	for _, e := range l.Entries {
		byName[e.Name] = e
	}
	if got := names(byName["keys"].Children); len(got) != 0 {
		t.Errorf("keys/ children = %q; want none (k.pem is denied)", got)
	}
	notes := byName["notes"]
	if got, want := names(notes.Children), []string{"deep", "x.txt"}; !slices.Equal(got, want) {
		t.Fatalf("notes/ children = %q; want %q", got, want)
	}
	deep := notes.Children[0]
	if deep.Path != "notes/deep" || deep.Type != TypeDir {
		t.Errorf("notes/deep = %+v", deep)
	}
	if got := names(deep.Children); !slices.Equal(got, []string{"y"}) || deep.Children[0].Path != "notes/deep/y" {
		t.Errorf("notes/deep children = %+v; want y at notes/deep/y", deep.Children)
	}
	if x := notes.Children[1]; x.Size != 3 || x.Type != TypeFile {
		t.Errorf("notes/x.txt = %+v; want a file of 3 bytes", x)
	}
	// A depth past the cap lists as deep as the cap, not an error.
	if _, err := s.List(ctx, testUser, "", ListOptions{Depth: 1000}); err != nil {
		t.Errorf("Depth 1000: %v", err)
	}
	// A subdirectory lists with paths from the workspace.
	l, err = s.List(ctx, testUser, "notes", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 2 || l.Entries[1].Path != "notes/x.txt" {
		t.Errorf("List(notes) = %+v", l.Entries)
	}
}

// A tree below the page larger than maxTreeNodes is cut there and says so.
func TestManageListTreeBound(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	big := filepath.Join(dir, "big")
	if err := os.Mkdir(big, 0o750); err != nil {
		t.Fatal(err)
	}
	for i := range maxTreeNodes + 1 {
		f, err := os.Create(filepath.Join(big, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	l, err := s.List(context.Background(), testUser, "", ListOptions{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Truncated {
		t.Error("Truncated = false for a tree over maxTreeNodes")
	}
	if n := len(l.Entries[0].Children); n != maxTreeNodes {
		t.Errorf("%d children listed; want the bound %d", n, maxTreeNodes)
	}
	// The directory's own entries are paged, not bounded by the tree limit.
	l, err = s.List(context.Background(), testUser, "big", ListOptions{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if l.Truncated || l.Total != maxTreeNodes+1 || len(l.Entries) != maxTreeNodes+1 {
		t.Errorf("List(big) = %d entries of %d, truncated %v; want all %d", len(l.Entries), l.Total, l.Truncated, maxTreeNodes+1)
	}
}

func TestManageListErrors(t *testing.T) {
	s, _ := listFixture(t)
	ctx := context.Background()
	if _, err := s.List(ctx, testUser, "missing", ListOptions{}); !errors.Is(err, orchestrator.ErrNotFound) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("List(missing) = %v; want ErrNotFound naming the path", err)
	}
	if _, err := s.List(ctx, testUser, "b.txt", ListOptions{}); !errors.Is(err, orchestrator.ErrConflict) {
		t.Errorf("List(a file) = %v; want ErrConflict", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.List(cctx, testUser, "", ListOptions{Depth: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("List on a cancelled context = %v; want context.Canceled", err)
	}
}

func TestManageStat(t *testing.T) {
	s, dir := escapeFixture2(t)
	ctx := context.Background()
	for _, tc := range []struct {
		rel  string
		want FileInfo
	}{
		{"", FileInfo{Type: TypeDir}},
		{"a.txt", FileInfo{Name: "a.txt", Path: "a.txt", Type: TypeFile, Size: 6}},
		{"sub", FileInfo{Name: "sub", Path: "sub", Type: TypeDir}},
		// A symlink inside is followed: the answer is its target's.
		{"in_link", FileInfo{Name: "sub", Path: "sub", Type: TypeDir}},
		{"in_link/b.txt", FileInfo{Name: "b.txt", Path: "sub/b.txt", Type: TypeFile, Size: 6}},
	} {
		got, err := s.Stat(ctx, testUser, tc.rel)
		if err != nil {
			t.Errorf("Stat(%q): %v", tc.rel, err)
			continue
		}
		if got.UpdatedAt.IsZero() {
			t.Errorf("Stat(%q): no UpdatedAt", tc.rel)
		}
		got.UpdatedAt = time.Time{}
		if got.Name != tc.want.Name || got.Path != tc.want.Path || got.Type != tc.want.Type || got.Size != tc.want.Size {
			t.Errorf("Stat(%q) = %+v; want %+v", tc.rel, got, tc.want)
		}
	}
	_, err := s.Stat(ctx, testUser, "sub/nope.txt")
	if !errors.Is(err, orchestrator.ErrNotFound) || !strings.Contains(err.Error(), "sub/nope.txt") || strings.Contains(err.Error(), dir) {
		t.Errorf("Stat(missing) = %v; want ErrNotFound naming sub/nope.txt and not the host path", err)
	}
	// A FIFO is neither file nor directory.
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err == nil {
		if got, err := s.Stat(ctx, testUser, "pipe"); err != nil || got.Type != TypeOther {
			t.Errorf("Stat(fifo) = %+v, %v; want TypeOther", got, err)
		}
	}
}

// escapeFixture2 is escapeFixture without the outside directory.
func escapeFixture2(t *testing.T) (*Set, string) {
	s, _, dir, _ := escapeFixture(t)
	return s, dir
}

func TestManageReadFile(t *testing.T) {
	s := newTestSet(t, Options{MaxFileBytes: 64})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{
		"plain.txt":  "hello\n",
		"utf8.txt":   "héllo wörld", // é and ö are two bytes each
		"binary.bin": "ab\x00cd",
		"big.txt":    strings.Repeat("x", 65),
		"exact.txt":  strings.Repeat("y", 64),
		"d/x":        "",
	})
	ctx := context.Background()
	for _, tc := range []struct {
		rel        string
		max        int
		data       string
		truncated  bool
		binary     bool
		tooLarge   bool
		wantAbsent bool // Data nil
	}{
		{rel: "plain.txt", data: "hello\n"},
		{rel: "plain.txt", max: 6, data: "hello\n"},
		{rel: "plain.txt", max: 5, data: "hello", truncated: true},
		// "hé" is 3 bytes; 2 would cut é in half, so the read stops before it.
		{rel: "utf8.txt", max: 2, data: "h", truncated: true},
		{rel: "utf8.txt", max: 3, data: "hé", truncated: true},
		{rel: "binary.bin", binary: true, wantAbsent: true},
		{rel: "big.txt", tooLarge: true, wantAbsent: true},
		// At the limit is not over it; asking for more than the limit gets
		// the limit.
		{rel: "exact.txt", max: 1000, data: strings.Repeat("y", 64)},
		{rel: "exact.txt", max: -1, data: strings.Repeat("y", 64)},
	} {
		name := fmt.Sprintf("%s/%d", tc.rel, tc.max)
		fc, err := s.ReadFile(ctx, testUser, tc.rel, tc.max)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(fc.Data) != tc.data || fc.Truncated != tc.truncated || fc.Binary != tc.binary || fc.TooLarge != tc.tooLarge {
			t.Errorf("%s = data %q truncated %v binary %v too large %v; want %q %v %v %v",
				name, fc.Data, fc.Truncated, fc.Binary, fc.TooLarge, tc.data, tc.truncated, tc.binary, tc.tooLarge)
		}
		if tc.wantAbsent && fc.Data != nil {
			t.Errorf("%s: Data = %q; want nil", name, fc.Data)
		}
		if fc.Limit != 64 {
			t.Errorf("%s: Limit = %d; want 64 (MaxFileBytes)", name, fc.Limit)
		}
		if fc.Info.Path != tc.rel || fc.Info.Type != TypeFile {
			t.Errorf("%s: Info = %+v", name, fc.Info)
		}
	}
	if _, err := s.ReadFile(ctx, testUser, "d", 0); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "d is not a file") {
		t.Errorf("ReadFile(a directory) = %v; want ErrInvalidArgument saying it is not a file", err)
	}
	if _, err := s.ReadFile(ctx, testUser, "gone.txt", 0); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("ReadFile(missing) = %v; want ErrNotFound", err)
	}
}

func TestManageOpen(t *testing.T) {
	s, dir := escapeFixture2(t)
	ctx := context.Background()
	f, info, err := s.Open(ctx, testUser, "in_link/b.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "bravo\n" {
		t.Errorf("Open(in_link/b.txt) read %q, %v; want bravo", b, err)
	}
	if info.Path != "sub/b.txt" || info.Size != 6 || info.Type != TypeFile {
		t.Errorf("Open info = %+v", info)
	}
	_, _, err = s.Open(ctx, testUser, "sub")
	if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "archive") {
		t.Errorf("Open(a directory) = %v; want ErrInvalidArgument pointing at the archive route", err)
	}
	_, _, err = s.Open(ctx, testUser, "nope")
	if !errors.Is(err, orchestrator.ErrNotFound) || strings.Contains(err.Error(), dir) {
		t.Errorf("Open(missing) = %v; want ErrNotFound without the host path", err)
	}
}

func TestManageUsage(t *testing.T) {
	s := newTestSet(t, Options{DenyGlobs: testDeny, MaxBytesPerUser: 1 << 20})
	ctx := context.Background()
	ws, err := s.Workspace(testUser)
	if err != nil {
		t.Fatal(err)
	}
	// A workspace never written is empty, and asking does not create it.
	u, err := s.Usage(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	if u != (Usage{QuotaBytes: 1 << 20}) {
		t.Errorf("Usage of a new workspace = %+v; want only the quota", u)
	}
	if _, err := os.Stat(ws.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Usage created the workspace: %v", err)
	}
	writeTree(t, workspaceDir(t, s), map[string]string{
		"a.txt":       "12345",
		"d/e/f.txt":   "123",
		".env":        "1234567890", // denied: not listed, but counted by the quota
		"secrets/x":   "12",
		"keys/id.pem": "1",
	})
	u, err = s.Usage(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{Files: 2, Dirs: 3, Bytes: 8, QuotaBytes: 1 << 20, QuotaUsedBytes: 5 + 3 + 10 + 2 + 1}
	if u != want {
		t.Errorf("Usage = %+v; want %+v", u, want)
	}
	// Without a quota there is nothing to count against.
	s2 := newTestSet(t, Options{})
	writeTree(t, workspaceDir(t, s2), map[string]string{"a": "abc"})
	if u, err := s2.Usage(ctx, testUser); err != nil || u != (Usage{Files: 1, Bytes: 3}) {
		t.Errorf("Usage without a quota = %+v, %v; want 1 file of 3 bytes", u, err)
	}
}

// One user's workspace API never reaches another's files, and a user id
// that is not one path element is refused before any file is touched.
func TestManageUserIsolation(t *testing.T) {
	s := newTestSet(t, Options{})
	ctx := context.Background()
	writeTree(t, workspaceDir(t, s), map[string]string{"private.txt": "alice only"})
	const bob = "bob"
	if _, err := s.Stat(ctx, bob, "private.txt"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob Stat(alice's file) = %v; want ErrNotFound", err)
	}
	if _, err := s.ReadFile(ctx, bob, "private.txt", 0); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob ReadFile(alice's file) = %v; want ErrNotFound", err)
	}
	if l, err := s.List(ctx, bob, "", ListOptions{}); err != nil || len(l.Entries) != 0 {
		t.Errorf("bob List = %+v, %v; want an empty workspace", l, err)
	}
	if _, err := s.Stat(ctx, bob, "../alice/private.txt"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("bob Stat(../alice/...) = %v; want ErrInvalidArgument", err)
	}
	if n, err := s.Empty(ctx, bob); err != nil || n != 0 {
		t.Errorf("bob Empty = %d, %v", n, err)
	}
	if got := readFile(t, filepath.Join(workspaceDir(t, s), "private.txt")); got != "alice only" {
		t.Errorf("alice's file after bob's calls = %q", got)
	}
	for _, bad := range []string{"", "..", "a/b", "../alice", "x\x00y"} {
		if _, err := s.Stat(ctx, bad, ""); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Stat as user %q = %v; want ErrInvalidArgument", bad, err)
		}
		if _, err := s.Usage(ctx, bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Usage as user %q = %v; want ErrInvalidArgument", bad, err)
		}
		if _, err := s.Empty(ctx, bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Empty as user %q = %v; want ErrInvalidArgument", bad, err)
		}
		if _, err := s.Tools(ctx, bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Tools as user %q = %v; want ErrInvalidArgument", bad, err)
		}
	}
}
