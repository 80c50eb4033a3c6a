package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPTC(t *testing.T) {
	needPython(t)
	s, _, dir, outside := escapeFixture(t)
	res := callTool(t, s, "ptc", map[string]any{"filename": "scripts/calc.py", "content": "print(6 * 7)\n"})
	wantOK(t, res, "exit code 0\n42\n")
	if got := readFile(t, filepath.Join(dir, "scripts/calc.py")); got != "print(6 * 7)\n" {
		t.Errorf("script = %q", got)
	}

	rec := &recorder{}
	res, err := callToolCtx(context.Background(), t, s, "programmatic_tool_call", map[string]any{"content": "import os\nprint(os.getcwd())", "workdir": "sub"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, res, filepath.Join(dir, "sub")+"\n")
	if !strings.Contains(rec.all(), "stdout:"+filepath.Join(dir, "sub")) {
		t.Errorf("ptc did not stream: %q", rec.all())
	}
	scripts, _ := filepath.Glob(filepath.Join(dir, ".wunder", "ptc", "ptc_*.py"))
	if len(scripts) != 1 {
		t.Errorf("default scripts %v, want one under .wunder/ptc", scripts)
	}

	wantErr(t, callTool(t, s, "ptc", map[string]any{"content": "raise SystemExit('boom')"}), "exit code 1", "boom")
	wantErr(t, callTool(t, s, "ptc", map[string]any{"content": "import time\ntime.sleep(30)", "timeout_s": 0.5}), "timed out")

	for _, tc := range []struct{ name, file, workdir, msg string }{
		{"no content", "", "", `"content" is required`},
		{"not .py", "x.txt", "", "must end in .py"},
		{"dotdot", "../x.py", "", "escapes the workspace"},
		{"nested dotdot", "a/../../x.py", "", "escapes the workspace"},
		{"absolute", "/tmp/x.py", "", "absolute"},
		{"NUL", "x\x00.py", "", "NUL"},
		{"symlink to /etc", "etc_link/x.py", "", "outside the workspace"},
		{"symlinked dir outside", "out_dir/x.py", "", "outside the workspace"},
		{"denied", "secrets/x.py", "", "denied"},
		{"denied .git", ".git/hooks/x.py", "", "denied"},
		{"workdir dotdot", "x.py", "../", "escapes the workspace"},
		{"workdir outside", "x.py", "out_dir", "outside the workspace"},
		{"workdir /etc", "x.py", "etc_link", "outside the workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"filename": tc.file, "workdir": tc.workdir}
			if tc.name != "no content" {
				args["content"] = fmt.Sprintf("open(%q, 'w')", filepath.Join(outside, "pwned"))
			}
			wantErr(t, callTool(t, s, "ptc", args), tc.msg)
		})
	}
	// Neither a refused script nor its file reached outside.
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("ptc wrote outside: %v", entries)
	}

	// ptc needs no allow_commands entry, but it needs Python.
	bare := newTestSet(t, Options{})
	wantOK(t, callTool(t, bare, "ptc", map[string]any{"content": "print('ok')"}), "ok")
	nopy := newTestSet(t, Options{Python: "wunder-no-such-python"})
	wantErr(t, callTool(t, nopy, "ptc", map[string]any{"content": "print(1)"}), "ptc is unavailable", "not on PATH")
	nopy = newTestSet(t, Options{Python: "/nonexistent/python3"})
	wantErr(t, callTool(t, nopy, "ptc", map[string]any{"content": "print(1)"}), "ptc is unavailable")
}
