package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
)

// skillDir is where a skill's folder appears in the sandbox.
const skillDir = "/skill"

// resultMark separates what the script printed from what run returned.
const resultMark = "\n\x1eWUNDER_SKILL_RESULT\x1e\n"

// maxOutput caps the output kept of an entry script.
const maxOutput = 256 << 10

// runner imports the entry script and calls run(payload); its arguments
// are the script's path and the payload as JSON.
const runner = `import importlib.util, json, os, sys
path, payload = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, os.path.dirname(path))
spec = importlib.util.spec_from_file_location("skill_entry", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if not callable(getattr(mod, "run", None)):
    sys.exit("the entry script defines no run(payload)")
out = mod.run(payload)
sys.stdout.flush()
sys.stdout.write("` + "\\n\\x1eWUNDER_SKILL_RESULT\\x1e\\n" + `")
sys.stdout.write(out if isinstance(out, str) else json.dumps(out, ensure_ascii=False))
`

// cappedBuffer keeps the first maxOutput bytes written to it.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// runEntry runs sk's entry script with the call's arguments as payload:
// in the sandbox (the skill's folder read-only at /skill, the workspace
// read-write at /workspace) or, without one, directly in the workspace.
func (s *Set) runEntry(ctx context.Context, sk *Skill, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	if s.opts.Workspace == nil {
		return orchestrator.ErrorResult("skill scripts are disabled: no workspace is configured"), nil
	}
	ws, err := s.opts.Workspace(inv.UserID)
	if err != nil {
		return orchestrator.ErrorResult(fmt.Sprintf("workspace unavailable: %v", err)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	var stdout, stderr cappedBuffer
	args := []string{s.opts.Python, "-c", runner}
	var wait func() error
	if sb := s.opts.Sandbox; sb != nil {
		env := []string{"HOME=" + sandbox.WorkspaceDir, "PATH=" + sb.Path(os.Getenv("PATH")), "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
		p, err := sb.Start(sandbox.Command{Workspace: ws, Args: append(args, skillDir+"/"+sk.Entry, string(inv.Arguments)), Env: env,
			Stdout: &stdout, Stderr: &stderr, ROBinds: []sandbox.Bind{{Host: sk.Dir, Path: skillDir}}})
		if err != nil {
			return orchestrator.ErrorResult(fmt.Sprintf("skill %s cannot run: %v", sk.Canonical(), err)), nil
		}
		wait = func() error {
			select {
			case <-p.Done():
			case <-ctx.Done():
				_ = p.Signal(syscall.SIGTERM)
				_ = p.Stop(100 * time.Millisecond)
			}
			return p.Err()
		}
	} else {
		cmd := exec.CommandContext(ctx, args[0], append(args[1:], filepath.Join(sk.Dir, sk.Entry), string(inv.Arguments))...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = ws, &stdout, &stderr
		cmd.Env = []string{"HOME=" + ws, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
		cmd.WaitDelay = time.Second
		wait = cmd.Run
	}
	err = wait()
	if ctx.Err() != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return orchestrator.ErrorResult(fmt.Sprintf("skill %s timed out after %v", sk.Canonical(), s.opts.Timeout)), nil
		}
		return nil, ctx.Err()
	}
	printed, result, found := strings.Cut(stdout.String(), resultMark)
	if err != nil || !found {
		msg := strings.TrimSpace(stderr.String())
		if i := len(msg) - 4000; i > 0 {
			msg = "…" + msg[i:]
		}
		return orchestrator.ErrorResult(fmt.Sprintf("skill %s failed: %v\n%s", sk.Canonical(), err, msg)), nil
	}
	if printed = strings.TrimSpace(printed); printed != "" {
		inv.Output("stdout", printed)
	}
	var data any
	if json.Unmarshal([]byte(result), &data) != nil {
		data = nil
	}
	return &orchestrator.ToolResult{Content: result, Data: data}, nil
}
