package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// killGrace is how long a cancelled or timed-out command has between SIGTERM
// to its process group and SIGKILL; also how long Wait waits for pipes a
// leftover child holds open after the command exited.
const killGrace = 100 * time.Millisecond

// defaultPath is PATH for commands when the gateway has none.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// process is one program to run in a workspace.
type process struct {
	path    string   // the program, absolute
	args    []string // argv, argv[0] as the caller wrote it
	dir     string   // working directory, absolute, inside the workspace
	home    string   // the workspace, HOME for the program
	timeout time.Duration
}

// outcome is how a process ended.
type outcome struct {
	exitCode  int // -1 when killed by a signal
	signal    string
	timedOut  bool
	output    string // stdout and stderr interleaved, capped
	truncated bool
	duration  time.Duration
}

// run starts p in its own process group with stdin at /dev/null and a
// minimal environment, streams its output through c's Output, and waits.
// When ctx is done or the timeout passes, the group gets SIGTERM, then
// SIGKILL after killGrace; after Wait the group is swept with SIGKILL in any
// case, so no child outlives the call. A cancelled ctx is returned as an
// error (with the outcome so far); everything else is in the outcome.
func (c *call) run(ctx context.Context, p process) (outcome, error) {
	tctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()

	sink := newOutputSink(c.set.opts.MaxOutputBytes, c.output)
	stdout, stderr := sink.writer("stdout"), sink.writer("stderr")
	cmd := exec.CommandContext(tctx, p.path)
	cmd.Args = p.args
	cmd.Dir = p.dir
	cmd.Env = commandEnv(p.home)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Setpgid made the leader's pid the group id.
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	cmd.WaitDelay = killGrace

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome{}, fmt.Errorf("start %s: %w", p.args[0], err)
	}
	pgid := cmd.Process.Pid
	waitErr := cmd.Wait()
	timedOut := errors.Is(tctx.Err(), context.DeadlineExceeded)
	// Sweep the group: children that ignored SIGTERM, or that the command
	// left running when it exited. While any member lives, the group id
	// cannot be reused; when none is left the kill finds nothing (a pid is
	// reused only after the kernel cycles through pid_max).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	stdout.flush()
	stderr.flush()

	out := outcome{exitCode: -1, duration: time.Since(start)}
	out.output, out.truncated = sink.result()
	if st := cmd.ProcessState; st != nil {
		out.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.signal = ws.Signal().String()
		}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.timedOut = timedOut
	var exitErr *exec.ExitError
	if waitErr != nil && cmd.ProcessState == nil && !errors.As(waitErr, &exitErr) {
		return out, fmt.Errorf("wait %s: %w", p.args[0], waitErr)
	}
	return out, nil
}

// commandEnv is the whole environment of a command: nothing of the
// gateway's own environment but PATH and LANG.
func commandEnv(home string) []string {
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	return []string{
		"PATH=" + pathList(),
		"HOME=" + home,
		"LANG=" + lang,
		"PYTHONUNBUFFERED=1", // stream print() as it happens
	}
}

// lookPath finds an executable named name in the absolute directories of
// pathList (relative entries such as "." are ignored, so a bare name never
// finds a program in the working directory).
func lookPath(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on PATH", name)
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// describe renders an outcome for the model: a status line, then the output.
func (o outcome) describe(timeout time.Duration) string {
	var b strings.Builder
	switch {
	case o.timedOut:
		fmt.Fprintf(&b, "timed out after %s; the process group was killed\n", timeout)
	case o.signal != "":
		fmt.Fprintf(&b, "killed by signal: %s\n", o.signal)
	default:
		fmt.Fprintf(&b, "exit code %d\n", o.exitCode)
	}
	if o.output == "" {
		b.WriteString("(no output)\n")
		return b.String()
	}
	b.WriteString(o.output)
	if !strings.HasSuffix(o.output, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// data is the structured result of a command.
func (o outcome) data() map[string]any {
	return map[string]any{
		"exit_code":   o.exitCode,
		"timed_out":   o.timedOut,
		"truncated":   o.truncated,
		"duration_ms": o.duration.Milliseconds(),
	}
}
