package lsp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFindRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	mk := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(base, "go.mod"), "module above\n") // above the workspace
	mk(filepath.Join(ws, "proj", "go.mod"), "module proj\n")
	mk(filepath.Join(ws, "proj", "pkg", "a.go"), "package pkg\n")
	mk(filepath.Join(ws, "loose", "b.go"), "package loose\n")
	mk(filepath.Join(outside, "go.mod"), "module outside\n")
	mk(filepath.Join(outside, "c.go"), "package outside\n")
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	// A workspace reached through a symlink still confines.
	wsLink := filepath.Join(base, "wslink")
	if err := os.Symlink(ws, wsLink); err != nil {
		t.Fatal(err)
	}
	markers := []string{"go.work", "go.mod", "../go.mod", "/etc/passwd"}
	realWS, _ := filepath.EvalSymlinks(ws)

	tests := []struct {
		name, ws, file, want string
		err                  error
	}{
		{"nearest marker", ws, filepath.Join(ws, "proj", "pkg", "a.go"), filepath.Join(realWS, "proj"), nil},
		{"no marker inside: the workspace, never the go.mod above it", ws, filepath.Join(ws, "loose", "b.go"), realWS, nil},
		{"symlinked workspace", wsLink, filepath.Join(wsLink, "proj", "pkg", "a.go"), filepath.Join(realWS, "proj"), nil},
		{"symlink out of the workspace", ws, filepath.Join(ws, "link", "c.go"), "", ErrOutsideWorkspace},
		{"dot-dot path", ws, filepath.Join(ws, "..", "outside", "c.go"), "", ErrOutsideWorkspace},
		{"the file above", ws, filepath.Join(base, "go.mod"), "", ErrOutsideWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindRoot(tt.ws, tt.file, markers)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("FindRoot = %q, %v; want %v", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindRoot = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestUTF16Columns(t *testing.T) {
	t.Parallel()
	line := "aé😀b中" // 1 + 1 + 2 + 1 + 1 UTF-16 units
	for col, want := range []int{0, 1, 2, 4, 5, 6, 6} {
		if got := UTF16Column(line, col); got != want {
			t.Errorf("UTF16Column(%d) = %d, want %d", col, got, want)
		}
	}
	for units, want := range []int{0, 1, 2, 3, 3, 4, 5, 5} {
		if got := RuneColumn(line, units); got != want {
			t.Errorf("RuneColumn(%d) = %d, want %d", units, got, want)
		}
	}
	if l, ok := Line("a\r\nbé\nc", 1); !ok || l != "bé" {
		t.Errorf("Line 1 = %q %v", l, ok)
	}
	if _, ok := Line("a\n", 5); ok {
		t.Error("Line past the end exists")
	}
	if p := URIToPath(PathToURI("/tmp/a b/ü.go")); p != "/tmp/a b/ü.go" {
		t.Errorf("URI round trip = %q", p)
	}
}
