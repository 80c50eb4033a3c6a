package builtin

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// readZip returns a zip's entries: name -> content ("" for directories)
// and name -> mode.
func readZip(t *testing.T, data []byte) (map[string]string, map[string]os.FileMode) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	files, modes := map[string]string{}, map[string]os.FileMode{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name], modes[f.Name] = string(b), f.Mode()
	}
	return files, modes
}

func archive(t *testing.T, s *Set, rel string) (*Archive, []byte) {
	t.Helper()
	a, err := s.Archive(context.Background(), testUser, rel)
	if err != nil {
		t.Fatalf("Archive(%q): %v", rel, err)
	}
	defer a.Close()
	var buf bytes.Buffer
	if err := a.WriteTo(context.Background(), &buf); err != nil {
		t.Fatalf("WriteTo(%q): %v", rel, err)
	}
	return a, buf.Bytes()
}

// A folder's archive is named after it and its entries sit under its name,
// wherever it is in the workspace; a file's archive holds the file alone;
// the counts are what the zip holds.
func TestArchiveNamesAndCounts(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"a/b/c/x.txt": "xx", "a/b/c/d/y.txt": "yyy", "a/top.txt": "t", "note.md": "note"})
	for _, tc := range []struct {
		rel, name string
		files     map[string]string
		bytes     int64
	}{
		{"a/b/c", "c.zip", map[string]string{"c/": "", "c/x.txt": "xx", "c/d/": "", "c/d/y.txt": "yyy"}, 5},
		{"note.md", "note.md.zip", map[string]string{"note.md": "note"}, 4},
		{"", "workspace.zip", map[string]string{"a/": "", "a/b/": "", "a/b/c/": "", "a/b/c/x.txt": "xx", "a/b/c/d/": "",
			"a/b/c/d/y.txt": "yyy", "a/top.txt": "t", "note.md": "note"}, 10},
	} {
		a, data := archive(t, s, tc.rel)
		files, _ := readZip(t, data)
		if a.Name != tc.name {
			t.Errorf("Archive(%q).Name = %q; want %q", tc.rel, a.Name, tc.name)
		}
		if len(files) != len(tc.files) {
			t.Errorf("Archive(%q) entries = %v; want %v", tc.rel, files, tc.files)
		}
		for n, want := range tc.files {
			if got, ok := files[n]; !ok || got != want {
				t.Errorf("Archive(%q)[%s] = %q, %v; want %q", tc.rel, n, got, ok, want)
			}
		}
		// Entries counts the archived path itself too (a folder), the zip
		// holds no entry for the workspace.
		wantEntries := len(tc.files)
		if tc.rel == "" {
			wantEntries++
		}
		if a.Entries != wantEntries || a.Bytes != tc.bytes {
			t.Errorf("Archive(%q): %d entries, %d bytes; want %d, %d", tc.rel, a.Entries, a.Bytes, wantEntries, tc.bytes)
		}
	}
}

// File modes are kept (an executable stays one); a file that grew between
// the plan and the write is cut to its planned size, so the archive is
// what the plan counted against the limits.
func TestArchiveModesAndGrowth(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"p/run.sh": "#!/bin/sh\n", "p/log.txt": "12345"})
	if err := os.Chmod(filepath.Join(dir, "p/run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	a, err := s.Archive(context.Background(), testUser, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	f, err := os.OpenFile(filepath.Join(dir, "p/log.txt"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("grown after the plan"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var buf bytes.Buffer
	if err := a.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	files, modes := readZip(t, buf.Bytes())
	if files["p/log.txt"] != "12345" {
		t.Errorf("a grown file = %q; want its planned 5 bytes", files["p/log.txt"])
	}
	if modes["p/run.sh"].Perm() != 0o750 || !modes["p/"].IsDir() {
		t.Errorf("modes: run.sh %v, p/ %v; want 0750 and a directory", modes["p/run.sh"], modes["p/"])
	}
}

// Writing stops with the context, and with an error when a planned file
// is gone; neither panics or writes a zip that looks whole.
func TestArchiveWriteFailures(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"q/a.txt": "a", "q/b.txt": "b"})
	a, err := s.Archive(context.Background(), testUser, "q")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	if err := a.WriteTo(ctx, &buf); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteTo on a cancelled context = %v; want context.Canceled", err)
	}
	if err := os.Remove(filepath.Join(dir, "q/b.txt")); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	err = a.WriteTo(context.Background(), &buf)
	if err == nil {
		t.Fatal("WriteTo with a planned file gone succeeded")
	}
	if _, zerr := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len())); zerr == nil {
		t.Error("the cut-off archive reads as a whole zip")
	}
}

// Archives are per user: bob's archive of the workspace holds none of
// alice's files.
func TestArchiveUserIsolation(t *testing.T) {
	s := newTestSet(t, Options{})
	writeTree(t, workspaceDir(t, s), map[string]string{"secret.txt": "alice"})
	a, err := s.Archive(context.Background(), "bob", "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var buf bytes.Buffer
	if err := a.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	files, _ := readZip(t, buf.Bytes())
	if len(files) != 0 {
		t.Errorf("bob's archive holds %v", files)
	}
	if _, err := s.Archive(context.Background(), "bob", "secret.txt"); err == nil {
		t.Error("bob archived alice's file by its name")
	}
}
