package builtin

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

var readFileDef = &toolDef{
	name:    "read_file",
	aliases: []string{"读取文件"},
	description: "Read a text file in the workspace. The result starts with a header line " +
		"(path, lines shown, total lines) followed by the content, one line per row, each prefixed " +
		"with its 1-based line number and a tab (the number and tab are not part of the file). " +
		"Use start_line/end_line to read a part of a long file. Binary files are refused.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"start_line":{"type":"integer","minimum":1,"description":"First line to show, 1-based. Default 1."},` +
		`"end_line":{"type":"integer","minimum":1,"description":"Last line to show, inclusive. Default: the end of the file."}` +
		`},"required":["path"]}`,
	readOnly: true,
	run:      runReadFile,
}

type readFileArgs struct {
	Path      string `json:"path"`
	StartLine *int   `json:"start_line"`
	EndLine   *int   `json:"end_line"`
}

func runReadFile(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a readFileArgs
	if err := decodeArgs(c.inv.Arguments, &a, "path"); err != nil {
		return errorf("%v", err)
	}
	start, end := intArg(a.StartLine, 1), intArg(a.EndLine, 0)
	if start < 1 {
		return errorf("start_line must be 1 or more, got %d", start)
	}
	if a.EndLine != nil && end < start {
		return errorf("end_line (%d) is before start_line (%d)", end, start)
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()
	f, err := root.Open(r.rel)
	if err != nil {
		return errorf("%s: %s", r.name, describeErr(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return errorf("%s: %s", r.name, describeErr(err))
	}
	if info.IsDir() {
		return errorf("%s is a directory; use list_files", r.name)
	}
	if !info.Mode().IsRegular() {
		return errorf("%s is not a regular file", r.name)
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return errorf("%s: %s", r.name, describeErr(err))
	}
	if isBinary(head[:n]) {
		return errorf("%s is a binary file (%s); read_file only shows text", r.name, formatSize(info.Size()))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return errorf("%s: %s", r.name, describeErr(err))
	}
	return readLines(ctx, c, r, f, info.Size(), start, end)
}

// readLines renders lines start..end (end 0: to the end) of f, capped at
// MaxFileBytes of output.
func readLines(ctx context.Context, c *call, r resolved, f io.Reader, size int64, start, end int) (*orchestrator.ToolResult, error) {
	limit := c.set.opts.MaxFileBytes
	sc := newLineScanner(f, limit)
	var body strings.Builder
	lineNo, first, last := 0, 0, 0
	capped, complete := false, true
	for sc.next() {
		lineNo++
		if lineNo < start {
			continue
		}
		if end > 0 && lineNo > end {
			// Count the rest only when that is cheap.
			if size > int64(limit) {
				complete = false
				break
			}
			continue
		}
		if capped {
			if size > int64(limit) {
				complete = false
				break
			}
			continue
		}
		row := fmt.Sprintf("%6d\t%s", lineNo, sc.line)
		cut := sc.cut
		if body.Len()+len(row)+1 > limit {
			capped = true
			if first != 0 {
				continue
			}
			// Show at least part of the first line.
			row, cut = row[:completePrefix([]byte(row[:limit-1]))], true
		}
		if first == 0 {
			first = lineNo
		}
		last = lineNo
		body.WriteString(row)
		body.WriteByte('\n')
		if cut {
			body.WriteString("\t[line cut: longer than the read limit]\n")
		}
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if sc.err != nil {
		return errorf("%s: %s", r.name, describeErr(sc.err))
	}
	total := lineNo
	var hdr string
	switch {
	case total == 0:
		hdr = fmt.Sprintf("%s: empty file", r.name)
	case first == 0:
		return errorf("%s has %d lines; start_line %d is past the end", r.name, total, start)
	case complete:
		hdr = fmt.Sprintf("%s: lines %d-%d of %d", r.name, first, last, total)
	default:
		hdr = fmt.Sprintf("%s: lines %d-%d (file is %s; more lines follow)", r.name, first, last, formatSize(size))
	}
	out := hdr + "\n" + body.String()
	if capped {
		out += fmt.Sprintf("[output capped at %s; continue with start_line=%d]\n", formatSize(int64(limit)), last+1)
	}
	data := map[string]any{"path": r.name, "start_line": first, "end_line": last, "truncated": capped}
	if complete {
		data["total_lines"] = total
	}
	return &orchestrator.ToolResult{Content: out, Data: data}, nil
}
