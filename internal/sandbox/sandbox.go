package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// WorkspaceDir is where the caller's workspace appears inside the sandbox;
// it is also the command's HOME in wunder's tools.
const WorkspaceDir = "/workspace"

// ErrUnavailable is returned by [Sandbox.Check] and [Sandbox.Start] when
// bubblewrap cannot be used; its message says how to install it.
var ErrUnavailable = errors.New("sandbox unavailable")

// Defaults of [Options].
const (
	DefaultMemoryMB = 512
	DefaultPids     = 64
	DefaultUID      = 65534
	DefaultGID      = 65534
	DefaultBwrap    = "bwrap"
)

// systemDirs are bound read-only at their own paths when they exist (as
// symlinks when they are symlinks).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// Options configures a [Sandbox]. The zero value means the defaults; a nil
// *Options passed to [New] means the same.
type Options struct {
	// Network keeps the host's network (bwrap --share-net). Default false:
	// a network namespace of its own with nothing but loopback.
	Network bool
	// MemoryMB bounds the memory of one call (and the size of its /tmp).
	// Default 512.
	MemoryMB int
	// Pids bounds the processes (threads) of one call. Default 64.
	Pids int
	// ROBinds are absolute host paths bound read-only at the same path,
	// besides the system directories. They must be readable by the
	// sandbox identity. Default none.
	ROBinds []string
	// Hide are absolute host paths that must not be visible even when they
	// lie under a bound directory (the configuration file, the data
	// directory). Paths not visible anyway need no mask. Default none.
	Hide []string
	// UID and GID are the identity commands run as when wunder runs as
	// root; never 0. Default 65534:65534. Unused when wunder is not root.
	UID, GID int
	// Bwrap is the bubblewrap executable, a name on PATH or an absolute
	// path. Default "bwrap".
	Bwrap string

	// cgroupRoot and selfCgroup replace /sys/fs/cgroup and
	// /proc/self/cgroup in tests.
	cgroupRoot, selfCgroup string
}

// Sandbox runs commands confined by bubblewrap. It is safe for concurrent
// use; each [Sandbox.Start] is independent.
type Sandbox struct {
	opts    Options
	bwrap   string // absolute, "" when missing
	missing error  // why bwrap cannot be used, or nil
	asRoot  bool   // wunder runs as root: drop to opts.UID/GID
	// setpriv is setpriv(1) when wunder runs as root with CAP_SYS_ADMIN
	// (which the first bwrap needs to make a mount namespace) and has it:
	// calls are staged (stage.go). "" otherwise.
	setpriv string
	mounts  []string
	hides   []string
	visible []string // directories visible read-only, real paths
	limits  *limiter
}

// New returns a sandbox configured by opts (nil means defaults). It never
// fails: a missing bwrap is reported by [Sandbox.Check] and refused by
// [Sandbox.Start], so a server can start and say why commands are refused.
func New(opts *Options) *Sandbox {
	var o Options
	if opts != nil {
		o = *opts
		o.ROBinds = slices.Clone(opts.ROBinds)
		o.Hide = slices.Clone(opts.Hide)
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = DefaultMemoryMB
	}
	if o.Pids <= 0 {
		o.Pids = DefaultPids
	}
	if o.UID <= 0 {
		o.UID = DefaultUID
	}
	if o.GID <= 0 {
		o.GID = DefaultGID
	}
	if o.Bwrap == "" {
		o.Bwrap = DefaultBwrap
	}
	if o.cgroupRoot == "" {
		o.cgroupRoot = "/sys/fs/cgroup"
	}
	if o.selfCgroup == "" {
		o.selfCgroup = "/proc/self/cgroup"
	}
	s := &Sandbox{opts: o, asRoot: os.Geteuid() == 0}
	if p, err := exec.LookPath(o.Bwrap); err == nil {
		s.bwrap, _ = filepath.Abs(p)
	} else {
		s.missing = fmt.Errorf("%w: bubblewrap (%s) is not installed: install it (Debian/Ubuntu: apt-get install bubblewrap) "+
			"or, to run commands unconfined, set sandbox.mode: none", ErrUnavailable, o.Bwrap)
	}
	if s.asRoot && capSysAdmin("/proc/self/status") {
		if p, err := exec.LookPath("setpriv"); err == nil {
			s.setpriv = p
		}
	}
	s.mounts, s.visible = mounts(append(slices.Clone(systemDirs), o.ROBinds...))
	s.hides = s.masks(o.Hide)
	s.limits = newLimiter(o.cgroupRoot, o.selfCgroup, o.Pids, int64(o.MemoryMB)<<20)
	if s.missing == nil && s.limits.kind == limitsRlimit && s.limits.prlimit == "" {
		s.missing = fmt.Errorf("%w: no writable cgroup and no prlimit (util-linux) to limit processes and memory: "+
			"install util-linux, run wunder as root or in a delegated cgroup, or set sandbox.mode: none", ErrUnavailable)
	}
	return s
}

