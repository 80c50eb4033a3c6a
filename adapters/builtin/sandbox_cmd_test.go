package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// TestSandboxedCommandSemantics runs the everyday cases of
// TestExecuteCommandRuns and TestPTC in the sandbox: the model sees
// /workspace, relative paths behave as outside.
func TestSandboxedCommandSemantics(t *testing.T) {
	t.Setenv("WUNDER_TEST_SECRET", "s3cret")
	f := newSandboxed(t, sandbox.Options{})
	s := f.set

	res := callTool(t, s, "execute_command", map[string]any{"command": "pwd", "workdir": "sub"})
	wantOK(t, res, "exit code 0\n/workspace/sub\n")
	wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": "cat b.txt", "workdir": "sub"}), "bravo")
	wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": "cat sub/b.txt"}), "bravo")

	res = callTool(t, s, "execute_command", map[string]any{"command": "env"})
	wantOK(t, res)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(res.Content), "\n")[1:] {
		name, _, _ := strings.Cut(line, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	if got, want := strings.Join(names, " "), "HOME LANG PATH PWD PYTHONUNBUFFERED"; got != want { // bwrap sets PWD with --chdir
		t.Errorf("environment %s, want %s", got, want)
	}
	wantOK(t, res, "HOME=/workspace\n")
	if strings.Contains(res.Content, "s3cret") || strings.Contains(res.Content, "/root") {
		t.Errorf("the environment leaks the host's:\n%s", res.Content)
	}

	writeTree(t, f.alice, map[string]string{"tool.py": "#!/usr/bin/env python3\nimport os\nprint('tool ran in', os.getcwd())\n"})
	if err := os.Chmod(filepath.Join(f.alice, "tool.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, workdir string }{
		{"./tool.py", ""}, {"../tool.py", "sub"}, {filepath.Join(f.alice, "tool.py"), ""}, {"/workspace/tool.py", "sub"},
	} {
		wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": tc.cmd, "workdir": tc.workdir}), "tool ran in /workspace")
	}
	wantErr(t, callTool(t, s, "execute_command", map[string]any{"command": "/workspace/../etc/tool.py"}), "outside the workspace")

	res = callTool(t, s, "ptc", map[string]any{"content": "import os\nprint(os.getcwd(), open('b.txt').read())", "workdir": "sub"})
	wantOK(t, res, "/workspace/sub bravo")
	wantErr(t, callTool(t, s, "ptc", map[string]any{"content": "raise SystemExit('boom')"}), "exit code 1", "boom")
	res = callTool(t, s, "ptc", map[string]any{"content": "import time\ntime.sleep(30)", "timeout_s": 0.5})
	wantErr(t, res, "timed out")
	if d := res.Data.(map[string]any); d["timed_out"] != true {
		t.Errorf("data %v", d)
	}
	// The memory limit ends a command with the signal, not a bare code.
	small := newSandboxed(t, sandbox.Options{MemoryMB: 32})
	res = callTool(t, small.set, "ptc", map[string]any{"content": "b = bytearray(256 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('fit')"})
	if !res.IsError || strings.Contains(res.Content, "fit") {
		t.Errorf("256 MiB fit in a 32 MiB sandbox:\n%s", res.Content)
	}
}

// TestMissingBwrapRefusesCommands: with the sandbox configured and no
// bubblewrap, both command tools refuse and say how to fix it; the file
// tools still work.
func TestMissingBwrapRefusesCommands(t *testing.T) {
	s := newTestSet(t, Options{AllowCommands: []string{"echo"}, Sandbox: sandbox.New(&sandbox.Options{Bwrap: "wunder-no-such-bwrap"})})
	wantErr(t, callTool(t, s, "execute_command", map[string]any{"command": "echo hi"}),
		"execute_command is unavailable", "apt-get install bubblewrap", "sandbox.mode: none")
	wantErr(t, callTool(t, s, "ptc", map[string]any{"content": "print(1)"}),
		"ptc is unavailable", "apt-get install bubblewrap", "sandbox.mode: none")
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "a.txt", "content": "x"}))
}
