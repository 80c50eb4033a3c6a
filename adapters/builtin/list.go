package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

const (
	defaultListLimit    = 200
	maxListLimit        = 2000
	defaultListMaxDepth = 8 // when recursive and max_depth is not given
)

var listFilesDef = &toolDef{
	name:    "list_files",
	aliases: []string{"列出文件"},
	description: "List files and directories in the workspace, one per line, as paths relative to the " +
		"workspace. Directories end with \"/\", symlinks with \"@\", files show their size. " +
		"By default only the entries directly inside path are listed; set recursive (and max_depth) to go deeper.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"Directory relative to the workspace. Default \".\", the workspace itself."},` +
		`"recursive":{"type":"boolean","description":"List subdirectories too. Default false."},` +
		`"max_depth":{"type":"integer","minimum":1,"description":"How many levels to descend; 1 lists path's own entries. Default 1, or 8 when recursive."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":2000,"description":"Most entries to return. Default 200."}` +
		`}}`,
	readOnly: true,
	run:      runListFiles,
}

type listFilesArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
	MaxDepth  *int   `json:"max_depth"`
	Limit     *int   `json:"limit"`
}

// errListFull stops a walk at the entry limit.
var errListFull = errors.New("limit reached")

func runListFiles(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a listFilesArgs
	if err := decodeArgs(c.inv.Arguments, &a); err != nil {
		return errorf("%v", err)
	}
	depth := 1
	if a.Recursive {
		depth = defaultListMaxDepth
	}
	depth = intArg(a.MaxDepth, depth)
	limit := intArg(a.Limit, defaultListLimit)
	if depth < 1 {
		return errorf("max_depth must be 1 or more")
	}
	if limit < 1 || limit > maxListLimit {
		return errorf("limit must be between 1 and %d", maxListLimit)
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()
	info, err := root.Stat(r.rel)
	if err != nil {
		return errorf("%s: %s", r.name, describeErr(err))
	}
	if !info.IsDir() {
		return errorf("%s is not a directory; use read_file", r.name)
	}

	var lines []string
	baseDepth := strings.Count(r.rel, "/") + 1
	if r.rel == "." {
		baseDepth = 0
	}
	// fs.WalkDir does not follow symlinks: a symlinked directory is listed as
	// an entry, never entered.
	err = fs.WalkDir(root.FS(), r.rel, func(p string, d fs.DirEntry, err error) error {
		if p == r.rel {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if c.ws.denied(p) {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if len(lines) >= limit {
			return errListFull
		}
		if err != nil {
			lines = append(lines, p+"  [unreadable]")
			return nil
		}
		prefix := ""
		if dir := path.Dir(p); dir != "." {
			prefix = dir + "/"
		}
		lines = append(lines, prefix+describeEntry(d))
		if d.IsDir() && strings.Count(p, "/")+1-baseDepth >= depth {
			return fs.SkipDir
		}
		return nil
	})
	full := errors.Is(err, errListFull)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !full:
		return errorf("list %s: %s", r.name, scrub(err, r.root))
	}
	if len(lines) == 0 {
		return &orchestrator.ToolResult{Content: fmt.Sprintf("%s is empty", r.name)}, nil
	}
	out := strings.Join(lines, "\n") + "\n"
	if full {
		out += fmt.Sprintf("[stopped at %d entries; list a subdirectory or raise limit]\n", limit)
	}
	return &orchestrator.ToolResult{
		Content: out,
		Data:    map[string]any{"path": r.name, "entries": len(lines), "truncated": full},
	}, nil
}
