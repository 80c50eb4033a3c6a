package config

import (
	"path/filepath"
	"time"
)

// Sandbox modes.
const (
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"
)

// Sandbox configures the bubblewrap sandbox of execute_command and ptc
// (see docs/security.md).
type Sandbox struct {
	// Mode is bwrap (confine every command) or none (run commands
	// unconfined, with the server's rights; logged as a warning at start).
	// With bwrap and no bubblewrap installed, the command tools are
	// refused with a message that says how to install it. Default bwrap.
	Mode string `yaml:"mode"`
	// Network keeps the host's network inside the sandbox. Default false.
	Network bool `yaml:"network"`
	// MemoryMB bounds the memory of one command (and its /tmp). Default 512.
	MemoryMB int `yaml:"memory_mb"`
	// Pids bounds the processes of one command. Default 64.
	Pids int `yaml:"pids"`
	// TimeoutSeconds (timeout_s) is a sandboxed command's timeout when the
	// call names none; 0 = security.command_timeout_s. Calls may ask for up
	// to security.max_command_timeout_s. Default 0.
	TimeoutSeconds int `yaml:"timeout_s"`
	// ROBinds are absolute host paths visible read-only inside the sandbox
	// at the same path, besides /usr, /bin, /sbin, /lib* and /etc (e.g. a
	// toolchain under /opt). Default [].
	ROBinds []string `yaml:"ro_binds"`
	// UID and GID are the unprivileged identity commands run as when
	// wunder runs as root; never 0. Default 65534 (nobody).
	UID int `yaml:"uid"`
	GID int `yaml:"gid"`
}

// Timeout is timeout_s as a duration; 0 means security.command_timeout_s.
func (s Sandbox) Timeout() time.Duration { return seconds(s.TimeoutSeconds) }

var sandboxModes = []string{SandboxBwrap, SandboxNone}

func sandboxDefaults() Sandbox {
	return Sandbox{
		Mode:     SandboxBwrap,
		MemoryMB: 512,
		Pids:     64,
		ROBinds:  []string{},
		UID:      65534,
		GID:      65534,
	}
}

func (c *Config) validateSandbox(v checker) {
	s := c.Sandbox
	v.oneOf("sandbox.mode", s.Mode, sandboxModes)
	atLeast(v, "sandbox.memory_mb", s.MemoryMB, 16)
	atLeast(v, "sandbox.pids", s.Pids, 1)
	if atLeast(v, "sandbox.timeout_s", s.TimeoutSeconds, 0) && s.TimeoutSeconds > c.Security.MaxCommandTimeoutSeconds {
		v.fail("sandbox.timeout_s", "must be at most security.max_command_timeout_s (%d), got %d",
			c.Security.MaxCommandTimeoutSeconds, s.TimeoutSeconds)
	}
	for i, p := range s.ROBinds {
		if !filepath.IsAbs(p) || filepath.Clean(p) == "/" {
			v.fail(indexPath("sandbox.ro_binds", i), "must be an absolute path other than /, got %s", quoteShort(p))
		}
	}
	atLeast(v, "sandbox.uid", s.UID, 1)
	atLeast(v, "sandbox.gid", s.GID, 1)
}
