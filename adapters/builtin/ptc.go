package builtin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

var ptcDef = &toolDef{
	name:    "ptc",
	aliases: []string{"programmatic_tool_call"},
	description: "Programmatic tool call: write a Python script into the workspace and run it with " +
		"the server's Python interpreter, returning its exit code and output (streamed while it runs). " +
		"Use it for calculations, data processing and multi-step file work. The script runs with " +
		"the workspace as HOME, no stdin and the same time limit as execute_command.",
	schema: `{"type":"object","properties":{` +
		`"content":{"type":"string","description":"The Python source to run."},` +
		`"filename":{"type":"string","description":"Where to save the script, relative to the workspace; must end in .py. Default: a new file under .wunder/ptc/."},` +
		`"workdir":{"type":"string","description":"Working directory relative to the workspace. Default \".\"."},` +
		`"timeout_s":{"type":"number","exclusiveMinimum":0,"description":"Seconds before the script is killed. Default set by the server, capped by its maximum."}` +
		`},"required":["content"]}`,
	run: runPTC,
}

type ptcArgs struct {
	Filename string   `json:"filename"`
	Content  string   `json:"content"`
	Workdir  string   `json:"workdir"`
	TimeoutS *float64 `json:"timeout_s"`
}

func runPTC(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a ptcArgs
	if err := decodeArgs(c.inv.Arguments, &a, "content"); err != nil {
		return errorf("%v", err)
	}
	if err := c.sandboxReady(); err != nil {
		return errorf("ptc is unavailable: %v", err)
	}
	python, err := c.python()
	if err != nil {
		return errorf("%v", err)
	}
	timeout, err := c.timeout(a.TimeoutS)
	if err != nil {
		return errorf("%v", err)
	}
	if a.Filename == "" {
		var rnd [4]byte
		_, _ = rand.Read(rnd[:])
		a.Filename = fmt.Sprintf(".wunder/ptc/ptc_%s_%s.py", time.Now().UTC().Format("20060102T150405"), hex.EncodeToString(rnd[:]))
	}
	if !strings.HasSuffix(a.Filename, ".py") {
		return errorf("filename %q must end in .py", a.Filename)
	}
	if limit := c.set.opts.MaxFileBytes; len(a.Content) > limit {
		return errorf("content is %s, over the %s limit", formatSize(int64(len(a.Content))), formatSize(int64(limit)))
	}
	dir, err := c.workdir(a.Workdir)
	if err != nil {
		return errorf("%v", err)
	}
	root, script, err := c.openTarget(a.Filename)
	if err != nil {
		return errorf("filename: %v", err)
	}
	var old int64
	if info, serr := root.Lstat(script.rel); serr == nil && info.Mode().IsRegular() {
		old = info.Size()
	}
	err = c.set.writeCounted(ctx, root, script, []byte(a.Content), newFilePerm, old)
	root.Close()
	if err != nil {
		return errorf("write %s: %s", script.name, scrub(err, script.root))
	}
	// The script is named relative to the working directory, a path that
	// holds inside the sandbox as well as outside.
	arg, err := filepath.Rel(dir.abs, script.abs)
	if err != nil {
		return errorf("filename: %s", scrub(err, script.root))
	}
	return c.runTool(ctx, process{
		path:    python,
		args:    []string{filepath.Base(python), arg},
		dir:     dir,
		home:    dir.root,
		timeout: timeout,
	})
}

// python finds the interpreter ptc runs: Options.Python as an absolute
// path (visible inside the sandbox, when there is one), or a name on PATH.
func (c *call) python() (string, error) {
	py := c.set.opts.Python
	if filepath.IsAbs(py) {
		if !isExecutable(py) {
			return "", fmt.Errorf("ptc is unavailable: the Python interpreter %s is not an executable file", py)
		}
		if sb := c.set.opts.Sandbox; sb != nil && !sb.Visible(py) {
			return "", fmt.Errorf("ptc is unavailable: the Python interpreter %s is not visible in the sandbox (add its directory to sandbox.ro_binds)", py)
		}
		return py, nil
	}
	p, err := lookPath(py, c.pathList())
	if err != nil {
		return "", fmt.Errorf("ptc is unavailable: the Python interpreter %q is not on PATH", py)
	}
	return p, nil
}
