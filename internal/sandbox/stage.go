package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// When wunder runs as root its data often lives under a directory only
// root may enter (/root is 0700), yet the command must run as the
// sandbox user. bwrap binds by path, and it resolves every source path
// with realpath(3) as the user it runs as — even one given as an open
// descriptor (--bind-fd), which it turns back into its path — so the
// sandbox user would have to traverse every parent of the workspace.
//
// Instead a call is staged in two steps. wunder, as root, opens the
// workspace (O_PATH|O_DIRECTORY|O_NOFOLLOW, after resolving its
// symlinks) and each per-call read-only bind, and starts a first bwrap as
// root, which sees the host as it is and, in a mount namespace of its
// own, binds those descriptors under a fresh tmpfs at stageDir. bwrap
// checks after mounting that what it mounted is the very directory of
// the descriptor, and closes the descriptor, so the command never holds
// it. setpriv(1) (util-linux) then drops to the sandbox user for good
// (real, effective and saved ids, no supplementary groups, no
// capabilities left) and executes the usual bwrap, which binds the staged
// paths at /workspace and at their own paths: everything it resolves lies
// under the tmpfs, which anyone may enter. The first bwrap shares the
// host's PID namespace, so the pid the second reports is wunder's to put
// in a cgroup, and it exits with the second's status.
//
//	wunder (root) ─ bwrap --dev-bind / / --tmpfs /tmp --bind-fd 5 /tmp/workspace ...
//	                  └ setpriv --reuid=65534 --regid=65534 --clear-groups
//	                      └ [prlimit ...] bwrap --unshare-all ... --bind /tmp/workspace /workspace ...
//
// The first bwrap makes a mount namespace as root, which takes
// CAP_SYS_ADMIN: a root without it (a container's default) does not stage.
// Without staging, bwrap starts directly as the sandbox user and every
// parent of the workspace must be searchable by it (checked, with a
// message that says so).

// stageDir is where the first bwrap binds a call's directories. It is
// /tmp because every system has it; in the first bwrap's namespace it is
// a fresh tmpfs, and the second bwrap, which mounts its own root over
// /tmp before it pivots, still finds the staged mounts beneath.
const stageDir = "/tmp"

// staged are the directories of one call that wunder opened as root, in
// the order of the descriptors the first bwrap gets: the workspace, then
// each of Command.ROBinds.
type staged struct {
	files []*os.File
}

func (st *staged) close() {
	for _, f := range st.files {
		f.Close()
	}
}

// stagedPath is where the i-th staged directory appears in the first
// bwrap's namespace (0 is the workspace).
func stagedPath(i int) string {
	if i == 0 {
		return stageDir + "/workspace"
	}
	return stageDir + "/ro" + strconv.Itoa(i-1)
}

// openStaged opens c's workspace (which must be a directory and, once its
// parents' symlinks are resolved, not a symlink itself) and its read-only
// binds, as wunder, for the first bwrap.
func openStaged(c Command) (*staged, error) {
	st := &staged{}
	ws, err := openResolved(c.Workspace, unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	st.files = append(st.files, ws)
	for _, b := range c.ROBinds {
		f, err := openResolved(b.Host, 0)
		if err != nil {
			st.close()
			return nil, fmt.Errorf("sandbox: bind %s: %w", b.Path, err)
		}
		st.files = append(st.files, f)
	}
	return st, nil
}

// openResolved opens p, its symlinks resolved, as an O_PATH descriptor
// that does not follow a symlink swapped in at the last element since.
func openResolved(p string, flags int) (*os.File, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: real, Err: err}
	}
	return os.NewFile(uintptr(fd), real), nil
}

// procPath is a path that reaches the directory of f itself (a magic link
// of /proc), whatever has become of the path it was opened by.
func procPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// stageArgs is the first bwrap's command line, up to and including the
// setpriv that drops to the sandbox user; firstFD is the descriptor
// number of the first staged directory in it.
func (s *Sandbox) stageArgs(n, firstFD int) []string {
	a := []string{s.bwrap, "--dev-bind", "/", "/", "--tmpfs", stageDir,
		"--bind-fd", strconv.Itoa(firstFD), stagedPath(0)}
	for i := 1; i < n; i++ {
		a = append(a, "--ro-bind-fd", strconv.Itoa(firstFD+i), stagedPath(i))
	}
	// The first bwrap has a PID namespace of its own: when wunder dies
	// (even by SIGKILL), the first bwrap dies with it, its namespace's
	// first process with that (--die-with-parent: both root), and the
	// kernel kills every process of the namespace, the sandbox user's
	// included. A parent-death signal cannot reach them instead: the
	// kernel clears it when setpriv changes the user ids, and the first
	// bwrap, having dropped its capabilities, may not signal another
	// user's process (TestFaultKill9).
	return append(a, "--unshare-pid", "--die-with-parent", "--", s.setpriv,
		"--reuid="+strconv.Itoa(s.opts.UID), "--regid="+strconv.Itoa(s.opts.GID), "--clear-groups", "--")
}

// hostPID is the pid in wunder's namespace of the descendant of root whose
// pid in the first nested PID namespace is nsPid: the second bwrap, inside
// the first one's namespace, reports its child's pid as seen there.
func hostPID(root, nsPid int) (int, error) {
	want := strconv.Itoa(nsPid)
	queue := []int{root}
	for seen := 0; len(queue) > 0 && seen < 64; seen++ {
		pid := queue[0]
		queue = queue[1:]
		if ns := nsPids(pid); len(ns) >= 2 && ns[1] == want {
			return pid, nil
		}
		queue = append(queue, children(pid)...)
	}
	return 0, fmt.Errorf("sandbox: the command's process (pid %d in the staging namespace) is not among bwrap's", nsPid)
}

// nsPids is the NSpid line of /proc/pid/status: the pid in each PID
// namespace the process is in, outermost first.
func nsPids(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return strings.Fields(rest)
		}
	}
	return nil
}

// children are pid's child processes (of every thread).
func children(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// staged returns c as the second bwrap sees it: its directories at their
// staged paths.
func stagedCommand(c Command) Command {
	c.Workspace = stagedPath(0)
	binds := make([]Bind, len(c.ROBinds))
	for i, b := range c.ROBinds {
		binds[i] = Bind{Host: stagedPath(i + 1), Path: b.Path}
	}
	c.ROBinds = binds
	return c
}

// capSysAdmin reports whether the effective capabilities in status (a
// /proc/<pid>/status file) hold CAP_SYS_ADMIN.
func capSysAdmin(status string) bool {
	b, err := os.ReadFile(status)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<unix.CAP_SYS_ADMIN) != 0
		}
	}
	return false
}
