package builtin

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/internal/proc"
	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
)

var executeCommandDef = &toolDef{
	name:    "execute_command",
	aliases: []string{"执行命令"},
	description: "Run one program in the workspace and return its exit code and output (stdout and " +
		"stderr interleaved; long output keeps its head and tail). There is NO shell: no pipes, " +
		"redirection, ;, &&, $VAR, $(...), backticks or globbing; quote arguments with ' or \". Only " +
		"allowed programs may run. The program's HOME is the workspace and stdin is empty. " +
		"A non-zero exit code is reported as an error, with the output.",
	schema: `{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The program and its arguments, e.g. \"go test ./...\" or \"python3 -c 'print(1)'\"."},` +
		`"workdir":{"type":"string","description":"Working directory relative to the workspace. Default \".\"."},` +
		`"timeout_s":{"type":"number","exclusiveMinimum":0,"description":"Seconds before the command is killed. Default set by the server, capped by its maximum."}` +
		`},"required":["command"]}`,
	run: runExecuteCommand,
}

type executeArgs struct {
	Command  string   `json:"command"`
	Workdir  string   `json:"workdir"`
	TimeoutS *float64 `json:"timeout_s"`
}

func runExecuteCommand(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a executeArgs
	if err := decodeArgs(c.inv.Arguments, &a, "command"); err != nil {
		return errorf("%v", err)
	}
	words, err := splitCommand(a.Command)
	if err != nil {
		return errorf("%v", err)
	}
	timeout, err := c.timeout(a.TimeoutS)
	if err != nil {
		return errorf("%v", err)
	}
	if msg := c.allowed(words[0]); msg != "" {
		return errorf("%s", msg)
	}
	if err := c.sandboxReady(); err != nil {
		return errorf("execute_command is unavailable: %v", err)
	}
	dir, err := c.workdir(a.Workdir)
	if err != nil {
		return errorf("%v", err)
	}
	prog, err := c.program(words[0], dir)
	if err != nil {
		return errorf("%v", err)
	}
	return c.runTool(ctx, process{path: prog, args: words, dir: dir, home: dir.root, timeout: timeout})
}

// allowed checks argv[0]'s base name against AllowCommands; it returns a
// refusal message, or "".
func (c *call) allowed(argv0 string) string {
	allow := c.set.opts.AllowCommands
	if len(allow) == 0 {
		return "execute_command is disabled: no program is allowed (security.allow_commands is empty)"
	}
	if base := path.Base(filepath.ToSlash(argv0)); !slices.Contains(allow, base) {
		return fmt.Sprintf("program %q is not allowed; allowed programs: %s", base, strings.Join(allow, ", "))
	}
	return ""
}

// program resolves argv[0]: a bare name is looked up on PATH (inside the
// sandbox: the PATH entries visible there); a path (one with a "/") must
// resolve to an executable inside the workspace, relative to dir or
// absolute (on the host, or under /workspace when sandboxed).
func (c *call) program(argv0 string, dir resolved) (string, error) {
	if !strings.Contains(argv0, "/") {
		return lookPath(argv0, c.pathList())
	}
	rel := argv0
	if filepath.IsAbs(argv0) {
		root := dir.root
		if c.set.opts.Sandbox != nil && (argv0 == sandbox.WorkspaceDir || strings.HasPrefix(argv0, sandbox.WorkspaceDir+"/")) {
			root = sandbox.WorkspaceDir
		}
		r, err := filepath.Rel(root, filepath.Clean(argv0))
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return "", fmt.Errorf("program %q is outside the workspace; give a bare program name or a path inside the workspace", argv0)
		}
		rel = r
	} else {
		rel = path.Join(dir.rel, filepath.ToSlash(argv0))
	}
	r, err := c.ws.resolve(rel)
	if err != nil {
		return "", fmt.Errorf("program %q: %w", argv0, err)
	}
	if !isExecutable(r.abs) {
		return "", fmt.Errorf("program %q is not an executable file in the workspace", argv0)
	}
	return r.abs, nil
}

// workdir resolves a working directory argument ("" is the workspace).
func (c *call) workdir(rel string) (resolved, error) {
	r, err := c.ws.resolve(rel)
	if err != nil {
		return resolved{}, fmt.Errorf("workdir: %w", err)
	}
	info, err := os.Stat(r.abs)
	if err != nil {
		return resolved{}, fmt.Errorf("workdir %s: %s", r.name, describeErr(err))
	}
	if !info.IsDir() {
		return resolved{}, fmt.Errorf("workdir %s is not a directory", r.name)
	}
	return r, nil
}

// timeout turns timeout_s into a duration: the default when absent, capped
// at MaxCommandTimeout.
func (c *call) timeout(secs *float64) (time.Duration, error) {
	if secs == nil {
		return c.set.opts.CommandTimeout, nil
	}
	if *secs <= 0 {
		return 0, fmt.Errorf("timeout_s must be positive, got %v", *secs)
	}
	maxT := c.set.opts.MaxCommandTimeout
	if *secs >= maxT.Seconds() {
		return maxT, nil
	}
	return time.Duration(*secs * float64(time.Second)), nil
}

// runTool runs p and renders the outcome as a tool result; a non-zero exit
// or a timeout is an error result, and so is a sandbox that cannot run
// (with how to fix it). A cancelled ctx is returned as an error.
func (c *call) runTool(ctx context.Context, p process) (*orchestrator.ToolResult, error) {
	out, err := c.run(ctx, p)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("builtin: %s: %w", p.args[0], ctxErr)
	}
	if err != nil {
		return errorf("%s", scrub(err, p.home))
	}
	return &orchestrator.ToolResult{
		Content: out.describe(p.timeout),
		IsError: out.exitCode != 0 || out.timedOut || out.overQuota != nil,
		Data:    out.data(),
	}, nil
}

// pathList is PATH for commands: wunder's (or [proc.DefaultPath]), and
// inside the sandbox only its entries visible there.
func (c *call) pathList() string {
	p := os.Getenv("PATH")
	if p == "" {
		p = proc.DefaultPath
	}
	if sb := c.set.opts.Sandbox; sb != nil {
		return sb.Path(p)
	}
	return p
}

// sandboxReady is nil, or why commands cannot run: the sandbox is
// configured but bubblewrap is missing.
func (c *call) sandboxReady() error {
	if sb := c.set.opts.Sandbox; sb != nil {
		return sb.Check()
	}
	return nil
}
