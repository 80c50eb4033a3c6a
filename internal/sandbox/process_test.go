package sandbox_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/sandbox"
)

// start starts argv in ws and fails the test if it cannot.
func start(t *testing.T, s *sandbox.Sandbox, c sandbox.Command) *sandbox.Process {
	t.Helper()
	if c.Env == nil {
		c.Env = []string{"PATH=" + s.Path(os.Getenv("PATH"))}
	}
	p, err := s.Start(c)
	if err != nil {
		t.Fatalf("Start %q: %v", c.Args, err)
	}
	t.Cleanup(func() {
		_ = p.Stop(time.Second)
		<-p.Done()
	})
	return p
}

// waitDone waits for p to end; the bound only turns a hang into a failure.
func waitDone(t *testing.T, p *sandbox.Process, what string) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not end", what)
	}
}

// uniqueSleep is a sleep argument no other process on the machine has,
// so the command can be found in /proc by it.
func uniqueSleep() string { return fmt.Sprintf("600.%09d", time.Now().UnixNano()%1e9) }

// running reports whether a process whose argv holds arg is alive (not a
// zombie) anywhere on the host.
func running(t *testing.T, arg string) bool {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00"+arg+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
			return true
		}
	}
	return false
}

// waitRunning polls until a process with arg runs, so a later check that
// it is gone means something.
func waitRunning(t *testing.T, arg string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !running(t, arg); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("sleep %s never ran", arg)
		}
	}
}

// A signal sent to the process ends the whole sandbox, and the exit state
// says which signal: bwrap exits 128+n for signal n, or is itself killed.
func TestSignalEndsTheSandbox(t *testing.T) {
	needBwrap(t)
	s := sandbox.New(nil)
	ws := workspace(t, s)
	// The command waits far longer than the test.
	arg := uniqueSleep()
	p := start(t, s, sandbox.Command{Workspace: ws, Args: []string{"sleep", arg}})
	if p.Pid() <= 0 {
		t.Fatalf("Pid() = %d", p.Pid())
	}
	waitRunning(t, arg)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("Signal: %v", err)
	}
	waitDone(t, p, "a sandbox sent SIGTERM")
	st := p.State()
	if st.Success() {
		t.Errorf("a signalled sandbox exited successfully: %v", st)
	}
	if p.Err() == nil {
		t.Error("Err() = nil for a signalled sandbox")
	}
	ws2, ok := st.Sys().(syscall.WaitStatus)
	if !ok {
		t.Fatalf("State().Sys() = %T", st.Sys())
	}
	if !(ws2.Signaled() && ws2.Signal() == syscall.SIGTERM) && st.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit state %v; want SIGTERM, or exit code %d", st, 128+int(syscall.SIGTERM))
	}
	// The command is gone with it.
	if running(t, arg) {
		t.Errorf("sleep %s still runs after Done", arg)
	}
}

// Stop ends a command that ignores SIGTERM too, and every process it
// started: the sandbox's PID namespace dies with it.
func TestStopEndsAStubbornCommand(t *testing.T) {
	needBwrap(t)
	s := sandbox.New(nil)
	ws := workspace(t, s)
	// A background child that ignores TERM, under a shell that does too.
	arg := uniqueSleep()
	script := `trap '' TERM; (trap '' TERM; sleep ` + arg + `) & wait`
	p := start(t, s, sandbox.Command{Workspace: ws, Args: []string{"sh", "-c", script}})
	waitRunning(t, arg)
	if err := p.Stop(100 * time.Millisecond); err != nil {
		t.Logf("Stop: %v", err) // an unresponsive subprocess is reported, not hidden
	}
	waitDone(t, p, "a stopped sandbox")
	if p.State().Success() {
		t.Errorf("a stopped sandbox exited successfully")
	}
	// Its PID namespace is gone, and the background child with it.
	if running(t, arg) {
		t.Errorf("the background sleep %s of the stopped command runs on", arg)
	}
}

