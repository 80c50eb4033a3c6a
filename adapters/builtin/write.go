package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// newFilePerm is the mode of files the tools create.
const newFilePerm fs.FileMode = 0o640

var writeFileDef = &toolDef{
	name:       "write_file",
	editsFiles: true,
	aliases:    []string{"写入文件"},
	description: "Create or overwrite a text file in the workspace with the given content. " +
		"Missing parent directories are created. The write is atomic: the file holds the old or " +
		"the new content, never a mix. To change part of an existing file prefer replace_text or edit_file.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"content":{"type":"string","description":"The complete new content of the file."}` +
		`},"required":["path","content"]}`,
	run: runWriteFile,
}

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func runWriteFile(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a writeFileArgs
	if err := decodeArgs(c.inv.Arguments, &a, "path", "content"); err != nil {
		return errorf("%v", err)
	}
	if limit := c.set.opts.MaxFileBytes; len(a.Content) > limit {
		return errorf("content is %s, over the %s limit", formatSize(int64(len(a.Content))), formatSize(int64(limit)))
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()
	if r.rel == "." {
		return errorf("path names the workspace itself; give a file path")
	}
	perm, verb, old := newFilePerm, "created", int64(0)
	switch info, err := root.Stat(r.rel); {
	case err == nil && info.IsDir():
		return errorf("%s is a directory", r.name)
	case err == nil && !info.Mode().IsRegular():
		return errorf("%s is not a regular file", r.name)
	case err == nil:
		perm, verb, old = info.Mode().Perm(), "overwrote", info.Size()
	case !errors.Is(err, fs.ErrNotExist):
		return errorf("%s: %s", r.name, describeErr(err))
	}
	if err := c.set.writeCounted(ctx, root, r, []byte(a.Content), perm, old); err != nil {
		return errorf("write %s: %s", r.name, scrub(err, r.root))
	}
	return &orchestrator.ToolResult{
		Content: c.diagnose(ctx, fmt.Sprintf("%s %s (%d bytes)", verb, r.name, len(a.Content)), r.abs),
		Data:    map[string]any{"path": r.name, "bytes": len(a.Content)},
	}, nil
}

var replaceTextDef = &toolDef{
	name:       "replace_text",
	editsFiles: true,
	aliases:    []string{"替换文本"},
	description: "Replace exact text in a workspace file. old_text must match the file exactly, " +
		"including whitespace and indentation, and (unless replace_all or expected_replacements is set) " +
		"occur exactly once: include enough surrounding lines to make it unique.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"old_text":{"type":"string","description":"The exact text to find."},` +
		`"new_text":{"type":"string","description":"The text to put in its place (may be empty)."},` +
		`"replace_all":{"type":"boolean","description":"Replace every occurrence. Default false."},` +
		`"expected_replacements":{"type":"integer","minimum":1,"description":"How many occurrences there must be; the call fails otherwise."}` +
		`},"required":["path","old_text","new_text"]}`,
	run: runReplaceText,
}

type replaceTextArgs struct {
	Path                 string `json:"path"`
	OldText              string `json:"old_text"`
	NewText              string `json:"new_text"`
	ReplaceAll           bool   `json:"replace_all"`
	ExpectedReplacements *int   `json:"expected_replacements"`
}

func runReplaceText(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a replaceTextArgs
	if err := decodeArgs(c.inv.Arguments, &a, "path", "old_text", "new_text"); err != nil {
		return errorf("%v", err)
	}
	if a.OldText == "" {
		return errorf("old_text is empty; use write_file or edit_file to add text")
	}
	if a.ExpectedReplacements != nil && *a.ExpectedReplacements < 1 {
		return errorf("expected_replacements must be 1 or more")
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()
	data, perm, err := readText(root, r, c.set.opts.MaxFileBytes)
	if err != nil {
		return errorf("%v", err)
	}
	text := string(data)
	oldText, newText := a.OldText, a.NewText
	n := strings.Count(text, oldText)
	if n == 0 && strings.Contains(text, "\r\n") && !strings.Contains(oldText, "\r") {
		// The file has CRLF line ends; the model wrote LF.
		oldText = strings.ReplaceAll(oldText, "\n", "\r\n")
		newText = strings.ReplaceAll(newText, "\n", "\r\n")
		n = strings.Count(text, oldText)
	}
	switch {
	case n == 0:
		return errorf("old_text not found in %s; read the file and copy the text exactly (whitespace matters)", r.name)
	case a.ExpectedReplacements != nil && n != *a.ExpectedReplacements:
		return errorf("old_text occurs %d times in %s, expected %d", n, r.name, *a.ExpectedReplacements)
	case n > 1 && !a.ReplaceAll && a.ExpectedReplacements == nil:
		return errorf("old_text occurs %d times in %s; add surrounding text to make it unique, or set replace_all", n, r.name)
	}
	out := strings.ReplaceAll(text, oldText, newText)
	if limit := c.set.opts.MaxFileBytes; len(out) > limit {
		return errorf("the result would be %s, over the %s limit", formatSize(int64(len(out))), formatSize(int64(limit)))
	}
	if err := c.set.writeCounted(ctx, root, r, []byte(out), perm, int64(len(data))); err != nil {
		return errorf("write %s: %s", r.name, scrub(err, r.root))
	}
	return &orchestrator.ToolResult{
		Content: c.diagnose(ctx, fmt.Sprintf("replaced %d occurrence(s) in %s", n, r.name), r.abs),
		Data:    map[string]any{"path": r.name, "replacements": n},
	}, nil
}
