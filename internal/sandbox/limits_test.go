package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// fakeTree writes files (path -> content) under a new directory.
func fakeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLimitsDetection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tree   map[string]string
		self   string
		want   string
		parent string // the per-call parent that must exist, relative to the tree
	}{
		{
			name: "v2 delegated",
			tree: map[string]string{"cgroup.controllers": "cpu pids memory", "svc/cgroup.subtree_control": "pids memory"},
			self: "0::/svc\n", want: "cgroup v2", parent: "svc/wunder-sandbox",
		},
		{
			name: "hybrid: v2 without controllers, v1 pids and memory",
			tree: map[string]string{"unified/cgroup.controllers": "", "unified/cgroup.subtree_control": "",
				"pids/tasks": "", "memory/tasks": "", "memory/box/1/cgroup.procs": ""},
			self: "8:pids:/\n4:memory:/box/1\n0::/\n", want: "cgroup v1", parent: "memory/box/1/wunder-sandbox",
		},
		{
			name: "v2 not delegated, no v1",
			tree: map[string]string{"cgroup.controllers": "cpu pids memory", "svc/cgroup.subtree_control": "cpu"},
			self: "0::/svc\n", want: "rlimit",
		},
		{
			name: "v1 without a memory hierarchy",
			tree: map[string]string{"pids/tasks": ""},
			self: "8:pids:/\n0::/\n", want: "rlimit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := fakeTree(t, tt.tree)
			self := filepath.Join(t.TempDir(), "cgroup")
			if err := os.WriteFile(self, []byte(tt.self), 0o644); err != nil {
				t.Fatal(err)
			}
			s := sandbox.NewWithCgroups(sandbox.Options{}, root, self)
			if got := s.Limits(); got != tt.want {
				t.Fatalf("Limits() = %q, want %q", got, tt.want)
			}
			if tt.parent != "" {
				if info, err := os.Stat(filepath.Join(root, tt.parent)); err != nil || !info.IsDir() {
					t.Errorf("per-call parent %s not created: %v", tt.parent, err)
				}
			}
			if tt.want == "cgroup v2" {
				b, _ := os.ReadFile(filepath.Join(root, tt.parent, "cgroup.subtree_control"))
				if !strings.Contains(string(b), "+pids") || !strings.Contains(string(b), "+memory") {
					t.Errorf("controllers not enabled for the per-call cgroups: %q", b)
				}
			}
		})
	}
}

func fmtSscan(out, format string, args ...any) (int, error) {
	for _, line := range strings.Split(out, "\n") {
		if n, err := fmt.Sscanf(line, format, args...); err == nil {
			return n, nil
		}
	}
	return fmt.Sscanf(out, format, args...)
}

// TestStaleCallCgroupsAreRemoved: cgroups of calls of a dead wunder are
// removed at start; those of a live process stay.
func TestStaleCallCgroupsAreRemoved(t *testing.T) {
	t.Parallel()
	live := fmt.Sprintf("call-%d-1", os.Getpid())
	root := fakeTree(t, map[string]string{"pids/tasks": "", "memory/tasks": ""})
	for _, d := range []string{"pids/wunder-sandbox/call-2147483647-3", "pids/wunder-sandbox/" + live, "memory/wunder-sandbox/call-2147483647-3"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(t.TempDir(), "cgroup")
	if err := os.WriteFile(self, []byte("8:pids:/\n4:memory:/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := sandbox.NewWithCgroups(sandbox.Options{}, root, self); s.Limits() != "cgroup v1" {
		t.Fatalf("Limits() = %q", s.Limits())
	}
	for _, d := range []string{"pids/wunder-sandbox/call-2147483647-3", "memory/wunder-sandbox/call-2147483647-3"} {
		if _, err := os.Stat(filepath.Join(root, d)); err == nil {
			t.Errorf("stale %s was not removed", d)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "pids/wunder-sandbox", live)); err != nil {
		t.Errorf("the cgroup of a live process was removed: %v", err)
	}
}
