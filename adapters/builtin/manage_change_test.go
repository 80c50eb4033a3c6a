package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace API's writes (manage_write.go) on a real directory: what
// each changes, what it refuses, and that a refusal changes nothing.

// tree lists every path under dir (slash-separated, directories with a
// trailing slash, symlinks with @), sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			rel += "@"
		case d.IsDir():
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func wantTree(t *testing.T, what, dir string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Errorf("%s: tree = %q; want %q", what, got, want)
	}
}

func TestManageMkdir(t *testing.T) {
	s := newTestSet(t, Options{DenyGlobs: testDeny})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"f.txt": "x"})
	ctx := context.Background()
	if err := s.Mkdir(ctx, testUser, "a/b/c"); err != nil {
		t.Fatal(err)
	}
	if err := s.Mkdir(ctx, testUser, "a/b"); err != nil {
		t.Errorf("Mkdir of an existing directory = %v; want nil", err)
	}
	if err := s.Mkdir(ctx, testUser, ""); err != nil {
		t.Errorf("Mkdir of the workspace = %v; want nil", err)
	}
	for _, rel := range []string{"f.txt", "f.txt/under"} {
		if err := s.Mkdir(ctx, testUser, rel); !errors.Is(err, orchestrator.ErrConflict) && !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Mkdir(%q) with a file in the way = %v; want a conflict or a bad path", rel, err)
		}
	}
	if err := s.Mkdir(ctx, testUser, "secrets/new"); !errors.Is(err, orchestrator.ErrPermissionDenied) {
		t.Errorf("Mkdir under a denied directory = %v; want ErrPermissionDenied", err)
	}
	wantTree(t, "after Mkdir", dir, "a/", "a/b/", "a/b/c/", "f.txt")
}

func TestManageWriteFile(t *testing.T) {
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"old.sh": "#!/bin/sh\n", "d/keep": ""})
	if err := os.Chmod(filepath.Join(dir, "old.sh"), 0o751); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	write := func(rel, data string, create bool) (FileInfo, error) {
		return s.WriteFile(ctx, testUser, rel, strings.NewReader(data), create)
	}
	if _, err := write("new.txt", "x", false); !errors.Is(err, orchestrator.ErrNotFound) || !strings.Contains(err.Error(), "create_if_missing") {
		t.Errorf("WriteFile of a missing file without create = %v; want ErrNotFound naming create_if_missing", err)
	}
	info, err := write("p/q/new.txt", "fresh", true)
	if err != nil {
		t.Fatal(err)
	}
	if info.Path != "p/q/new.txt" || info.Size != 5 || info.Type != TypeFile {
		t.Errorf("WriteFile info = %+v", info)
	}
	if got := readFile(t, filepath.Join(dir, "p/q/new.txt")); got != "fresh" {
		t.Errorf("new file = %q", got)
	}
	if _, err := write("old.sh", "#!/bin/sh\necho hi\n", false); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "old.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o751 {
		t.Errorf("rewritten file has mode %v; want the old 0751 kept", st.Mode().Perm())
	}
	if _, err := write("d", "x", true); !errors.Is(err, orchestrator.ErrConflict) {
		t.Errorf("WriteFile onto a directory = %v; want ErrConflict", err)
	}
	if _, err := write("", "x", true); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("WriteFile onto the workspace = %v; want ErrInvalidArgument", err)
	}
	if _, err := write("old.sh/x", "x", true); err == nil {
		t.Error("WriteFile under a file succeeded")
	}
	// No temporary file is left behind by any of it.
	wantTree(t, "after writes", dir, "d/", "d/keep", "old.sh", "p/", "p/q/", "p/q/new.txt")
}

