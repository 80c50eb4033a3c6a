package builtin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/bwrap"

	"github.com/wunder/wunder/internal/sandbox"
)

// needBwrap is bwrap.Need for this package's tests.
func needBwrap(t *testing.T) { bwrap.Need(t, "the sandbox escape corpus") }

// sandboxed is a Set whose commands run in the sandbox, for alice, with
// bob's workspace next to hers under the same root, inside a data dir
// that also holds a database and a configuration file.
type sandboxed struct {
	set        *Set
	data       string // the data dir
	root       string // data/workspaces
	alice, bob string // the two workspaces
	bobSecret  string // bob/secret.txt
}

const bobSecret = "BOB SECRET 7f3a"

func newSandboxed(t *testing.T, sbOpts sandbox.Options) *sandboxed {
	t.Helper()
	needBwrap(t)
	// The data dir and its parent are 0700, as a server's are: the
	// sandbox user cannot pass through them, and the commands run all the
	// same (the staged bind of internal/sandbox).
	data := t.TempDir()
	writeTree(t, data, map[string]string{"wunder.db": "DATABASE", "config/wunder.yaml": "security: {api_key: k}\n"})
	root := filepath.Join(data, "workspaces")
	sbOpts.Hide = append(sbOpts.Hide, data)
	s := newTestSet(t, Options{
		Root: root, Sandbox: sandbox.New(&sbOpts), DenyGlobs: testDeny,
		AllowCommands: []string{"cat", "ls", "sh", "python3", "echo", "env", "pwd", "id", "ln", "touch", "readlink", "tool.py"},
	})
	f := &sandboxed{set: s, data: data, root: root, alice: workspaceDir(t, s), bob: filepath.Join(root, "bob")}
	f.bobSecret = filepath.Join(f.bob, "secret.txt")
	writeTree(t, f.bob, map[string]string{"secret.txt": bobSecret + "\n"})
	writeTree(t, f.alice, map[string]string{"sub/b.txt": "bravo\n"})
	return f
}

// run calls execute_command for alice.
func (f *sandboxed) run(t *testing.T, command string, extra ...any) (content string, isError bool) {
	t.Helper()
	args := map[string]any{"command": command}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	res := callTool(t, f.set, "execute_command", args)
	return res.Content, res.IsError
}

// nsMembers lists the host pids of the processes in the PID namespace ns
// ("pid:[4026532180]", as readlink /proc/self/ns/pid prints it inside).
func nsMembers(ns string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); err == nil && l == ns && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// wantNamespaceGone fails unless every process of the PID namespace ns is
// gone. The kernel kills a namespace's members asynchronously once its
// init dies; the bounded poll waits for that OS fact, it orders nothing.
func wantNamespaceGone(t *testing.T, ns string) {
	t.Helper()
	ns = strings.TrimSpace(ns)
	if !strings.HasPrefix(ns, "pid:[") {
		t.Fatalf("no PID namespace id recorded: %q", ns)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(nsMembers(ns)) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := nsMembers(ns); len(left) > 0 {
		t.Errorf("processes %v of the sandbox's namespace %s outlived the call", left, ns)
	}
}
