package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wunder/wunder/internal/proc"
)

// handshakeTimeout bounds how long bwrap may take to report its child.
const handshakeTimeout = 10 * time.Second

// waitDelay bounds how long the output pipes are drained after bwrap has
// exited (the PID namespace is gone by then, so nothing holds them long).
const waitDelay = 500 * time.Millisecond

// Command is one program to run in the sandbox.
type Command struct {
	// Workspace is the host directory bound read-write at [WorkspaceDir].
	Workspace string
	// Dir is the working directory, slash-separated and relative to the
	// workspace; "" is the workspace itself.
	Dir string
	// Args is argv: Args[0] is a path inside the sandbox or a name looked
	// up on Env's PATH inside the sandbox.
	Args []string
	// Env is the whole environment of the command.
	Env []string
	// Stdout and Stderr receive the command's output; nil discards it.
	// Stdin is always empty.
	Stdout, Stderr io.Writer
	// ROBinds are host directories bound read-only for this command only
	// (a skill's directory at /skill), after the workspace.
	ROBinds []Bind
	// MaxFileBytes, when positive, is the largest size any process of the
	// command may give a file (RLIMIT_FSIZE, set by prlimit(1)): a write or
	// truncate past it fails with EFBIG and SIGXFSZ, which ends a program
	// that does not handle it. It bounds each file, not their sum; it
	// applies to the sandbox's /tmp too. Without prlimit it is not set.
	// Default 0: no limit.
	MaxFileBytes int64
}

// Bind binds the host path Host at the absolute path Path in the sandbox.
type Bind struct {
	Host, Path string
}

// Process is a command started in the sandbox.
type Process struct {
	p    *proc.Process
	done chan struct{}
}

// Start starts c in the sandbox and returns once the command runs under
// its limits. A missing bwrap is an error wrapping [ErrUnavailable].
func (s *Sandbox) Start(c Command) (*Process, error) {
	if s.missing != nil {
		return nil, s.missing
	}
	if len(c.Args) == 0 {
		return nil, errors.New("sandbox: empty command")
	}
	dir := path.Clean("/" + filepath.ToSlash(c.Dir))
	var st *staged
	if s.asRoot {
		var err error
		if st, err = s.prepare(c); err != nil {
			return nil, err
		}
	}
	if st != nil {
		defer st.close() // the first bwrap has its own copies
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer infoR.Close()
	blockR, blockW, err := os.Pipe()
	if err != nil {
		infoW.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer blockW.Close()

	var argv []string
	extra := []*os.File{infoW, blockR} // fds 3 and 4
	inner := c
	if st != nil {
		argv = s.stageArgs(len(st.files), 3+len(extra))
		extra = append(extra, st.files...)
		inner = stagedCommand(c)
	}
	argv = append(argv, s.limits.prefix(s.uid(), c.MaxFileBytes)...)
	argv = append(argv, s.bwrap)
	argv = append(argv, s.args(inner, path.Join(WorkspaceDir, dir), 3, 4)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.ExtraFiles = extra
	cmd.WaitDelay = waitDelay
	if s.asRoot && st == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: uint32(s.opts.UID), Gid: uint32(s.opts.GID), Groups: []uint32{},
		}}
	}
	p, err := proc.Start(cmd, nil)
	infoW.Close()
	blockR.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: start bwrap: %w", err)
	}
	child, err := childPid(infoR, p)
	if err == nil && st != nil {
		child, err = hostPID(p.Pid(), child) // the second bwrap reports it in the first one's namespace
	}
	var release func()
	if err == nil {
		release, err = s.limits.enter(child)
	}
	if err != nil {
		_ = p.Stop(waitDelay)
		return nil, err
	}
	// The namespace's first process: once it has exited, the kernel has
	// reaped every process of the namespace, nested ones included (it
	// kills them and waits for them as that process exits). bwrap exiting
	// does not wait for that. Staged, the outer namespace is the first
	// bwrap's, whose first process is its child; it holds the second
	// bwrap, its namespace and the command.
	first := child
	if st != nil {
		if c := children(p.Pid()); len(c) == 1 {
			first = c[0]
		}
	}
	nsInit := openPidfd(first)
	sp := &Process{p: p, done: make(chan struct{})}
	go func() {
		<-p.Done()
		release()
		nsInit.wait(nsExitWait)
		close(sp.done)
	}()
	// Release the child: from here on it runs the command.
	if _, err := blockW.Write([]byte{'x'}); err != nil {
		_ = sp.Stop(waitDelay)
		<-sp.done
		return nil, fmt.Errorf("sandbox: bwrap exited before the command started: %w", err)
	}
	return sp, nil
}

