package lsp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// transport is a started server: its stdio as one stream, a channel closed
// when it has exited, and the signals of the bounded shutdown. An in-process
// server (tests) has no pid and no-op signals.
type transport struct {
	rwc  io.ReadWriteCloser
	done <-chan struct{}
	// exitErr is the server's exit status; read it after done is closed.
	exitErr func() error
	// signal sends sig to the server's whole process group.
	signal func(sig syscall.Signal) error
	pid    int
}

// startFunc starts a server for root. The process must outlive ctx: ctx
// bounds the start only.
type startFunc func(ctx context.Context, srv ServerConfig, root string) (*transport, error)

// startProcess runs srv.Command in root, in a process group of its own (so
// that shutdown reaches the helpers a server spawns, such as tsserver), with
// srv.Env added to the environment and stderr kept in a small ring for
// error messages.
func startProcess(_ context.Context, srv ServerConfig, root string) (*transport, error) {
	if len(srv.Command) == 0 {
		return nil, fmt.Errorf("lsp: server %s: no command", srv.ID)
	}
	// Not exec.CommandContext: the server outlives the request that starts it.
	cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
	cmd.Dir = root
	cmd.Env = serverEnv(os.Environ(), srv.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lsp: start %s: %w", srv.ID, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() { // owned by the transport: ends when the process does
		waitErr = cmd.Wait()
		if t := stderr.String(); waitErr != nil && t != "" {
			waitErr = fmt.Errorf("%w; stderr: %s", waitErr, t)
		}
		close(done)
	}()
	pid := cmd.Process.Pid
	return &transport{
		rwc:     &stdio{r: stdout, w: stdin},
		done:    done,
		exitErr: func() error { return waitErr },
		signal: func(sig syscall.Signal) error {
			return syscall.Kill(-pid, sig)
		},
		pid: pid,
	}, nil
}

// serverEnv is the gateway's environment without its secrets (WUNDER_*
// variables and anything named like a key, token, secret or password), plus
// extra. A language server needs PATH, HOME, GOPATH and the like, not the
// gateway's credentials.
func serverEnv(environ []string, extra map[string]string) []string {
	env := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if strings.HasPrefix(upper, "WUNDER_") || strings.Contains(upper, "API_KEY") || strings.Contains(upper, "TOKEN") ||
			strings.Contains(upper, "SECRET") || strings.Contains(upper, "PASSWORD") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// stdio joins a child's stdout and stdin into one stream. Close closes
// stdin only: stdout is drained by the reader until the child exits.
type stdio struct {
	r io.Reader
	w io.WriteCloser
}

func (s *stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *stdio) Close() error                { return s.w.Close() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// groupRSS returns the resident memory, in bytes, of every process in the
// process group pgid, read from /proc; 0 where /proc is not available.
func groupRSS(pgid int) int64 {
	if pgid <= 0 {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pid != pgid && processGroup(pid) != pgid {
			continue
		}
		total += processRSS(pid)
	}
	return total
}

// processGroup returns field 5 (pgrp) of /proc/pid/stat, or -1.
func processGroup(pid int) int {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return -1
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return -1
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return -1
	}
	return g
}

// processRSS returns VmRSS of /proc/pid/status in bytes, or 0.
func processRSS(pid int) int64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// errUnresponsive is reported when a server survives SIGKILL's grace time.
var errUnresponsive = errors.New("lsp: unresponsive subprocess")
