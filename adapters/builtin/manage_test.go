package builtin

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// TestManageEscapes: every method of the workspace API refuses the escape
// corpus of TestResolve with the sentinel the resolver gives, and nothing
// outside changes.
func TestManageEscapes(t *testing.T) {
	s, _, dir, outside := escapeFixture(t)
	ctx := context.Background()
	bad := map[string]error{
		"../x": orchestrator.ErrInvalidArgument, "/etc/passwd": orchestrator.ErrInvalidArgument,
		"a\x00b": orchestrator.ErrInvalidArgument, "dangling": orchestrator.ErrInvalidArgument,
		"etc_link/passwd": orchestrator.ErrPermissionDenied, "out_dir/secret.txt": orchestrator.ErrPermissionDenied,
		"out_dir/new.txt": orchestrator.ErrPermissionDenied, ".env": orchestrator.ErrPermissionDenied,
		"env_link": orchestrator.ErrPermissionDenied, "keys/id.pem": orchestrator.ErrPermissionDenied,
	}
	ops := map[string]func(p string) error{
		"Stat":     func(p string) error { _, err := s.Stat(ctx, testUser, p); return err },
		"List":     func(p string) error { _, err := s.List(ctx, testUser, p, ListOptions{}); return err },
		"ReadFile": func(p string) error { _, err := s.ReadFile(ctx, testUser, p, 0); return err },
		"Open": func(p string) error {
			f, _, err := s.Open(ctx, testUser, p)
			if f != nil {
				f.Close()
			}
			return err
		},
		"Search": func(p string) error {
			_, err := s.Search(ctx, testUser, SearchOptions{Query: "x", Path: p, MaxResults: 5, Files: true, Dirs: true, Content: true})
			return err
		},
		"Archive": func(p string) error { _, err := s.Archive(ctx, testUser, p); return err },
		"Mkdir":   func(p string) error { return s.Mkdir(ctx, testUser, p) },
		"WriteFile": func(p string) error {
			_, err := s.WriteFile(ctx, testUser, p, strings.NewReader("pwned"), true)
			return err
		},
		"Move from": func(p string) error { return s.Move(ctx, testUser, p, "dst") },
		"Move to":   func(p string) error { return s.Move(ctx, testUser, "a.txt", p) },
		"Copy from": func(p string) error { _, err := s.Copy(ctx, testUser, p, "dst"); return err },
		"Copy to":   func(p string) error { _, err := s.Copy(ctx, testUser, "sub", p); return err },
		"Remove":    func(p string) error { _, err := s.Remove(ctx, testUser, p); return err },
	}
	for name, op := range ops {
		for p, want := range bad {
			if err := op(p); !errors.Is(err, want) {
				t.Errorf("%s(%q) = %v; want %v", name, p, err, want)
			} else if strings.Contains(err.Error(), dir) {
				t.Errorf("%s(%q): the error names the host path: %v", name, p, err)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "TOP SECRET\n" {
		t.Errorf("outside secret changed: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside now holds %d entries", len(entries))
	}
}

// TestManageWriteAndArchive: a write is atomic and a failing source keeps
// the old file; an archive leaves denied entries and symlinks out.
func TestManageWriteAndArchive(t *testing.T) {
	s, _, dir, _ := escapeFixture(t)
	ctx := context.Background()
	boom := errors.New("boom")
	if _, err := s.WriteFile(ctx, testUser, "a.txt", &failingReader{err: boom}, false); !errors.Is(err, boom) {
		t.Fatalf("WriteFile with a failing source = %v; want its error", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt after a failed write = %q", b)
	}
	a, err := s.Archive(ctx, testUser, "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var buf bytes.Buffer
	if err := a.WriteTo(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range zr.File {
		got = append(got, f.Name)
	}
	slices.Sort(got)
	want := []string{"a.txt", "docs/", "docs/readme.md", "keys/", "sub/", "sub/b.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("archive entries = %q; want %q (denied entries and symlinks left out)", got, want)
	}
}

type failingReader struct{ err error }

func (f *failingReader) Read(p []byte) (int, error) {
	copy(p, "partial")
	return min(len(p), 7), f.err
}

// TestManageSearchKinds: a name search for one kind returns that kind
// only, and entries of the other kind take no place in MaxResults.
func TestManageSearchKinds(t *testing.T) {
	s := newTestSet(t, Options{})
	writeTree(t, workspaceDir(t, s), map[string]string{
		"hit1.txt": "", "hit2.txt": "", "hit3.txt": "", "hitdir/x.txt": "",
	})
	ctx := context.Background()
	res, err := s.Search(ctx, testUser, SearchOptions{Query: "hit", MaxResults: 2, Dirs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Names) != 1 || res.Names[0].Path != "hitdir" || res.Truncated {
		t.Errorf("dirs only = %+v, truncated %v; want hitdir alone", res.Names, res.Truncated)
	}
	res, err = s.Search(ctx, testUser, SearchOptions{Query: "hit", MaxResults: 5, Files: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Names {
		if e.Type != TypeFile {
			t.Errorf("files only returned %+v", e)
		}
	}
	if len(res.Names) != 3 {
		t.Errorf("files only = %d names; want 3", len(res.Names))
	}
}