// A write that would take the workspace over its quota is a *QuotaError,
// which is also a permission denial, and leaves the old file.
func TestManageWriteFileQuota(t *testing.T) {
	s := newTestSet(t, Options{MaxBytesPerUser: 100})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"a.txt": strings.Repeat("a", 60)})
	ctx := context.Background()
	_, err := s.WriteFile(ctx, testUser, "b.txt", strings.NewReader(strings.Repeat("b", 50)), true)
	var qe *QuotaError
	if !errors.As(err, &qe) || !qe.QuotaExceeded() || !errors.Is(err, orchestrator.ErrPermissionDenied) {
		t.Fatalf("WriteFile over the quota = %v; want a *QuotaError wrapping ErrPermissionDenied", err)
	}
	if qe.Limit != 100 || !strings.Contains(err.Error(), "max_bytes_per_user") {
		t.Errorf("QuotaError = %+v (%v); want limit 100 and the config key named", qe, err)
	}
	wantTree(t, "after a refused write", dir, "a.txt")
	// Rewriting a file counts only the growth: 60 -> 90 fits in 100.
	if _, err := s.WriteFile(ctx, testUser, "a.txt", strings.NewReader(strings.Repeat("c", 90)), false); err != nil {
		t.Errorf("rewriting within the quota = %v", err)
	}
	// Freed space is usable again.
	if _, err := s.Remove(ctx, testUser, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteFile(ctx, testUser, "b.txt", strings.NewReader(strings.Repeat("b", 99)), true); err != nil {
		t.Errorf("writing after a removal freed room = %v", err)
	}
}

func TestManageMove(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		src, dst string
		err      error  // nil: the move succeeds
		msg      string // in the error
		after    []string
	}{
		{name: "a file", src: "a.txt", dst: "z.txt",
			after: []string{"z.txt", "d/", "d/f", "link@", "dd/", "dd/.env"}},
		{name: "into new parents", src: "a.txt", dst: "n/m/a.txt",
			after: []string{"n/", "n/m/", "n/m/a.txt", "d/", "d/f", "link@", "dd/", "dd/.env"}},
		{name: "a directory", src: "d", dst: "e",
			after: []string{"a.txt", "e/", "e/f", "link@", "dd/", "dd/.env"}},
		// The link moves, not its target.
		{name: "a symlink", src: "link", dst: "moved",
			after: []string{"a.txt", "d/", "d/f", "moved@", "dd/", "dd/.env"}},
		{name: "onto an existing entry", src: "a.txt", dst: "d", err: orchestrator.ErrConflict, msg: "already exists"},
		{name: "onto itself", src: "a.txt", dst: "a.txt", err: orchestrator.ErrConflict},
		{name: "into itself", src: "d", dst: "d/inner", err: orchestrator.ErrInvalidArgument, msg: "d/inner is inside d"},
		{name: "the workspace", src: "", dst: "x", err: orchestrator.ErrInvalidArgument, msg: "workspace itself"},
		{name: "onto the workspace", src: "a.txt", dst: ".", err: orchestrator.ErrConflict},
		{name: "a missing source", src: "ghost", dst: "x", err: orchestrator.ErrNotFound, msg: "ghost"},
		// dd holds .env: moving dd would take .env where ".env" no longer
		// matches.
		{name: "a directory holding denied entries", src: "dd", dst: "free", err: orchestrator.ErrPermissionDenied, msg: "denied"},
		{name: "onto a denied name", src: "a.txt", dst: ".env", err: orchestrator.ErrPermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSet(t, Options{DenyGlobs: []string{"**/.env"}})
			dir := workspaceDir(t, s)
			writeTree(t, dir, map[string]string{"a.txt": "A", "d/f": "F", "dd/.env": "K=v"})
			symlink(t, "d", filepath.Join(dir, "link"))
			before := tree(t, dir)
			err := s.Move(ctx, testUser, tc.src, tc.dst)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Move(%q, %q) = %v", tc.src, tc.dst, err)
				}
				wantTree(t, "after the move", dir, tc.after...)
				return
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Move(%q, %q) = %v; want %v containing %q", tc.src, tc.dst, err, tc.err, tc.msg)
			}
			wantTree(t, "after a refused move", dir, before...)
		})
	}
}

