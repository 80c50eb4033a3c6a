package sandbox_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

func owner(t *testing.T, p string) (uid, gid int) {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := info.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// TestOwnNeverLeavesTheWorkspace plants what a hostile command could leave
// in its workspace (symlinks to a file and a directory outside, a hard link
// to a file outside) and checks that re-owning the workspace changes
// nothing outside it.
func TestOwnNeverLeavesTheWorkspace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("re-owning is done only when wunder runs as root")
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "sub", "mine.txt"), []byte("y"), 0o640); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"to_file": secret, "to_dir": outside, "sub/up": "../.."} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(secret, filepath.Join(ws, "hard")); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.Own(ws, 65534, 65534); err != nil {
		t.Fatalf("Own: %v", err)
	}
	for _, p := range []string{".", "sub", "sub/mine.txt", "to_file", "to_dir", "sub/up"} {
		if uid, gid := owner(t, filepath.Join(ws, p)); uid != 65534 || gid != 65534 {
			t.Errorf("%s is owned by %d:%d, want 65534:65534", p, uid, gid)
		}
	}
	for _, p := range []string{secret, outside, filepath.Dir(ws)} {
		if uid, _ := owner(t, p); uid != 0 {
			t.Errorf("%s outside the workspace was re-owned to %d", p, uid)
		}
	}
}
