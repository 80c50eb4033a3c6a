package lsp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wunder/wunder/internal/proc"
)

// transport is a started server: its stdio as one stream, a channel closed
// when it has exited, and its bounded stop. An in-process server (tests)
// has no pid.
type transport struct {
	rwc  io.ReadWriteCloser
	done <-chan struct{}
	// exitErr is the server's exit status; read it after done is closed.
	exitErr func() error
	// signal sends sig to the server's whole process group.
	signal func(sig syscall.Signal) error
	// stop ends the server in bounded steps, each given grace: close its
	// stdin, SIGTERM its group, SIGKILL its group ([proc.Process.Stop]).
	// It returns once the server has exited and its group was swept, or
	// an error wrapping [proc.ErrUnresponsive].
	stop func(grace time.Duration) error
	pid  int
}

// startFunc starts a server for root. The process must outlive ctx: ctx
// bounds the start only.
type startFunc func(ctx context.Context, srv ServerConfig, root string) (*transport, error)

// startProcess runs srv.Command in root under wunder's one subprocess
// policy ([proc.Start]): a process group of its own, so that a stop reaches
// the helpers a server spawns (tsserver, go list), SIGKILL if wunder dies,
// and the group swept once the server exits. Its environment is built by
// [serverEnv]; stderr is kept in a small ring for error messages.
func startProcess(_ context.Context, srv ServerConfig, root string) (*transport, error) {
	if len(srv.Command) == 0 {
		return nil, fmt.Errorf("lsp: server %s: no command", srv.ID)
	}
	// Not exec.CommandContext: the server outlives the request that starts it.
	cmd := exec.Command(srv.Command[0], srv.Command[1:]...)
	cmd.Dir = root
	cmd.Env = serverEnv(os.LookupEnv, srv.Env)
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	p, inW, outR, err := proc.StartPiped(cmd)
	if err != nil {
		return nil, fmt.Errorf("lsp: start %s: %w", srv.ID, err)
	}
	return &transport{
		rwc:  &stdio{r: outR, w: inW},
		done: p.Done(),
		exitErr: func() error {
			err := p.Err()
			if t := stderr.String(); err != nil && t != "" {
				err = fmt.Errorf("%w; stderr: %s", err, t)
			}
			return err
		},
		signal: p.Signal,
		stop:   p.Stop,
		pid:    p.Pid(),
	}, nil
}

// toolchainEnv are the variables of wunder's environment a language server
// gets besides PATH, HOME and LANG: where the toolchains it drives keep
// their caches, modules and settings (gopls runs go list; a GOMODCACHE or
// GOPROXY of the operator's must reach it, or it would download modules
// again, or fail to), and the XDG and temporary directories. Nothing else
// — no WUNDER_* variable, no API key or token — is passed on; what a server
// needs beyond this goes in its configured env.
var toolchainEnv = []string{
	"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOENV", "GOFLAGS", "GOTOOLCHAIN",
	"GOPROXY", "GONOPROXY", "GOPRIVATE", "GONOSUMDB", "GOSUMDB", "GOINSECURE",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR",
}

// serverEnv is the whole environment of a language server: [proc.Env]
// (PATH, HOME, LANG), the [toolchainEnv] variables that lookup finds, then
// the server's configured env (sorted; it wins).
func serverEnv(lookup func(string) (string, bool), extra map[string]string) []string {
	var env []string
	for _, k := range toolchainEnv {
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return proc.Env("", env...)
}

// stdio joins a child's stdout and stdin into one stream. Close closes
// both: the connection is done with the server (a stop follows).
type stdio struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (s *stdio) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *stdio) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *stdio) Close() error {
	err := s.w.Close()
	_ = s.r.Close()
	return err
}

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
