package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/bwrap"
)

// The data directory is wunder's user's alone, and the sandbox works
// beneath a directory the sandbox user cannot enter.

func fileMode(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// TestWorkspaceDataDirModes: a new data directory is 0700 and its
// database files 0600; an install an older wunder left open is tightened
// at the next start: the directory, its config directory, the override
// file and the database.
func TestWorkspaceDataDirModes(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	cfg := config.Default()
	cfg.DataDir = data
	_, stop := serveConfig(t, cfg)
	db := filepath.Join(data, "wunder.db")
	if m := fileMode(t, data); m != 0o700 {
		t.Errorf("a new data dir is %04o, want 0700", m)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		if m := fileMode(t, p); m != 0o600 {
			t.Errorf("%s is %04o, want 0600", filepath.Base(p), m)
		}
	}
	stop()

	override := config.OverridePath(data)
	writeFile(t, override, "# revision: 1\n")
	for p, m := range map[string]os.FileMode{data: 0o755, filepath.Dir(override): 0o755, override: 0o644, db: 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	cfg = config.Default()
	cfg.DataDir = data
	serveConfig(t, cfg)
	for p, want := range map[string]os.FileMode{data: 0o700, filepath.Dir(override): 0o700, override: 0o600, db: 0o600} {
		if m := fileMode(t, p); m != want {
			t.Errorf("%s is %04o after a restart, want %04o", p, m, want)
		}
	}
}

// TestWorkspacePrepareDataDirLogs: every change is logged with the path
// and both modes; a file of another user is left alone.
func TestWorkspacePrepareDataDirLogs(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	cfg := config.Default()
	cfg.DataDir = data
	writeFile(t, filepath.Join(data, "config", "jwt.key"), "k")
	writeFile(t, filepath.Join(data, "config", "notes.txt"), "not a secret")
	for p, m := range map[string]os.FileMode{data: 0o751, filepath.Join(data, "config", "jwt.key"): 0o644, filepath.Join(data, "config", "notes.txt"): 0o644} {
		if err := os.Chmod(p, m); err != nil {
			t.Fatal(err)
		}
	}
	var logged bytes.Buffer
	if err := prepareDataDir(cfg, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"path=" + data + " from=0751 to=0700", "path=" + filepath.Join(data, "config", "jwt.key") + " from=0644 to=0600"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logged.String())
		}
	}
	if m := fileMode(t, filepath.Join(data, "config", "notes.txt")); m != 0o644 {
		t.Errorf("notes.txt, no secret, became %04o", m)
	}
}

// TestWorkspaceSandboxUnderPrivateParent: wunder keeps its data under a
// 0700 directory (as root's home is) and a run's command runs in the
// bubblewrap sandbox all the same, in its workspace, as the sandbox user.
func TestWorkspaceSandboxUnderPrivateParent(t *testing.T) {
	bwrap.Need(t, "the sandbox under a private parent")
	home := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(filepath.Join(home, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, "x", "data")
	s := startServer(t, func(c *config.Config) {
		c.DataDir = data
		c.Sandbox.Mode = config.SandboxBwrap
		c.Security.AllowCommands = []string{"python3"}
	})
	var out struct{ Answer string }
	body := `{"user_id":"rooted","question":"run: python3 -c \"import os; open('made.txt','w').write('made'); print('uid', os.getuid(), os.getcwd())\"","tool_names":["execute_command"],"stream":false}`
	if code := postJSON(t, s.url+"/wunder", body, &out); code != 200 {
		t.Fatalf("POST /wunder = %d", code)
	}
	want := "uid 65534 /workspace"
	if os.Geteuid() != 0 {
		want = "uid " + strconv.Itoa(os.Geteuid()) + " /workspace"
	}
	if !strings.Contains(out.Answer, "exit code 0") || !strings.Contains(out.Answer, want) {
		t.Fatalf("the command under a 0700 parent answered %q; want exit code 0 and %q", out.Answer, want)
	}
	if got := readFileT(t, filepath.Join(data, "workspaces", "rooted", "made.txt")); got != "made" {
		t.Errorf("made.txt = %q", got)
	}
	if m := fileMode(t, home); m != 0o700 {
		t.Errorf("the private parent became %04o", m)
	}
}
