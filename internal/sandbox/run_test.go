package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/bwrap"

	"github.com/wunder/wunder/internal/sandbox"
)

// needBwrap is bwrap.Need for this package's tests.
func needBwrap(t *testing.T) { bwrap.Need(t, "the sandbox tests") }

// workspace returns a new workspace directory under t.TempDir, whose
// parents are 0700: the sandbox identity cannot pass through them.
func workspace(t *testing.T, s *sandbox.Sandbox) string {
	t.Helper()
	root := t.TempDir()
	if err := s.PrepareRoot(root); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "alice")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	return ws
}

// lockedBuffer is an io.Writer for both output streams.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// run runs argv in ws/dir and returns the output and exit code; a run
// longer than limit is stopped (the guard only turns a hang into a failure).
func run(t *testing.T, s *sandbox.Sandbox, ws, dir string, argv ...string) (string, int) {
	t.Helper()
	var out lockedBuffer
	p, err := s.Start(sandbox.Command{
		Workspace: ws, Dir: dir, Args: argv, Stdout: &out, Stderr: &out,
		Env: []string{"PATH=" + s.Path(os.Getenv("PATH")), "HOME=/workspace", "LANG=C.UTF-8"},
	})
	if err != nil {
		t.Fatalf("Start %q: %v", argv, err)
	}
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		_ = p.Stop(time.Second)
		t.Fatalf("%q did not end within 60s; output:\n%s", argv, out.String())
	}
	return out.String(), p.State().ExitCode()
}

func TestRunsUnprivilegedInItsWorkspace(t *testing.T) {
	needBwrap(t)
	t.Setenv("WUNDER_TEST_SECRET", "s3cret")
	s := sandbox.New(nil)
	ws := workspace(t, s)
	script := `id -u; pwd; echo "home=$HOME"; env | sort | cut -d= -f1 | tr '\n' ' '; echo;
echo made > made.txt; ls /; cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ || echo shadow-denied`
	out, code := run(t, s, ws, "sub", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] == "0" {
		t.Errorf("the command ran as root:\n%s", out)
	}
	if os.Geteuid() == 0 && lines[0] != "65534" {
		t.Errorf("uid %s, want the sandbox identity 65534", lines[0])
	}
	for _, want := range []string{"/workspace/sub\n", "home=/workspace\n", "HOME LANG PATH PWD \n", "shadow-denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, leak := range []string{"s3cret", "WUNDER", "SHADOW-READ", "alice", "root\n", "home\n"} {
		if strings.Contains(out, leak) {
			t.Errorf("output shows %q:\n%s", leak, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(ws, "sub", "made.txt"))
	if err != nil || string(b) != "made\n" {
		t.Errorf("the file the command wrote is not in the workspace: %q %v", b, err)
	}
}

func TestLimitsHold(t *testing.T) {
	needBwrap(t)
	opts := sandbox.Options{Pids: 16, MemoryMB: 64}
	t.Run("detected", func(t *testing.T) {
		s := sandbox.New(&opts)
		t.Logf("limits by %s", s.Limits())
		ws := workspace(t, s)
		if strings.HasPrefix(s.Limits(), "cgroup") {
			out, _ := run(t, s, ws, "", "cat", "/proc/self/cgroup")
			if !strings.Contains(out, "wunder-sandbox/call-") {
				t.Errorf("the command is not in its call's cgroup:\n%s", out)
			}
		}
		testLimits(t, s, ws)
	})
	t.Run("rlimit", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("RLIMIT_NPROC counts wunder's own uid here, shared with every process of the user: no exact bound to check")
		}
		// No cgroup hierarchy at all: the fallback. RLIMIT_NPROC counts
		// per uid machine-wide, so this test uses a uid of its own, which
		// no concurrent sandbox shares.
		opts := opts
		opts.UID, opts.GID = 64999, 64999
		s := sandbox.NewWithCgroups(opts, t.TempDir(), filepath.Join(t.TempDir(), "none"))
		if s.Limits() != "rlimit" {
			t.Fatalf("Limits() = %q without cgroups", s.Limits())
		}
		testLimits(t, s, workspace(t, s))
	})
}

func testLimits(t *testing.T, s *sandbox.Sandbox, ws string) {

	// Processes: try to hold 100 children at once.
	forks := `import os, time
n = 0
kids = []
for i in range(100):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), flush=True)
for k in kids:
    os.kill(k, 9)
`
	out, _ := run(t, s, ws, "", "python3", "-c", forks)
	var n int
	if _, err := fmtSscan(out, "forked %d", &n); err != nil {
		t.Fatalf("no count in output:\n%s", out)
	}
	if n >= 16 {
		t.Errorf("held %d processes at once, limit 16", n)
	}

	// Memory: 256 MiB must not fit in 64 MiB; 8 MiB must.
	alloc := `import sys
b = bytearray(int(sys.argv[1]) << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("allocated", sys.argv[1], flush=True)
`
	if out, code := run(t, s, ws, "", "python3", "-c", alloc, "8"); code != 0 || !strings.Contains(out, "allocated 8") {
		t.Errorf("8 MiB under a 64 MiB limit: exit %d\n%s", code, out)
	}
	if out, code := run(t, s, ws, "", "python3", "-c", alloc, "256"); code == 0 || strings.Contains(out, "allocated 256") {
		t.Errorf("256 MiB under a 64 MiB limit succeeded: exit %d\n%s", code, out)
	}
}

