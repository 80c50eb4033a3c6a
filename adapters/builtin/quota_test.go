package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// quotaSet is a Set whose workspaces hold at most limit bytes, with the
// test user's workspace created.
func quotaSet(t *testing.T, limit int64, opts Options) (*Set, string) {
	t.Helper()
	opts.MaxBytesPerUser = limit
	s := newTestSet(t, opts)
	return s, workspaceDir(t, s)
}

// wantNoTemp fails when a write left a temporary file behind.
func wantNoTemp(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.Contains(info.Name(), ".tmp-") {
			t.Errorf("a temporary file was left: %s", p)
		}
		return nil
	})
}

func TestWriteToolsStayWithinTheQuota(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 100, Options{})
	content := func(n int) string { return strings.Repeat("x", n-1) + "\n" }

	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a.txt", "content": content(60)}))
	res := callTool(t, s, "write_file", map[string]any{"path": "b.txt", "content": content(60)})
	wantErr(t, res, "workspace quota exceeded", "workspace.max_bytes_per_user", "nothing was written")
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); err == nil {
		t.Error("the refused b.txt was written")
	}
	// Growing a.txt by 20 fits (80 of 100); by 60 more does not, and the
	// refused write leaves a.txt as it was.
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a.txt", "content": content(80)}))
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "a.txt", "content": content(140)}), "workspace.max_bytes_per_user")
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != content(80) {
		t.Errorf("a refused overwrite changed a.txt to %d bytes", len(got))
	}
	wantErr(t, callTool(t, s, "replace_text", map[string]any{"path": "a.txt", "old_text": "\n", "new_text": strings.Repeat("y", 30) + "\n"}),
		"workspace.max_bytes_per_user")
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "a.txt",
		"edits": []map[string]any{{"action": "insert_after", "line": 1, "content": content(40)}}}), "workspace.max_bytes_per_user")
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != content(80) {
		t.Errorf("a refused edit changed a.txt to %d bytes", len(got))
	}
	wantErr(t, callTool(t, s, "ptc", map[string]any{"content": "print(1)\n" + content(40), "filename": "big.py"}), "workspace.max_bytes_per_user")
	wantNoTemp(t, dir)

	// A write that shrinks the workspace is never refused, even over the
	// quota (here made by a file written behind the tools' back).
	if err := os.WriteFile(filepath.Join(dir, "outside.bin"), make([]byte, 200), 0o640); err != nil {
		t.Fatal(err)
	}
	s.quota.changed(dir) // as the end of a command does
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a.txt", "content": content(10)}))
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "c.txt", "content": "c"}), "holds 210 B")
}

func TestWriteFileStreamOverQuotaKeepsTheOldFile(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 1000, Options{})
	ctx := context.Background()
	old := bytes.Repeat([]byte("o"), 400)
	if _, err := s.WriteFile(ctx, testUser, "f.bin", bytes.NewReader(old), true); err != nil {
		t.Fatal(err)
	}
	// 400 replace the old bytes, 600 more fit, 700 do not.
	_, err := s.WriteFile(ctx, testUser, "f.bin", bytes.NewReader(bytes.Repeat([]byte("n"), 1300)), false)
	var qe *QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, orchestrator.ErrPermissionDenied) || !strings.Contains(err.Error(), quotaKey) {
		t.Fatalf("WriteFile over the quota = %v, want a *QuotaError naming %s", err, quotaKey)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.bin")); !bytes.Equal(got, old) {
		t.Errorf("the refused stream changed f.bin (%d bytes)", len(got))
	}
	wantNoTemp(t, dir)
	if _, err := s.WriteFile(ctx, testUser, "f.bin", bytes.NewReader(bytes.Repeat([]byte("n"), 1000)), false); err != nil {
		t.Errorf("a stream that fills the quota exactly: %v", err)
	}
	u, err := s.Usage(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	if u.QuotaBytes != 1000 || u.QuotaUsedBytes != 1000 {
		t.Errorf("Usage quota %d used %d, want 1000 and 1000", u.QuotaBytes, u.QuotaUsedBytes)
	}
	// A source that fails is still its own error, not the quota's.
	boom := errors.New("boom")
	if _, err := s.WriteFile(ctx, testUser, "f.bin", io.MultiReader(strings.NewReader("x"), errReader{boom}), false); !errors.Is(err, boom) {
		t.Errorf("WriteFile with a failing source = %v, want it", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestCopyOverQuotaWritesNothing(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 1000, Options{})
	writeTree(t, dir, map[string]string{"src/a": strings.Repeat("a", 300), "src/b": strings.Repeat("b", 300)})
	_, err := s.Copy(context.Background(), testUser, "src", "dst")
	if _, ok := quotaOf(err); !ok {
		t.Fatalf("Copy of 600 bytes into 400 left = %v, want a *QuotaError", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "dst")); err == nil {
		t.Error("the refused copy wrote dst")
	}
	if _, err := s.Copy(context.Background(), testUser, "src/a", "a2"); err != nil {
		t.Errorf("a copy that fits: %v", err)
	}
}

// TestQuotaCountsWhatWalksMiss: a directory whose name is not UTF-8 (which
// io/fs walks cannot enter) counts, a file with two links counts once,
// and symlinks count nothing.
func TestQuotaCountsWhatWalksMiss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	odd := filepath.Join(dir, "\xff\xfe")
	if err := os.MkdirAll(filepath.Join(odd, "deep"), 0o750); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"\xff\xfe/deep/big": strings.Repeat("x", 1000), "a": strings.Repeat("a", 10)})
	if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "a-again")); err != nil {
		t.Fatal(err)
	}
	symlink(t, "/etc/passwd", filepath.Join(dir, "passwd"))
	symlink(t, odd, filepath.Join(dir, "odd-link"))
	n, err := measureDir(context.Background(), dir)
	if err != nil || n != 1010 {
		t.Fatalf("measureDir = %d, %v; want 1010", n, err)
	}
}

