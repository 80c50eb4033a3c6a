package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wunder/wunder/internal/proc"
	"github.com/wunder/wunder/internal/sandbox"
)

// killGrace is how long a cancelled or timed-out command has between SIGTERM
// to its process group and SIGKILL; also how long Wait waits for pipes a
// leftover child holds open after the command exited.
const killGrace = 100 * time.Millisecond

// process is one program to run in a workspace.
type process struct {
	path    string   // the program: absolute on the host, or (sandboxed) a bare name
	args    []string // argv, argv[0] as the caller wrote it
	dir     resolved // working directory, inside the workspace
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
	// overQuota is set when the workspace ended over its quota;
	// quotaKilled when the quota's watcher stopped the command for it.
	overQuota   *QuotaError
	quotaKilled bool
	fileLimit   int64 // the command's RLIMIT_FSIZE, 0 for none
}

// child is a started process: internal/proc's, or the sandbox's.
type child interface {
	Done() <-chan struct{}
	Signal(syscall.Signal) error
	Stop(grace time.Duration) error
	State() *os.ProcessState
	Err() error
}

// run starts p (in the sandbox when one is configured) with stdin at
// /dev/null and a minimal environment, streams its output through c's
// Output, and waits. When ctx is done or the timeout passes, the process
// group gets SIGTERM, then the bounded stop of internal/proc. A cancelled
// ctx is returned as an error (with the outcome so far); everything else is
// in the outcome.
func (c *call) run(ctx context.Context, p process) (outcome, error) {
	sink := newOutputSink(c.set.opts.MaxOutputBytes, c.output)
	stdout, stderr := sink.writer("stdout"), sink.writer("stderr")
	start := time.Now()
	cq, err := c.set.quota.command(ctx, p.home)
	if err != nil {
		return outcome{}, err
	}
	ch, err := c.start(p, stdout, stderr, cq.fileLimit())
	if err != nil {
		cq.end()
		return outcome{}, err
	}
	cq.watch(killGroup(ch))
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-ch.Done():
	case <-ctx.Done():
	case <-timer.C:
		timedOut = true
	}
	select {
	case <-ch.Done():
	default:
		_ = ch.Signal(syscall.SIGTERM)
		_ = ch.Stop(killGrace)
	}
	waitErr := ch.Err()
	stdout.flush()
	stderr.flush()

	out := outcome{exitCode: -1, duration: time.Since(start)}
	out.overQuota, out.quotaKilled = cq.end()
	if c.set.opts.Sandbox != nil {
		out.fileLimit = cq.fileLimit()
	}
	out.output, out.truncated = sink.result()
	st := ch.State()
	if st != nil {
		out.exitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.signal = ws.Signal().String()
		}
		// bwrap reports a command killed by signal n as exit code 128+n
		// (SIGKILL: the memory limit, for one).
		if c.set.opts.Sandbox != nil && out.exitCode > 128 && out.exitCode < 128+65 {
			out.signal = syscall.Signal(out.exitCode - 128).String()
		}
	}
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.timedOut = timedOut
	var exitErr *exec.ExitError
	if waitErr != nil && st == nil && !errors.As(waitErr, &exitErr) {
		return out, fmt.Errorf("wait %s: %w", p.args[0], waitErr)
	}
	return out, nil
}

// start starts p unconfined through internal/proc, or through the sandbox
// with files bounded to maxFile bytes (0: unbounded).
func (c *call) start(p process, stdout, stderr io.Writer, maxFile int64) (child, error) {
	if sb := c.set.opts.Sandbox; sb != nil {
		argv := append([]string{p.path}, p.args[1:]...)
		if rel, ok := insideWorkspace(p.home, p.path); ok {
			argv[0] = path.Join(sandbox.WorkspaceDir, rel)
		}
		sp, err := sb.Start(sandbox.Command{
			Workspace: p.home, Dir: p.dir.rel, Args: argv, Stdout: stdout, Stderr: stderr,
			Env:          proc.Env(sandbox.WorkspaceDir, "PATH="+c.pathList(), "PYTHONUNBUFFERED=1"),
			MaxFileBytes: maxFile,
		})
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", p.args[0], err)
		}
		return sp, nil
	}
	cmd := exec.Command(p.path)
	cmd.Args = p.args
	cmd.Dir = p.dir.abs
	// PYTHONUNBUFFERED streams print() as it happens.
	cmd.Env = proc.Env(p.home, "PATH="+c.pathList(), "PYTHONUNBUFFERED=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = killGrace
	pp, err := proc.Start(cmd, nil)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", p.args[0], err)
	}
	return pp, nil
}

// insideWorkspace returns abs relative to the workspace home (slash-
// separated) when abs lies inside it.
func insideWorkspace(home, abs string) (string, bool) {
	if !filepath.IsAbs(abs) {
		return "", false
	}
	r, err := filepath.Rel(home, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
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
	case o.quotaKilled:
		fmt.Fprintf(&b, "stopped: %v\n", o.overQuota)
	case o.timedOut:
		fmt.Fprintf(&b, "timed out after %s; the process group was killed\n", timeout)
	case o.signal != "":
		fmt.Fprintf(&b, "killed by signal: %s\n", o.signal)
	default:
		fmt.Fprintf(&b, "exit code %d\n", o.exitCode)
	}
	switch {
	case o.overQuota != nil && !o.quotaKilled:
		fmt.Fprintf(&b, "%v\n", o.overQuota)
	case o.fileLimit > 0 && (o.signal == syscall.SIGXFSZ.String() || strings.Contains(o.output, "File too large")):
		// SIGXFSZ, or EFBIG ("File too large") for a program that ignores
		// it, as Python does.
		fmt.Fprintf(&b, "no file may grow past %s, what was left of the workspace quota (%s)\n", formatSize(o.fileLimit), quotaKey)
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
	d := map[string]any{
		"exit_code":   o.exitCode,
		"timed_out":   o.timedOut,
		"truncated":   o.truncated,
		"duration_ms": o.duration.Milliseconds(),
	}
	if o.overQuota != nil {
		d["over_quota"] = true
	}
	return d
}
