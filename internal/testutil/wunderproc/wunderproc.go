// Package wunderproc runs the real wunder binary as a child process for
// tests that must see what a production server does: its memory (peak
// RSS, read from /proc), its answers under floods, its exit. The binary is
// built once per test process without the race detector, as `make build`
// builds it, because a race-instrumented server's memory says nothing
// about a real one's.
//
//	bin := wunderproc.Build(t)
//	p := wunderproc.Start(t, bin, "server:\n  port: 0\n")
//	resp, _ := http.Get(p.URL + "/healthz")
//	t.Logf("peak RSS %d MiB", p.PeakRSS(t)>>20)
package wunderproc

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// Build compiles ./cmd/wunder (CGO_ENABLED=0, no race detector) into a
// directory that lives as long as the test process, once per process,
// and returns its path.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wunderproc-")
		if err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(dir, "wunder")
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/wunder/wunder/cmd/wunder")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build cmd/wunder: %v\n%s", err, out)
			return
		}
		buildBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// Proc is a running wunder.
type Proc struct {
	// URL is http://127.0.0.1:port.
	URL string
	// Dir is the data directory (data_dir).
	Dir    string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

// Start writes config (YAML; data_dir, server.host and server.port are
// added, so leave them out) and starts `bin serve` with it on a free
// loopback port, then waits until /readyz answers 200. The process is
// killed when the test ends; its output is logged if the test failed.
func Start(t testing.TB, bin, config string, env ...string) *Proc {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	cfg := fmt.Sprintf("data_dir: %q\nserver:\n  host: 127.0.0.1\n  port: %d\n", filepath.Join(dir, "data"), port)
	cfg += config
	path := filepath.Join(dir, "wunder.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", path)
	cmd.Env = append(os.Environ(), env...)
	p := Run(t, cmd, "http://127.0.0.1:"+strconv.Itoa(port))
	p.Dir = filepath.Join(dir, "data")
	return p
}

// Run starts cmd, a wunder server that will answer at url (a binary of its
// own, or a test binary that runs wunder's main), and waits until its
// /readyz answers 200. Its output is kept (Logs); the process is killed
// when the test ends, and its output logged if the test failed.
func Run(t testing.TB, cmd *exec.Cmd, url string) *Proc {
	t.Helper()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{URL: url, cmd: cmd, logs: logs, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("wunder (pid %d) output:\n%s", cmd.Process.Pid, logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-p.exited:
			t.Fatalf("wunder exited before it was ready:\n%s", logs.String())
		default:
		}
		resp, err := http.Get(p.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("wunder never became ready: %v\n%s", err, logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a child's start-up, not synchronising with it
	}
}

// Kill9 kills the process with SIGKILL and waits for it to exit.
func (p *Proc) Kill9(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// Alive reports whether the process is still running.
func (p *Proc) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Logs is what the process wrote so far.
func (p *Proc) Logs() string { return p.logs.String() }

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// PeakRSS is the process's peak resident set size so far in bytes
// (VmHWM). It fails the test where /proc has no such line (not Linux).
func (p *Proc) PeakRSS(t testing.TB) int64 {
	t.Helper()
	n, err := statusField(p.cmd.Process.Pid, "VmHWM:")
	if err != nil {
		t.Fatalf("peak RSS of pid %d: %v", p.cmd.Process.Pid, err)
	}
	return n
}

// RSS is the process's resident set size now in bytes (VmRSS).
func (p *Proc) RSS(t testing.TB) int64 {
	t.Helper()
	n, err := statusField(p.cmd.Process.Pid, "VmRSS:")
	if err != nil {
		t.Fatalf("RSS of pid %d: %v", p.cmd.Process.Pid, err)
	}
	return n
}

// NeedLinux skips t where /proc/<pid>/status does not exist.
func NeedLinux(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("peak RSS is read from /proc: linux only, not %s", runtime.GOOS)
	}
}

// statusField reads a "Vm...:   123 kB" line of /proc/pid/status.
func statusField(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field)
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q: %w", field, rest, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line", field)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for the process's writers and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