// TestQuotaHoldsUnderConcurrentWrites: writers that race for the last
// room never take the workspace over the quota together.
func TestQuotaHoldsUnderConcurrentWrites(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 10_000, Options{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.WriteFile(context.Background(), testUser, fmt.Sprintf("f%02d", i), bytes.NewReader(make([]byte, 1000)), true)
			mu.Lock()
			defer mu.Unlock()
			switch _, over := quotaOf(err); {
			case err == nil:
				ok++
			case over:
				refused++
			default:
				t.Errorf("write %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	n, err := measureDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok != 10 || refused != 30 || n != 10_000 {
		t.Errorf("%d written, %d refused, %d bytes held; want 10, 30 and 10000", ok, refused, n)
	}
}

// TestStaleUsageNeverRefuses: a figure that still counts files deleted
// behind the quota's back is measured again before it refuses anything.
func TestStaleUsageNeverRefuses(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 1000, Options{})
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a", "content": strings.Repeat("a", 900)}))
	if err := os.Remove(filepath.Join(dir, "a")); err != nil { // the janitor, say
		t.Fatal(err)
	}
	s.quota.account(dir).at = s.quota.account(dir).at.Add(-2 * quotaRecheck)
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "b", "content": strings.Repeat("b", 900)}))
}

func TestNoQuotaMeansNone(t *testing.T) {
	t.Parallel()
	s, dir := quotaSet(t, 0, Options{})
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a", "content": strings.Repeat("a", 5000)}))
	if u, err := s.Usage(context.Background(), testUser); err != nil || u.QuotaBytes != 0 || u.QuotaUsedBytes != 0 {
		t.Errorf("Usage without a quota = %+v, %v", u, err)
	}
	if len(s.quota.accounts) != 0 {
		t.Errorf("no quota, yet %d accounts", len(s.quota.accounts))
	}
	_ = dir
	if _, err := New(&Options{MaxBytesPerUser: -1}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("New with a negative quota = %v", err)
	}
}

// tree10k makes a workspace of 10,000 files of 1 KiB in 100 directories.
func tree10k(b *testing.B, dir string) {
	b.Helper()
	data := make([]byte, 1024)
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o750); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d", f)), data, 0o640); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkQuotaMeasure10k is one measure (a walk) of a 10,000-file
// workspace: what a write costs when the account is stale, and what the
// watcher spends per look while a command fills the disk.
func BenchmarkQuotaMeasure10k(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	for b.Loop() {
		if n, err := measureDir(context.Background(), dir); err != nil || n != 10000*1024 {
			b.Fatalf("measureDir = %d, %v", n, err)
		}
	}
}

// BenchmarkQuotaReserve10k is what the quota adds to a write into a
// 10,000-file workspace whose account is fresh (every write but the first
// of a minute, or the first after a command): a reservation and its
// settlement, no walk.
func BenchmarkQuotaReserve10k(b *testing.B) {
	dir := b.TempDir()
	tree10k(b, dir)
	q := newQuota(1 << 40)
	ctx := context.Background()
	if _, err := q.used(ctx, dir); err != nil { // the one walk
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := q.reserve(ctx, dir, 1024)
		if err != nil {
			b.Fatal(err)
		}
		r.done(0)
	}
}
