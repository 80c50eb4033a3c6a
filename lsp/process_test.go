package lsp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// startWithHelper starts the fake server in mode with a helper process in
// its group; it returns the worker and the helper's pid.
func startWithHelper(t *testing.T, mode string) (*Worker, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	w := startSelf(t, mode, "WUNDER_LSP_CHILD_PIDFILE", pidFile)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(data))
	if !alive(child) {
		t.Fatalf("helper %d not running", child)
	}
	return w, child
}

// waitGone waits until pid is gone or a zombie. A killed process dies when
// next scheduled and stays a zombie until its new parent reaps it, so its
// state is polled (bounded) rather than kill(0).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for st := procState(pid); st != "" && st != "Z" && st != "X"; st = procState(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s %d survived: state %s", what, pid, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	w, child := startWithHelper(t, "stubborn")
	t0 := time.Now()
	if err := w.shutdown(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Logf("shutdown of a server ignoring shutdown/exit/SIGTERM took %s", time.Since(t0))
	if alive(w.PID()) {
		t.Error("server still running after SIGKILL")
	}
	// It took SIGKILL: the fake did not give up on its own.
	var exit *exec.ExitError
	if err := w.t.exitErr(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("server's exit: %v, want killed by SIGKILL", err)
	}
	waitGone(t, child, "helper in the server's process group")
	if err := w.Call(context.Background(), "textDocument/hover", nil, nil); err == nil {
		t.Error("call on a stopped worker succeeded")
	}
}

// A server that exits politely on its own leaves no helper behind: its
// group is swept once it has exited.
func TestProcessHelpersDieWithPoliteServer(t *testing.T) {
	t.Parallel()
	w, child := startWithHelper(t, "normal")
	if err := w.shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitGone(t, child, "helper of a server that exited")
}

func TestProcessCrashIsNoticed(t *testing.T) {
	t.Parallel()
	w, child := startWithHelper(t, "normal")
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
	// Only the leader was killed; its helper goes with its group.
	waitGone(t, child, "helper of a crashed server")
	_ = w.shutdown(time.Second)
}

func TestServerEnvIsBuilt(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GOPATH": "/go", "GOFLAGS": "-mod=readonly", "WUNDER_API_KEY": "k", "OPENAI_API_KEY": "sk",
		"GITHUB_TOKEN": "t", "DB_PASSWORD": "p", "XDG_CACHE_HOME": "/cache"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := serverEnv(lookup, map[string]string{"GOFLAGS": "-mod=mod", "NODE_OPTIONS": "--max-old-space-size=512"})
	want := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=" + firstNonEmpty(os.Getenv("LANG"), "C.UTF-8"),
		"GOPATH=/go", "GOFLAGS=-mod=mod", "XDG_CACHE_HOME=/cache", "NODE_OPTIONS=--max-old-space-size=512"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("serverEnv (-want +got):\n%s", diff)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A real server process sees the built environment and nothing else of
// wunder's.
func TestProcessEnvironment(t *testing.T) {
	// Not parallel: it sets variables of the test process, which plays wunder.
	t.Setenv("WUNDER_CONFIG_PATH", "/etc/wunder.yaml")
	t.Setenv("WUNDER_API_KEY", "admin-key")
	t.Setenv("GITHUB_TOKEN", "ghp-secret")
	t.Setenv("GOFLAGS", "-mod=mod")
	w := startSelf(t, "env", "LSP_EXTRA", "configured")
	defer w.shutdown(5 * time.Second)
	var res struct{ Contents string }
	if err := w.Call(context.Background(), "textDocument/hover", map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range strings.Split(res.Contents, "\n") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for _, k := range []string{"WUNDER_CONFIG_PATH", "WUNDER_API_KEY", "GITHUB_TOKEN"} {
		if _, ok := got[k]; ok {
			t.Errorf("the server sees %s", k)
		}
	}
	if got["GOFLAGS"] != "-mod=mod" || got["LSP_EXTRA"] != "configured" || got["PATH"] != os.Getenv("PATH") || got["HOME"] == "" {
		t.Errorf("environment %v: want GOFLAGS, LSP_EXTRA, PATH and HOME", got)
	}
	for k := range got {
		if !slices.Contains(toolchainEnv, k) && !slices.Contains([]string{"PATH", "HOME", "LANG", "LSP_EXTRA", "WUNDER_LSP_FAKE"}, k) {
			t.Errorf("unexpected variable %s in the server's environment", k)
		}
	}
}
