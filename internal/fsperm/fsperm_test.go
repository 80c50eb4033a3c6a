package fsperm_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wunder/wunder/internal/fsperm"
)

func TestTighten(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "db")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "conf")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path        string
		want        os.FileMode
		regularOnly bool
		after       os.FileMode
	}{
		{f, 0o600, true, 0o600},
		{sub, 0o700, true, 0o755},   // a directory, with regularOnly: left alone
		{link, 0o700, false, 0o755}, // a symlink is never followed: its target stays
		{sub, 0o700, false, 0o700},
		{filepath.Join(dir, "missing"), 0o600, true, 0},
	} {
		if err := fsperm.Tighten(c.path, c.want, c.regularOnly, "a test file", nil); err != nil {
			t.Fatalf("Tighten(%s): %v", c.path, err)
		}
		if c.after == 0 {
			continue
		}
		info, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != c.after {
			t.Errorf("%s: mode %04o, want %04o", c.path, got, c.after)
		}
	}
}
