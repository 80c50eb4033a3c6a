package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary itself is the server here (see TestMain), so these tests
// exercise real pipes, process groups and signals.

func startSelf(t *testing.T, mode string, env ...string) *Worker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := ServerConfig{ID: "self", Command: []string{exe}, Env: map[string]string{"WUNDER_LSP_FAKE": mode}}
	for i := 0; i+1 < len(env); i += 2 {
		srv.Env[env[i]] = env[i+1]
	}
	o := (&Options{Timeout: 10 * time.Second}).withDefaults()
	w, err := startWorker(context.Background(), startProcess, Key{User: "u", Root: t.TempDir(), Server: "self"}, srv, &o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// procState returns the state letter of /proc/pid/stat, "" when gone.
func procState(pid int) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

func TestProcessPoliteShutdown(t *testing.T) {
	t.Parallel()
	w := startSelf(t, "normal")
	if w.PID() == 0 || w.RSS() == 0 {
		t.Errorf("pid %d rss %d, want both set", w.PID(), w.RSS())
	}
	t.Logf("idle fake server RSS: %d KiB", w.RSS()>>10)
	t0 := time.Now()
	if err := w.shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("polite shutdown took %s", time.Since(t0))
	if alive(w.PID()) {
		t.Error("server still running")
	}
}

func TestProcessStubbornIsKilled(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	w := startSelf(t, "stubborn", "WUNDER_LSP_CHILD_PIDFILE", pidFile)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(data))
	if !alive(child) {
		t.Fatalf("helper %d not running", child)
	}
	t0 := time.Now()
	if err := w.shutdown(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Logf("shutdown of a server ignoring shutdown/exit/SIGTERM took %s", time.Since(t0))
	if alive(w.PID()) {
		t.Error("server still running after SIGKILL")
	}
	// The helper got SIGKILL with its group. It dies when next scheduled
	// and stays a zombie until its new parent reaps it, so poll its state
	// (bounded) rather than kill(0).
	deadline := time.Now().Add(10 * time.Second)
	for st := procState(child); st != "" && st != "Z" && st != "X"; st = procState(child) {
		if time.Now().After(deadline) {
			t.Fatalf("helper %d in the server's process group survived: state %s", child, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Call(context.Background(), "textDocument/hover", nil, nil); err == nil {
		t.Error("call on a stopped worker succeeded")
	}
}

func TestProcessCrashIsNoticed(t *testing.T) {
	t.Parallel()
	w := startSelf(t, "normal")
	if err := syscall.Kill(w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.watched
	if w.alive() || w.Err() == nil {
		t.Errorf("alive %v err %v after SIGKILL", w.alive(), w.Err())
	}
	if err := w.Call(context.Background(), "textDocument/hover", nil, nil); !errors.Is(err, ErrCrashed) {
		t.Errorf("call after the crash: %v, want ErrCrashed", err)
	}
	_ = w.shutdown(time.Second)
}

func TestServerEnvDropsSecrets(t *testing.T) {
	t.Parallel()
	got := serverEnv([]string{"PATH=/bin", "WUNDER_API_KEY=k", "OPENAI_API_KEY=sk", "GITHUB_TOKEN=t", "HOME=/h", "DB_PASSWORD=p"},
		map[string]string{"GOFLAGS": "-mod=mod"})
	want := []string{"PATH=/bin", "HOME=/h", "GOFLAGS=-mod=mod"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("serverEnv = %q, want %q", got, want)
	}
}
