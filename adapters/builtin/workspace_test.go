package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

var testDeny = []string{".env", "**/*.pem", ".git/**", "secrets"}

// escapeFixture builds a workspace with the usual escape routes: symlinks
// to /etc, to /etc/passwd and to a directory outside holding secret.txt, an
// inside symlink, a symlink to a denied file and a dangling one.
func escapeFixture(t testing.TB) (s *Set, ws *Workspace, dir, outside string) {
	t.Helper()
	s = newTestSet(t, Options{DenyGlobs: testDeny, AllowCommands: []string{"python3", "echo", "env", "tool.py"}})
	dir = workspaceDir(t, s)
	outside = t.TempDir()
	writeTree(t, outside, map[string]string{"secret.txt": "TOP SECRET\n"})
	writeTree(t, dir, map[string]string{
		"a.txt":          "alpha\n",
		"sub/b.txt":      "bravo\n",
		".env":           "TOKEN=x\n",
		"keys/id.pem":    "PEM\n",
		".git/config":    "[core]\n",
		"secrets/s.txt":  "hidden\n",
		"docs/readme.md": "read me\n",
	})
	symlink(t, "/etc", filepath.Join(dir, "etc_link"))
	symlink(t, "/etc/passwd", filepath.Join(dir, "passwd_link"))
	symlink(t, outside, filepath.Join(dir, "out_dir"))
	symlink(t, "sub", filepath.Join(dir, "in_link"))
	symlink(t, filepath.Join(dir, "sub", "b.txt"), filepath.Join(dir, "abs_in_link"))
	symlink(t, ".env", filepath.Join(dir, "env_link"))
	symlink(t, "nowhere/x", filepath.Join(dir, "dangling"))
	ws, err := s.Workspace(testUser)
	if err != nil {
		t.Fatal(err)
	}
	return s, ws, dir, outside
}

func TestResolve(t *testing.T) {
	_, ws, dir, _ := escapeFixture(t)
	tests := []struct {
		in      string
		want    string // relative to dir, when ok
		wantErr error  // sentinel, when not ok
		msg     string
	}{
		{in: "", want: "."},
		{in: ".", want: "."},
		{in: "a.txt", want: "a.txt"},
		{in: "sub/../a.txt", want: "a.txt"},
		{in: "new/dir/file.txt", want: "new/dir/file.txt"},
		{in: "in_link/b.txt", want: "sub/b.txt"},
		{in: "in_link/new.txt", want: "sub/new.txt"},
		{in: "abs_in_link", want: "sub/b.txt"},
		{in: ".envrc", want: ".envrc"},
		{in: "sub/.env", want: "sub/.env"}, // ".env" is relative to the root
		{in: "../x", wantErr: orchestrator.ErrInvalidArgument, msg: "escapes"},
		{in: "a/../../x", wantErr: orchestrator.ErrInvalidArgument, msg: "escapes"},
		{in: "..", wantErr: orchestrator.ErrInvalidArgument, msg: "escapes"},
		{in: "/etc/passwd", wantErr: orchestrator.ErrInvalidArgument, msg: "absolute"},
		{in: "a\x00b", wantErr: orchestrator.ErrInvalidArgument, msg: "NUL"},
		{in: "etc_link", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: "etc_link/passwd", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: "passwd_link", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: "out_dir", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: "out_dir/secret.txt", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: "out_dir/new.txt", wantErr: orchestrator.ErrPermissionDenied, msg: "outside"},
		{in: ".env", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "./.env", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "env_link", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "keys/id.pem", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "deep/er/new.pem", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: ".git", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: ".git/config", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "secrets/s.txt", wantErr: orchestrator.ErrPermissionDenied, msg: "denied"},
		{in: "dangling", msg: "points to nothing"},
		{in: "dangling/y", msg: "points to nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ws.Resolve(tt.in)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("Resolve(%q): %v", tt.in, err)
				}
				if want := filepath.Join(dir, filepath.FromSlash(tt.want)); got != want {
					t.Fatalf("Resolve(%q) = %q, want %q", tt.in, got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.in, got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Resolve(%q) error %v, want %v", tt.in, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Resolve(%q) error %q lacks %q", tt.in, err, tt.msg)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("error leaks the workspace path: %v", err)
			}
		})
	}
}

func TestUserIDValidation(t *testing.T) {
	s := newTestSet(t, Options{})
	// "a..b" is one path element, not "..": it gets a workspace like any
	// other id (issue 9: it used to get no tools at all).
	good := []string{"alice", "wunder", "a.b@example.com", "用户_1", "a-b_c", "x..y", "...", "a..b"}
	bad := []string{"", ".", "..", "../x", "a/b", `a\b`, "a\x00b", "tab\tid", "del\x7f", "c1\u0085", strings.Repeat("u", 129), "\xff"}
	for _, id := range good {
		if _, err := s.Tools(context.Background(), id); err != nil {
			t.Errorf("Tools(%q): %v", id, err)
		}
		ws, err := s.Workspace(id)
		if err != nil {
			t.Errorf("Workspace(%q): %v", id, err)
			continue
		}
		if filepath.Dir(ws.Dir()) != filepath.Clean(s.opts.Root) || filepath.Base(ws.Dir()) != id {
			t.Errorf("Workspace(%q).Dir() = %s; want one element below %s", id, ws.Dir(), s.opts.Root)
		}
	}
	for _, id := range bad {
		if _, err := s.Tools(context.Background(), id); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Tools(%q) = %v, want ErrInvalidArgument", id, err)
		}
		if _, err := s.Summary(context.Background(), id); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Summary(%q) = %v, want ErrInvalidArgument", id, err)
		}
	}
	// Nothing was created outside the root by the bad ids.
	entries, err := os.ReadDir(filepath.Dir(s.opts.Root))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "x" {
			t.Errorf("a bad user id created %s", e.Name())
		}
	}
}

func TestWorkspaceCreatedOnFirstUse(t *testing.T) {
	s := newTestSet(t, Options{})
	if _, err := s.Tools(context.Background(), "bob"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.opts.Root, "bob")
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Tools created the workspace: %v", err)
	}
	ws, _ := s.Workspace("bob")
	if _, err := ws.Resolve("x.txt"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("workspace not created: %v", err)
	}
	if perm := info.Mode().Perm(); perm&^0o750 != 0 {
		t.Errorf("workspace mode %v, want at most 0750", perm)
	}
}

// FuzzResolve checks that no input resolves outside the workspace, even
// with symlinks to the outside present.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{
		"", ".", "a.txt", "../x", "a/../../x", "/etc/passwd", "a\x00b", "etc_link/passwd",
		"out_dir/secret.txt", "in_link/../..", "in_link/../../x", "sub/./../../", "//x", `..\x`,
		"dangling", "a.txt/..", "sub/b.txt/../../..", "....//x", "~/x", ".git/../.env",
	} {
		f.Add(seed)
	}
	_, ws, dir, _ := escapeFixture(f)
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ws.Resolve(in)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(dir, got)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			t.Fatalf("Resolve(%q) = %q, outside %q", in, got, dir)
		}
		// Whatever exists of the result must really be inside too.
		p := got
		for {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				if r, _ := filepath.Rel(dir, real); r == ".." || strings.HasPrefix(r, "../") {
					t.Fatalf("Resolve(%q) = %q, which leads to %q", in, got, real)
				}
				break
			}
			p = filepath.Dir(p)
		}
		if ws.denied(filepath.ToSlash(rel)) {
			t.Fatalf("Resolve(%q) = %q, a denied path", in, got)
		}
	})
}
