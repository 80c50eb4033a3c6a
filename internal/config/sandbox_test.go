package config_test

import (
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

func TestSandboxValidation(t *testing.T) {
	t.Parallel()
	c := config.Default()
	c.Derive()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if c.Sandbox.Mode != config.SandboxBwrap || c.Sandbox.Pids != 64 || c.Sandbox.MemoryMB != 512 || c.Sandbox.UID != 65534 {
		t.Errorf("sandbox defaults %+v", c.Sandbox)
	}
	c.Sandbox = config.Sandbox{Mode: "docker", MemoryMB: 1, Pids: 0, TimeoutSeconds: 601,
		ROBinds: []string{"opt/go", "/"}, UID: 0, GID: -1}
	err := c.Validate()
	if err == nil {
		t.Fatal("bad sandbox section accepted")
	}
	for _, want := range []string{
		`sandbox.mode: must be one of bwrap, none, got "docker"`,
		"sandbox.memory_mb: must be at least 16, got 1",
		"sandbox.pids: must be at least 1, got 0",
		"sandbox.timeout_s: must be at most security.max_command_timeout_s (600), got 601",
		`sandbox.ro_binds[0]: must be an absolute path other than /, got "opt/go"`,
		`sandbox.ro_binds[1]: must be an absolute path other than /, got "/"`,
		"sandbox.uid: must be at least 1, got 0",
		"sandbox.gid: must be at least 1, got -1",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
