package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupParent is the directory, below wunder's own cgroup, that holds one
// cgroup per call.
const cgroupParent = "wunder-sandbox"

// Kinds of limiter.
const (
	limitsV2     = "cgroup v2"
	limitsV1     = "cgroup v1"
	limitsRlimit = "rlimit"
)

// limiter puts a sandbox's child under the process and memory limits.
type limiter struct {
	kind   string
	pids   int
	memory int64    // bytes
	v1     []string // cgroup v1: parent directories (pids, memory)
	v2     string   // cgroup v2: parent directory
	// prlimit is prlimit(1) (util-linux) for the rlimit fallback; "" when
	// missing, which leaves no way to limit a call.
	prlimit string
}

// callSeq names per-call cgroups.
var callSeq atomic.Uint64

// newLimiter picks cgroup v2, cgroup v1 or rlimits (see the package doc).
// root is the cgroup mount point, self the path of /proc/self/cgroup.
func newLimiter(root, self string, pids int, memory int64) *limiter {
	l := &limiter{kind: limitsRlimit, pids: pids, memory: memory}
	if p, err := exec.LookPath("prlimit"); err == nil {
		l.prlimit = p
	}
	paths, err := readSelfCgroup(self)
	if err != nil {
		return l
	}
	if dir, ok := cgroupV2(root, paths[""]); ok {
		l.kind, l.v2 = limitsV2, dir
		removeStale(dir)
		return l
	}
	var dirs []string
	for _, ctrl := range []string{"pids", "memory"} {
		p, ok := paths[ctrl]
		if !ok {
			return l
		}
		mount := filepath.Join(root, ctrl)
		if _, err := os.Stat(filepath.Join(mount, "tasks")); err != nil {
			return l // not a v1 hierarchy
		}
		dir := filepath.Join(mount, p, cgroupParent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return l
		}
		dirs = append(dirs, dir)
	}
	l.kind, l.v1 = limitsV1, dirs
	for _, d := range dirs {
		removeStale(d)
	}
	return l
}

// removeStale removes the per-call cgroups a crashed wunder left in parent
// (named call-<pid>-<n>, with no process <pid> any more). A cgroup with
// members cannot be removed, so a live call is never touched.
func removeStale(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		var pid, n int
		if _, err := fmt.Sscanf(e.Name(), "call-%d-%d", &pid, &n); err != nil || !e.IsDir() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = syscall.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// readSelfCgroup parses /proc/self/cgroup: controller -> path; the v2
// entry ("0::/path") is under "".
func readSelfCgroup(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// cgroupV2 returns the parent directory for per-call cgroups when the v2
// hierarchy (at root, or at root/unified in hybrid mode) delegates pids and
// memory to wunder's cgroup.
func cgroupV2(root, self string) (string, bool) {
	if self == "" {
		return "", false
	}
	for _, mount := range []string{root, filepath.Join(root, "unified")} {
		if _, err := os.Stat(filepath.Join(mount, "cgroup.controllers")); err != nil {
			continue
		}
		own := filepath.Join(mount, self)
		ctl, err := os.ReadFile(filepath.Join(own, "cgroup.subtree_control"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(ctl))
		if !slices.Contains(f, "pids") || !slices.Contains(f, "memory") {
			continue
		}
		dir := filepath.Join(own, cgroupParent)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids +memory"), 0); err != nil {
			continue
		}
		return dir, true
	}
	return "", false
}

// enter puts pid, which has not run the command yet, under the limits and
// returns the function that releases them once the sandbox has exited.
func (l *limiter) enter(pid int) (release func(), err error) {
	name := fmt.Sprintf("call-%d-%d", os.Getpid(), callSeq.Add(1))
	switch l.kind {
	case limitsV2:
		dir := filepath.Join(l.v2, name)
		return cgroupEnter([]string{dir}, pid, [][2]string{
			{"pids.max", strconv.Itoa(l.pids)},
			{"memory.max", strconv.FormatInt(l.memory, 10)},
			{"memory.swap.max?", "0"},
		})
	case limitsV1:
		return cgroupEnter([]string{filepath.Join(l.v1[0], name), filepath.Join(l.v1[1], name)}, pid, [][2]string{
			{"pids.max", strconv.Itoa(l.pids)},
			{"memory.limit_in_bytes", strconv.FormatInt(l.memory, 10)},
			{"memory.memsw.limit_in_bytes?", strconv.FormatInt(l.memory, 10)},
		})
	}
	return func() {}, nil // rlimits were set before bwrap started (rlimitArgs)
}

// cgroupEnter creates dirs, writes each setting into whichever dir has the
// file (a name ending in "?" is optional), and moves pid into every dir.
func cgroupEnter(dirs []string, pid int, settings [][2]string) (func(), error) {
	var made []string
	release := func() {
		for _, d := range made {
			removeCgroup(d)
		}
	}
	fail := func(err error) (func(), error) {
		release()
		return nil, fmt.Errorf("sandbox: cgroup: %w", err)
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fail(err)
		}
		made = append(made, d)
	}
	for _, kv := range settings {
		file, optional := strings.CutSuffix(kv[0], "?")
		written := false
		for _, d := range dirs {
			p := filepath.Join(d, file)
			if _, err := os.Stat(p); err != nil {
				continue
			}
			if err := os.WriteFile(p, []byte(kv[1]), 0); err != nil && !optional {
				return fail(err)
			}
			written = true
		}
		if !written && !optional {
			return fail(fmt.Errorf("no %s in %s", file, strings.Join(dirs, ", ")))
		}
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fail(err)
		}
	}
	return release, nil
}

// removeCgroup kills what is left in dir and removes it, bounded: by the
// time it is called the PID namespace is gone, so it normally finds none.
func removeCgroup(dir string) {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) // v2 only
	for range 200 {
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return
		}
		if !errors.Is(err, syscall.EBUSY) {
			// A plain directory (tests) or a permission problem: the
			// members were killed above; leave the empty cgroup.
			_ = os.RemoveAll(dir)
			return
		}
		time.Sleep(10 * time.Millisecond) // exiting members are still being reaped
	}
}

// prefix returns the prlimit(1) prefix that starts bwrap with its rlimits
// lowered: RLIMIT_AS and RLIMIT_NPROC when they are the limiter, and
// RLIMIT_FSIZE when fsize is positive (a call's Command.MaxFileBytes). The
// process lowers its own limits, which needs no privilege (root may lack
// CAP_SYS_RESOURCE in a container). RLIMIT_NPROC counts the tasks of the
// real uid machine-wide, so the limit is what uid has now plus l.pids.
// Without prlimit, cgroup limiters run bwrap as it is and RLIMIT_FSIZE is
// not set (an rlimit limiter without prlimit never runs: see New).
func (l *limiter) prefix(uid int, fsize int64) []string {
	var a []string
	if l.kind == limitsRlimit {
		n := tasksOf(uid) + l.pids
		a = append(a, fmt.Sprintf("--as=%d:%d", l.memory, l.memory), fmt.Sprintf("--nproc=%d:%d", n, n))
	}
	if fsize > 0 {
		a = append(a, fmt.Sprintf("--fsize=%d:%d", fsize, fsize))
	}
	if len(a) == 0 || l.prlimit == "" {
		return nil
	}
	return append(append([]string{l.prlimit}, a...), "--")
}

// tasksOf counts the threads whose real uid is uid, as RLIMIT_NPROC does.
func tasksOf(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	want := strconv.Itoa(uid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var real string
		threads := 0
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					real = f[0]
				}
			}
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if real == want {
			n += threads
		}
	}
	return n
}