// uid is the real uid the command runs as, seen from the host.
func (s *Sandbox) uid() int {
	if s.asRoot {
		return s.opts.UID
	}
	return os.Getuid()
}

// args builds bwrap's argument list; cwd is the working directory inside.
func (s *Sandbox) args(c Command, cwd string, infoFD, blockFD int) []string {
	a := []string{"--unshare-all"}
	if s.opts.Network {
		a = append(a, "--share-net")
	}
	a = append(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL")
	a = append(a, s.mounts...)
	a = append(a, "--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(int64(s.opts.MemoryMB)<<20, 10), "--tmpfs", "/tmp")
	a = append(a, s.hides...)
	a = append(a, "--bind", c.Workspace, WorkspaceDir)
	for _, b := range c.ROBinds {
		a = append(a, "--ro-bind", b.Host, b.Path)
	}
	a = append(a, "--chdir", cwd,
		"--info-fd", strconv.Itoa(infoFD), "--block-fd", strconv.Itoa(blockFD), "--clearenv")
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		a = append(a, "--setenv", k, v)
	}
	return append(append(a, "--"), c.Args...)
}

// childPid reads the pid of bwrap's sandboxed child from its info pipe,
// bounded by handshakeTimeout and by bwrap's exit.
func childPid(info io.Reader, p *proc.Process) (int, error) {
	type result struct {
		pid int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var v struct {
			ChildPid int `json:"child-pid"`
		}
		err := json.NewDecoder(info).Decode(&v)
		ch <- result{v.ChildPid, err}
	}()
	t := time.NewTimer(handshakeTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if r.err != nil || r.pid <= 0 {
			return 0, fmt.Errorf("sandbox: bwrap did not start its child (see the output): %v", r.err)
		}
		return r.pid, nil
	case <-t.C:
		_ = p.Stop(waitDelay) // closes the pipe: the reader ends
		<-ch
		return 0, fmt.Errorf("sandbox: bwrap did not report its child within %v", handshakeTimeout)
	}
}

// nsExitWait bounds how long Done waits, after bwrap exited, for the
// namespace's processes to be gone (SIGKILLed by --die-with-parent and
// the kernel: they go at once unless the machine is stalled).
const nsExitWait = 10 * time.Second

// pidfd is a process's pidfd (-1: none; pidfd_open needs Linux 5.3).
type pidfd int

func openPidfd(pid int) pidfd {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	return pidfd(fd)
}

// wait waits, up to max, for the process to exit, and closes the pidfd.
// A process that is gone already (or was never opened) returns at once.
func (fd pidfd) wait(max time.Duration) {
	if fd < 0 {
		return
	}
	defer unix.Close(int(fd))
	deadline := time.Now().Add(max)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

// Pid is bwrap's pid (and process group id), in wunder's PID namespace.
func (p *Process) Pid() int { return p.p.Pid() }

// Done is closed when bwrap has exited, the call's cgroup is released and
// the sandbox's PID namespace has ended: every process of the sandbox is
// gone by then.
func (p *Process) Done() <-chan struct{} { return p.done }

// Signal sends sig to bwrap's process group. Any signal that ends bwrap
// ends the whole sandbox (SIGKILL, by --die-with-parent).
func (p *Process) Signal(sig syscall.Signal) error { return p.p.Signal(sig) }

// Stop ends the sandbox in the bounded steps of internal/proc.
func (p *Process) Stop(grace time.Duration) error { return p.p.Stop(grace) }

// State is bwrap's exit state, valid once Done is closed. bwrap exits with
// the command's exit code, or 128+n when signal n killed it.
func (p *Process) State() *os.ProcessState {
	<-p.done
	return p.p.State()
}

// Err is bwrap's exit status as exec.Cmd.Wait reported it; valid once Done
// is closed.
func (p *Process) Err() error {
	<-p.done
	return p.p.Err()
}