// TestRunsUnderPrivateParents is the server that keeps its data under
// /root (0700): the workspace's parents are closed to the sandbox user,
// and the command runs all the same, in its workspace, as that user,
// holding no descriptor of the host's directories; the parents stay as
// they were.
func TestRunsUnderPrivateParents(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("only a sandbox identity other than wunder's needs to reach the workspace")
	}
	home := filepath.Join(t.TempDir(), "root") // t.TempDir is 0700 too
	root := filepath.Join(home, "x", "data", "workspaces")
	ws := filepath.Join(root, "alice")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home, filepath.Join(home, "x"), filepath.Join(home, "x", "data")} {
		if err := os.Chmod(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s := sandbox.New(nil)
	if _, err := exec.LookPath("setpriv"); err != nil || !sandbox.CapSysAdmin("/proc/self/status") {
		t.Skipf("!!! SKIPPED: staging needs setpriv (%v) and CAP_SYS_ADMIN", err)
	}
	if !s.Staged() {
		t.Fatal("root with setpriv and CAP_SYS_ADMIN, yet calls are not staged")
	}
	if err := s.PrepareRoot(root); err != nil {
		t.Fatal(err)
	}
	// Descriptors the test process inherited without close-on-exec reach
	// the command too; the staged directories must not.
	script := `id -u; pwd; echo made > made.txt; for f in /proc/self/fd/*; do [ -d "$f" ] && printf 'dirfd:%s ' "$f"; done; echo; grep CapEff /proc/self/status`
	out, code := run(t, s, ws, "sub", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d under a 0700 parent:\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 4 || lines[0] != "65534" || lines[1] != "/workspace/sub" {
		t.Fatalf("want uid 65534 in /workspace/sub:\n%s", out)
	}
	if lines[2] != "" {
		t.Errorf("the command holds directory descriptors: %s", lines[2])
	}
	if !strings.Contains(lines[3], "0000000000000000") {
		t.Errorf("the command has capabilities: %s", lines[3])
	}
	b, err := os.ReadFile(filepath.Join(ws, "sub", "made.txt"))
	if err != nil || string(b) != "made\n" {
		t.Errorf("the file the command wrote is not in the workspace: %q %v", b, err)
	}
	if uid, _ := owner(t, filepath.Join(ws, "sub", "made.txt")); uid != 65534 {
		t.Errorf("made.txt is owned by %d, want the sandbox user", uid)
	}
	for _, d := range []string{home, filepath.Join(home, "x"), filepath.Join(home, "x", "data"), root} {
		info, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if m := info.Mode().Perm(); m&0o007 != 0 {
			t.Errorf("%s was opened to others: mode %04o", d, m)
		}
	}
}

// TestUnsearchableParentIsExplained: without setpriv, bwrap must reach the
// workspace by its path as the sandbox user, and a parent it cannot
// search is refused with what to do.
func TestUnsearchableParentIsExplained(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("only a sandbox identity other than wunder's needs to search the parents")
	}
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no setpriv (nor prlimit: the cgroup limiters need none)
	s := sandbox.New(&sandbox.Options{Bwrap: bw})
	if s.Check() != nil {
		t.Skipf("without prlimit this host has no limiter: %v", s.Check())
	}
	ws := filepath.Join(t.TempDir(), "alice") // the temp dir is 0700
	if err := os.MkdirAll(ws, 0o750); err != nil {
		t.Fatal(err)
	}
	_, err = s.Start(sandbox.Command{Workspace: ws, Args: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "is not searchable by the sandbox user") || !strings.Contains(err.Error(), "setpriv") {
		t.Fatalf("Start = %v, want an explanation", err)
	}
}

// TestMaxFileBytesBoundsAFile: a command cannot make a file larger than
// Command.MaxFileBytes, in the workspace or in /tmp.
func TestMaxFileBytesBoundsAFile(t *testing.T) {
	needBwrap(t)
	s := sandbox.New(nil)
	ws := workspace(t, s)
	var out lockedBuffer
	p, err := s.Start(sandbox.Command{
		Workspace: ws, MaxFileBytes: 1 << 20, Stdout: &out, Stderr: &out,
		Args: []string{"sh", "-c", `head -c 3000000 /dev/zero > big; echo "rc=$?"; head -c 3000000 /dev/zero > /tmp/t; wc -c < /tmp/t`},
		Env:  []string{"PATH=" + s.Path(os.Getenv("PATH"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		_ = p.Stop(time.Second)
		t.Fatalf("did not end within 60s:\n%s", out.String())
	}
	if strings.Contains(out.String(), "rc=0") {
		t.Errorf("writing 3 MB under a 1 MiB file limit succeeded:\n%s", out.String())
	}
	info, err := os.Stat(filepath.Join(ws, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 1<<20 {
		t.Errorf("big is %d bytes, over the 1 MiB limit", info.Size())
	}
	if !strings.Contains(out.String(), "1048576") {
		t.Errorf("/tmp/t is not cut at the limit either:\n%s", out.String())
	}
}
