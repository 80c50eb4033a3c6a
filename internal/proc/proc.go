// Package proc starts and stops every child process wunder runs: commands
// of execute_command and ptc (through the sandbox), MCP stdio servers and
// language servers. One policy for all of them:
//
//   - each child leads a process group of its own, so a stop reaches whatever
//     it started (npx starts node, gopls starts go list, a script forks);
//   - each child gets SIGKILL when the thread that started it dies
//     (Pdeathsig), so a crashed wunder leaves no child running;
//   - a stop is bounded: close stdin, wait; SIGTERM to the group, wait;
//     SIGKILL to the group, wait; and the group is swept with SIGKILL in any
//     case once the leader has exited, so no grandchild outlives it;
//   - a child's environment is built, not inherited: PATH, HOME, LANG and
//     what its configuration names, never wunder's own WUNDER_* variables or
//     secrets ([Env]).
//
// A grandchild that calls setsid leaves the group; only a PID namespace (the
// sandbox) reaches it. That is why commands of the model run in the sandbox.
package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ErrUnresponsive is returned by [Process.Stop] when the child outlived
// SIGKILL's grace (a process in uninterruptible sleep, for instance).
var ErrUnresponsive = errors.New("unresponsive subprocess")

// DefaultPath is PATH for a child when wunder's own environment has none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Env returns the whole environment of a child: PATH (wunder's, or
// [DefaultPath]), HOME (home, or wunder's when empty), LANG (wunder's, or
// C.UTF-8), then extra "KEY=VALUE" entries in order (a later one wins). No
// other variable of wunder's environment is passed on.
func Env(home string, extra ...string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = DefaultPath
	}
	if home == "" {
		home = os.Getenv("HOME")
	}
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	env := []string{"PATH=" + path, "HOME=" + home, "LANG=" + lang}
	return dedupe(append(env, extra...))
}

// dedupe keeps the last entry of each key, in the order of first
// appearance.
func dedupe(env []string) []string {
	idx := map[string]int{}
	out := env[:0:0]
	for _, kv := range env {
		k := kv
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				k = kv[:i]
				break
			}
		}
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// Prepare sets cmd up to be started as a group leader that dies with its
// parent. Callers that need exec.Cmd's own Start (an SDK that starts the
// command itself) call Prepare and later [KillGroup]; everybody else uses
// [Start].
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// KillGroup sends SIGKILL to the process group led by pid. A group that no
// longer exists is not an error.
func KillGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pid, err)
	}
	return nil
}

// Process is a started child. Its Wait runs on a goroutine owned by the
// Process that ends when the child exits.
type Process struct {
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan struct{}
	err   error // the result of cmd.Wait, set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// Start prepares cmd ([Prepare]) and starts it. stdin, when not nil, is
// the write end of the child's standard input, closed as the first step of
// [Process.Stop].
//
// Pdeathsig fires when the OS thread that forked the child exits; the
// thread is locked for the fork so the Go runtime does not hand the child
// to a thread it is about to retire.
func Start(cmd *exec.Cmd, stdin io.Closer) (*Process, error) {
	Prepare(cmd)
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		// The leader is gone; sweep whatever it left in its group. While
		// any member lives the group id cannot be reused, and once none is
		// left the kill finds nothing.
		_ = KillGroup(cmd.Process.Pid)
		close(p.done)
	}()
	return p, nil
}

// Pid is the child's process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the child has exited and its group was swept.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the child's exit status as exec.Cmd.Wait reported it; valid once
// Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// State is the child's exit state; valid once Done is closed.
func (p *Process) State() *os.ProcessState {
	<-p.done
	return p.cmd.ProcessState
}

// Signal sends sig to the child's whole process group.
func (p *Process) Signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid(), sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Stop ends the child in bounded steps, each given grace: close its stdin,
// then SIGTERM to its group, then SIGKILL to its group. It returns nil once
// the child has exited (whatever its exit status) and [ErrUnresponsive]
// if it outlives all three. Calling Stop again returns the first result.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(grace) })
	return p.stopErr
}

func (p *Process) stop(grace time.Duration) error {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = p.Signal(sig)
		}
		t := time.NewTimer(grace)
		select {
		case <-p.done:
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	return fmt.Errorf("%w: pid %d survived SIGKILL for %v", ErrUnresponsive, p.Pid(), grace)
}

// StartPiped starts cmd like [Start] with its standard input and output
// connected to the returned pipe ends (a stdio protocol: MCP, LSP); stdin
// is also closed by [Process.Stop]. The pipes are plain os.Pipe ends, not
// exec.Cmd's: the Process waits for the child at once, and cmd.Wait would
// close a StdoutPipe under a reader still draining it.
func StartPiped(cmd *exec.Cmd) (p *Process, stdin, stdout *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	p, err = Start(cmd, inW)
	inR.Close() // the child holds its own copies
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	return p, inW, outR, nil
}