func TestManageCopy(t *testing.T) {
	s := newTestSet(t, Options{DenyGlobs: testDeny})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{
		"src/a.txt":     "A",
		"src/sub/b.txt": "BB",
		"src/k.pem":     "denied",
		"one.txt":       "1",
	})
	symlink(t, "../one.txt", filepath.Join(dir, "src", "ln"))
	symlink(t, "src", filepath.Join(dir, "srclink"))
	ctx := context.Background()
	n, err := s.Copy(ctx, testUser, "src", "dst/copy")
	if err != nil {
		t.Fatal(err)
	}
	// src/, a.txt, sub/, sub/b.txt: the denied file and the symlink stay behind.
	if n != 4 {
		t.Errorf("Copy copied %d entries; want 4", n)
	}
	wantTree(t, "dst", filepath.Join(dir, "dst"), "copy/", "copy/a.txt", "copy/sub/", "copy/sub/b.txt")
	if got := readFile(t, filepath.Join(dir, "dst/copy/sub/b.txt")); got != "BB" {
		t.Errorf("copied content = %q", got)
	}
	// A symlink at the source is followed: the copy is of its target.
	if n, err := s.Copy(ctx, testUser, "srclink", "viaLink"); err != nil || n != 4 {
		t.Errorf("Copy(srclink) = %d, %v; want the 4 entries of src", n, err)
	}
	if st, err := os.Lstat(filepath.Join(dir, "viaLink")); err != nil || !st.IsDir() {
		t.Errorf("viaLink is %v, %v; want a directory", st, err)
	}
	if n, err := s.Copy(ctx, testUser, "one.txt", "two.txt"); err != nil || n != 1 || readFile(t, filepath.Join(dir, "two.txt")) != "1" {
		t.Errorf("Copy of a file = %d, %v", n, err)
	}
	for _, tc := range []struct {
		src, dst string
		err      error
	}{
		{"one.txt", "two.txt", orchestrator.ErrConflict},
		{"src", "src/inner", orchestrator.ErrInvalidArgument},
		{"srclink", "src/inner", orchestrator.ErrInvalidArgument}, // into itself through the link
		{"ghost", "x", orchestrator.ErrNotFound},
		{"src/k.pem", "x.pem2", orchestrator.ErrPermissionDenied},
	} {
		if _, err := s.Copy(ctx, testUser, tc.src, tc.dst); !errors.Is(err, tc.err) {
			t.Errorf("Copy(%q, %q) = %v; want %v", tc.src, tc.dst, err, tc.err)
		}
	}
}

// A copy over MaxTreeEntries or MaxTreeBytes is refused, naming the keys,
// before anything is written; so is an archive.
func TestManageTreeBounds(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"entries", Options{MaxTreeEntries: 3}},
		{"bytes", Options{MaxTreeBytes: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSet(t, tc.opts)
			dir := workspaceDir(t, s)
			writeTree(t, dir, map[string]string{"src/a": "123456", "src/b": "123456", "src/c": ""})
			_, err := s.Copy(ctx, testUser, "src", "dst")
			if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "max_tree_entries") || !strings.Contains(err.Error(), "max_tree_bytes") {
				t.Errorf("Copy over the bound = %v; want ErrInvalidArgument naming the keys", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "dst")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused copy wrote dst: %v", err)
			}
			if a, err := s.Archive(ctx, testUser, "src"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				if a != nil {
					a.Close()
				}
				t.Errorf("Archive over the bound = %v; want ErrInvalidArgument", err)
			}
		})
	}
}

