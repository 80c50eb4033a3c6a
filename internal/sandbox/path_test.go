package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// Path keeps the host PATH entries a command can use inside, in order and
// once each; when none is left it falls back to the system directories,
// so a command is never run with an empty PATH.
func TestPathInsideTheSandbox(t *testing.T) {
	t.Parallel()
	s := sandbox.New(nil)
	for _, tc := range []struct{ host, want string }{
		{"/usr/bin:/usr/bin:/usr/lib", "/usr/bin:/usr/lib"},
		{"/usr/lib:/usr/bin", "/usr/lib:/usr/bin"},
		{"relative/bin::/usr/bin", "/usr/bin"},
	} {
		if got := s.Path(tc.host); got != tc.want {
			t.Errorf("Path(%q) = %q; want %q", tc.host, got, tc.want)
		}
	}
	for _, host := range []string{"", "/root/bin:/nonexistent", t.TempDir()} {
		got := s.Path(host)
		if got == "" || !strings.Contains(got, "/usr/bin") {
			t.Errorf("Path(%q) = %q; want the system directories", host, got)
		}
		for _, dir := range filepath.SplitList(got) {
			if !s.Visible(dir) {
				t.Errorf("Path(%q) kept %q, which is not visible inside", host, dir)
			}
		}
	}
}

// A symlink that leads from a visible directory to one that is not is not
// visible: what counts is where it leads.
func TestVisibleFollowsSymlinks(t *testing.T) {
	t.Parallel()
	bound, hidden := t.TempDir(), t.TempDir()
	if err := os.Symlink(hidden, filepath.Join(bound, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin", filepath.Join(hidden, "in")); err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(&sandbox.Options{ROBinds: []string{bound}})
	for p, want := range map[string]bool{
		bound:                          true,
		filepath.Join(bound, "out"):    false,
		filepath.Join(hidden, "in"):    true, // leads to /usr/bin
		filepath.Join(bound, "absent"): false,
	} {
		if got := s.Visible(p); got != want {
			t.Errorf("Visible(%s) = %v; want %v", p, got, want)
		}
	}
}
