package proc_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/proc"
)

// gone waits (bounded) until pid has died: SIGKILL is delivered
// asynchronously, so the test waits for its effect.
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func alive(pid int) bool {
	// A zombie still answers signal 0; read its state instead.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// waitFile waits for a file a child writes, bounded: the children are
// synchronised with through the file system, not by sleeping.
func waitFile(t *testing.T, p string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(p); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s was never written", p)
	return ""
}

func TestEnvIsBuiltNotInherited(t *testing.T) {
	t.Setenv("WUNDER_API_KEY", "secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("LANG", "")
	env := proc.Env("/ws", "FOO=1", "PATH=/opt/bin", "FOO=2")
	want := []string{"PATH=/opt/bin", "HOME=/ws", "LANG=C.UTF-8", "FOO=2"}
	if strings.Join(env, " ") != strings.Join(want, " ") {
		t.Fatalf("Env = %q, want %q", env, want)
	}
}

func TestStopEndsTheWholeGroupPolitely(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	// The leader starts a child in its group, then reads stdin: closing
	// stdin ends the leader, and the sweep ends the child.
	cmd := exec.Command("sh", "-c", `sleep 60 & echo $! > "$1"; cat >/dev/null`, "sh", pidFile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := proc.Start(cmd, stdin)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(waitFile(t, pidFile))
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !p.State().Exited() || p.State().ExitCode() != 0 {
		t.Fatalf("leader did not exit on its own after stdin closed: %v", p.State())
	}
	if !gone(child) {
		t.Fatalf("grandchild %d outlived the stop", child)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ok > "$1"; while :; do sleep 1; done`, "sh", ready)
	p, err := proc.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFile(t, ready)
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ws, _ := p.State().Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("a process ignoring SIGTERM ended with %v, want SIGKILL", p.State())
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestExitedLeaderLeavesNoGroupMember(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	cmd := exec.Command("sh", "-c", `sleep 60 >/dev/null 2>&1 & echo $! > "$1"`, "sh", pidFile)
	p, err := proc.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	child, _ := strconv.Atoi(waitFile(t, pidFile))
	if !gone(child) {
		t.Fatalf("child %d of an exited leader is still running", child)
	}
	if err := p.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

func TestKillGroupOfNothingIsNotAnError(t *testing.T) {
	if err := proc.KillGroup(0); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("true")
	p, err := proc.Start(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if err := proc.KillGroup(p.Pid()); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatal(err)
	}
}