// Check reports whether commands can run: nil, or an error wrapping
// [ErrUnavailable] that says how to install bubblewrap.
func (s *Sandbox) Check() error { return s.missing }

// Limits names the mechanism that bounds processes and memory: "cgroup v2",
// "cgroup v1" or "rlimit".
func (s *Sandbox) Limits() string { return s.limits.kind }

// Staged reports whether calls are staged (stage.go): wunder is root, has
// CAP_SYS_ADMIN and setpriv, so a workspace is reached whatever the modes
// of the directories above it. False when wunder is not root (it needs no
// staging) and when a root cannot stage: then the directories above the
// workspaces must be searchable by the sandbox user.
func (s *Sandbox) Staged() bool { return s.setpriv != "" }

// Network reports whether commands keep the host's network.
func (s *Sandbox) Network() bool { return s.opts.Network }

// Visible reports whether the host path p is visible read-only inside the
// sandbox at the same path (under a bound directory and not hidden).
func (s *Sandbox) Visible(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	if !under(real, s.visible...) {
		return false
	}
	for _, h := range s.opts.Hide {
		if hr, err := filepath.EvalSymlinks(h); err == nil && under(real, hr) {
			return false
		}
	}
	return true
}

// Path keeps the entries of a PATH list that are visible inside the
// sandbox, in order; when none is, it falls back to the system
// directories.
func (s *Sandbox) Path(hostPath string) string {
	var keep []string
	for _, dir := range filepath.SplitList(hostPath) {
		if filepath.IsAbs(dir) && !slices.Contains(keep, dir) && s.Visible(dir) {
			keep = append(keep, dir)
		}
	}
	if len(keep) == 0 {
		for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			if s.Visible(dir) {
				keep = append(keep, dir)
			}
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// mounts returns bwrap's arguments binding paths read-only (symlinks as
// symlinks, missing paths skipped) and the real directories made visible.
func mounts(paths []string) (args, visible []string) {
	seen := map[string]bool{}
	for _, p := range paths {
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		info, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				continue
			}
			args = append(args, "--symlink", target, p)
			continue
		}
		args = append(args, "--ro-bind", p, p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			visible = append(visible, real)
		}
	}
	return args, visible
}

// masks returns bwrap's arguments hiding the paths of hide that would be
// visible: an empty read-only tmpfs over a directory, /dev/null over a
// file.
func (s *Sandbox) masks(hide []string) []string {
	var args []string
	for _, h := range hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil || !under(real, s.visible...) {
			continue
		}
		info, err := os.Stat(real)
		if err != nil {
			continue
		}
		if info.IsDir() {
			args = append(args, "--tmpfs", real, "--remount-ro", real)
		} else {
			args = append(args, "--ro-bind", "/dev/null", real)
		}
	}
	return args
}

// under reports whether p is one of dirs or lies below one.
func under(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
