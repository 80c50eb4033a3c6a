package builtin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

var editFileDef = &toolDef{
	name:       "edit_file",
	editsFiles: true,
	aliases:    []string{"编辑文件"},
	description: "Edit a workspace text file by line numbers (as read_file shows them). Every edit " +
		"refers to the ORIGINAL line numbers, so several edits can be given at once without " +
		"recounting; edits may not overlap. Actions: replace (lines line..end_line become content), " +
		"delete (lines line..end_line), insert_before / insert_after (content goes before/after line; " +
		"insert_before with line = last+1 appends, insert_after with line 0 prepends). content is split " +
		"into lines; one trailing newline is ignored.",
	schema: `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path relative to the workspace."},` +
		`"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["replace","insert_before","insert_after","delete"]},` +
		`"line":{"type":"integer","minimum":0,"description":"1-based line number in the original file."},` +
		`"end_line":{"type":"integer","minimum":1,"description":"Last line of the range for replace/delete, inclusive. Default: line."},` +
		`"content":{"type":"string","description":"New text for replace and insert actions."}` +
		`},"required":["action","line"]}}` +
		`},"required":["path","edits"]}`,
	run: runEditFile,
}

type editFileArgs struct {
	Path  string `json:"path"`
	Edits []edit `json:"edits"`
}

type edit struct {
	Action  string  `json:"action"`
	Line    *int    `json:"line"`
	EndLine *int    `json:"end_line"`
	Content *string `json:"content"`
}

func runEditFile(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a editFileArgs
	if err := decodeArgs(c.inv.Arguments, &a, "path", "edits"); err != nil {
		return errorf("%v", err)
	}
	if len(a.Edits) == 0 {
		return errorf("edits is empty")
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
	eol := "\n"
	if strings.Contains(text, "\r\n") {
		eol = "\r\n"
	}
	lines, finalEOL := splitLines(text)
	out, err := applyEdits(lines, a.Edits)
	if err != nil {
		return errorf("%s: %v", r.name, err)
	}
	result := strings.Join(out, eol)
	if len(out) > 0 && (finalEOL || len(lines) == 0) {
		result += eol
	}
	if limit := c.set.opts.MaxFileBytes; len(result) > limit {
		return errorf("the result would be %s, over the %s limit", formatSize(int64(len(result))), formatSize(int64(limit)))
	}
	if err := c.set.writeCounted(ctx, root, r, []byte(result), perm, int64(len(data))); err != nil {
		return errorf("write %s: %s", r.name, scrub(err, r.root))
	}
	return &orchestrator.ToolResult{
		Content: c.diagnose(ctx, fmt.Sprintf("applied %d edit(s) to %s; it now has %d lines (was %d)", len(a.Edits), r.name, len(out), len(lines)), r.abs),
		Data:    map[string]any{"path": r.name, "edits": len(a.Edits), "lines": len(out)},
	}, nil
}

// splitLines splits text into lines without their ends ("\n" or "\r\n") and
// reports whether the last line ended with one.
func splitLines(text string) ([]string, bool) {
	if text == "" {
		return nil, false
	}
	final := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, final
}

// contentLines splits an edit's content: "" is no lines, one trailing
// newline is dropped, so "\n" is one empty line.
func contentLines(s *string) []string {
	if s == nil || *s == "" {
		return nil
	}
	lines, _ := splitLines(*s)
	return lines
}

// span is a validated edit: a range [start, end] of original lines to
// replace or delete, or an insertion at gap (between lines gap and gap+1).
type span struct {
	start, end int // range edits; 0 for inserts
	gap        int // insert edits; -1 for ranges
	lines      []string
	order      int
}

// applyEdits applies edits, all in original line numbers, to lines.
func applyEdits(lines []string, edits []edit) ([]string, error) {
	n := len(lines)
	var ranges, inserts []span
	for i, e := range edits {
		if e.Line == nil {
			return nil, fmt.Errorf("edit %d: line is required", i+1)
		}
		line := *e.Line
		switch e.Action {
		case "replace", "delete":
			end := intArg(e.EndLine, line)
			if line < 1 || end < line || end > n {
				return nil, fmt.Errorf("edit %d (%s): lines %d-%d are not within 1-%d", i+1, e.Action, line, end, n)
			}
			if e.Action == "replace" && e.Content == nil {
				return nil, fmt.Errorf("edit %d (replace): content is required (use delete to remove lines)", i+1)
			}
			ranges = append(ranges, span{start: line, end: end, gap: -1, lines: contentLines(e.Content), order: i})
		case "insert_before", "insert_after":
			gap := line - 1
			if e.Action == "insert_after" {
				gap = line
			}
			if gap < 0 || gap > n {
				return nil, fmt.Errorf("edit %d (%s): line %d is not within the file (%d lines)", i+1, e.Action, line, n)
			}
			if e.Content == nil {
				return nil, fmt.Errorf("edit %d (%s): content is required", i+1, e.Action)
			}
			inserts = append(inserts, span{gap: gap, lines: contentLines(e.Content), order: i})
		default:
			return nil, fmt.Errorf("edit %d: unknown action %q (want replace, insert_before, insert_after or delete)", i+1, e.Action)
		}
	}
	slices.SortFunc(ranges, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	for i := 1; i < len(ranges); i++ {
		if p, q := ranges[i-1], ranges[i]; q.start <= p.end {
			return nil, fmt.Errorf("edits %d and %d overlap (lines %d-%d and %d-%d)", p.order+1, q.order+1, p.start, p.end, q.start, q.end)
		}
	}
	for _, in := range inserts {
		for _, rg := range ranges {
			if rg.start <= in.gap && in.gap < rg.end {
				return nil, fmt.Errorf("edit %d inserts inside lines %d-%d, which edit %d changes", in.order+1, rg.start, rg.end, rg.order+1)
			}
		}
	}
	// Stable sort keeps the request order of inserts at the same gap.
	slices.SortStableFunc(inserts, func(a, b span) int { return cmp.Compare(a.gap, b.gap) })

	out := make([]string, 0, n)
	ri, ii := 0, 0
	emitGap := func(g int) {
		for ; ii < len(inserts) && inserts[ii].gap == g; ii++ {
			out = append(out, inserts[ii].lines...)
		}
	}
	for ln := 1; ln <= n; ln++ {
		emitGap(ln - 1)
		if ri < len(ranges) && ranges[ri].start == ln {
			out = append(out, ranges[ri].lines...)
			ln = ranges[ri].end
			ri++
			continue
		}
		out = append(out, lines[ln-1])
	}
	emitGap(n)
	return out, nil
}