// Exit codes pass through bwrap; stdin is empty; a missing program is a
// failed command (its output says so), not a Start error.
func TestExitCodesAndStdin(t *testing.T) {
	needBwrap(t)
	s := sandbox.New(nil)
	ws := workspace(t, s)
	for _, tc := range []struct {
		argv []string
		code int
		out  string
	}{
		{[]string{"sh", "-c", "exit 7"}, 7, ""},
		{[]string{"true"}, 0, ""},
		// cat reads stdin, which is empty: it ends at once with nothing.
		{[]string{"cat"}, 0, ""},
		{[]string{"sh", "-c", "echo out; echo err >&2; exit 3"}, 3, "out\nerr\n"},
	} {
		out, code := run(t, s, ws, "", tc.argv...)
		if code != tc.code || out != tc.out {
			t.Errorf("%q = exit %d, %q; want %d, %q", tc.argv, code, out, tc.code, tc.out)
		}
	}
	out, code := run(t, s, ws, "", "wunder-no-such-program")
	if code == 0 || !strings.Contains(out, "wunder-no-such-program") {
		t.Errorf("a missing program = exit %d, %q; want a failure naming it", code, out)
	}
	if _, err := s.Start(sandbox.Command{Workspace: ws}); err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Errorf("Start of no argv = %v; want an empty command error", err)
	}
}

// Without network: true the sandbox has only a loopback interface; with
// it, the host's.
func TestNetworkIsolation(t *testing.T) {
	needBwrap(t)
	ifaces := func(s *sandbox.Sandbox) []string {
		out, code := run(t, s, workspace(t, s), "", "cat", "/proc/net/dev")
		if code != 0 {
			t.Fatalf("cat /proc/net/dev: exit %d: %s", code, out)
		}
		var names []string
		for _, line := range strings.Split(out, "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
				names = append(names, strings.TrimSpace(name))
			}
		}
		return names
	}
	off := sandbox.New(nil)
	if off.Network() {
		t.Error("Network() = true by default")
	}
	if got := ifaces(off); len(got) != 1 || got[0] != "lo" {
		t.Errorf("interfaces without network = %q; want lo alone", got)
	}
	host, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		t.Skip(err)
	}
	on := sandbox.New(&sandbox.Options{Network: true})
	if !on.Network() {
		t.Error("Network() = false with network: true")
	}
	got := ifaces(on)
	for _, name := range got {
		if !strings.Contains(string(host), name+":") {
			t.Errorf("interface %q inside is not the host's", name)
		}
	}
	if strings.Count(string(host), ":") > 1 && len(got) < 2 {
		t.Errorf("interfaces with network = %q; want the host's", got)
	}
}

// A read-only bind of one command is readable at its path and refuses
// writes; the next command without it does not see it.
func TestROBindIsPerCommandAndReadOnly(t *testing.T) {
	needBwrap(t)
	s := sandbox.New(nil)
	ws := workspace(t, s)
	skill := filepath.Join(filepath.Dir(ws), "skill")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("# skill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	p := start(t, s, sandbox.Command{
		Workspace: ws, ROBinds: []sandbox.Bind{{Host: skill, Path: "/skill"}},
		Args:   []string{"sh", "-c", "cat /skill/SKILL.md; echo x > /skill/new.txt && echo WROTE || echo refused"},
		Stdout: &out, Stderr: &out,
	})
	waitDone(t, p, "the bound command")
	if got := out.String(); !strings.Contains(got, "# skill") || !strings.Contains(got, "refused") || strings.Contains(got, "WROTE") {
		t.Errorf("output = %q; want the file read and the write refused", got)
	}
	if _, err := os.Stat(filepath.Join(skill, "new.txt")); err == nil {
		t.Error("a command wrote through a read-only bind")
	}
	o, code := run(t, s, ws, "", "sh", "-c", "test -e /skill && echo SEEN || echo absent")
	if code != 0 || strings.TrimSpace(o) != "absent" {
		t.Errorf("a later command without the bind: %q (exit %d); want it absent", o, code)
	}
}