func TestManageRemove(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		deny  []string
		rel   string
		kept  int
		err   error
		after []string
	}{
		{name: "a file", rel: "a.txt",
			after: []string{"d/", "d/f", "d/.env", "d/in/", "d/in/g", "link@"}},
		{name: "a symlink, not its target", rel: "link",
			after: []string{"a.txt", "d/", "d/f", "d/.env", "d/in/", "d/in/g"}},
		{name: "a directory without a policy", rel: "d",
			after: []string{"a.txt", "link@"}},
		// The denied file stays, and so does the directory holding it.
		{name: "a directory holding a denied entry", deny: []string{"**/.env"}, rel: "d", kept: 1,
			after: []string{"a.txt", "d/", "d/.env", "link@"}},
		{name: "a directory with a policy, nothing denied", deny: []string{"**/.env"}, rel: "d/in",
			after: []string{"a.txt", "d/", "d/f", "d/.env", "link@"}},
		{name: "the workspace", rel: "", err: orchestrator.ErrInvalidArgument},
		{name: "a missing entry", rel: "ghost", err: orchestrator.ErrNotFound},
		{name: "a denied entry", deny: []string{"**/.env"}, rel: "d/.env", err: orchestrator.ErrPermissionDenied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSet(t, Options{DenyGlobs: tc.deny})
			dir := workspaceDir(t, s)
			writeTree(t, dir, map[string]string{"a.txt": "A", "d/f": "F", "d/.env": "K", "d/in/g": "G"})
			symlink(t, "d", filepath.Join(dir, "link"))
			before := tree(t, dir)
			kept, err := s.Remove(ctx, testUser, tc.rel)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("Remove(%q) = %v; want %v", tc.rel, err, tc.err)
				}
				wantTree(t, "after a refused remove", dir, before...)
				return
			}
			if err != nil || kept != tc.kept {
				t.Fatalf("Remove(%q) = %d, %v; want %d kept", tc.rel, kept, err, tc.kept)
			}
			wantTree(t, "after Remove", dir, tc.after...)
		})
	}
}

func TestManageEmpty(t *testing.T) {
	ctx := context.Background()
	s := newTestSet(t, Options{DenyGlobs: testDeny})
	ws, err := s.Workspace(testUser)
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := s.Empty(ctx, testUser); err != nil || kept != 0 {
		t.Errorf("Empty of a new workspace = %d, %v", kept, err)
	}
	if _, err := os.Stat(ws.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Empty created the workspace: %v", err)
	}
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{
		"a.txt": "A", "d/e/f": "F", ".env": "K", ".git/HEAD": "ref", "keys/id.pem": "P", "keys/pub.txt": "p",
	})
	kept, err := s.Empty(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	// .env, .git (a denied tree counts once) and keys/id.pem.
	if kept != 3 {
		t.Errorf("Empty kept %d; want 3", kept)
	}
	wantTree(t, "after Empty", dir, ".env", ".git/", ".git/HEAD", "keys/", "keys/id.pem")
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Empty removed the workspace itself: %v", err)
	}
}

func TestSetEnabled(t *testing.T) {
	s := newTestSet(t, Options{})
	ctx := context.Background()
	toolNames := func() []string {
		tools, err := s.Tools(ctx, testUser)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	all := toolNames()
	if len(all) < 5 {
		t.Fatalf("all tools = %q", all)
	}
	if err := s.SetEnabled([]string{"read_file"}); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("after SetEnabled(read_file): %q", got)
	}
	err := s.SetEnabled([]string{"list_files", "rm_rf_slash"})
	if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), `"rm_rf_slash"`) {
		t.Errorf("SetEnabled with an unknown name = %v; want ErrInvalidArgument naming it", err)
	}
	if got := toolNames(); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("a refused SetEnabled changed the tools to %q", got)
	}
	if err := s.SetEnabled(nil); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(); !slices.Equal(got, all) {
		t.Errorf("SetEnabled(nil) = %q; want all %q", got, all)
	}
	for _, name := range all {
		if !Known(name) {
			t.Errorf("Known(%q) = false for an offered tool", name)
		}
	}
	if Known("rm_rf_slash") || Known("") {
		t.Error("Known accepts a name no tool has")
	}
}
