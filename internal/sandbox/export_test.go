package sandbox

// NewWithCgroups is New with the cgroup mount point and /proc/self/cgroup
// replaced, for detection tests on a fake tree.
func NewWithCgroups(opts Options, root, self string) *Sandbox {
	opts.cgroupRoot, opts.selfCgroup = root, self
	return New(&opts)
}

// Args is bwrap's argument list for c.
func (s *Sandbox) Args(c Command) []string { return s.args(c, "/workspace/"+c.Dir, 3, 4) }

// Own is the workspace re-owning step.
var Own = own

// CapSysAdmin is the capability check of staging.
var CapSysAdmin = capSysAdmin
