package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

const (
	defaultSearchResults = 100
	maxSearchResults     = 1000
	maxMatchLineChars    = 300 // a matching line is cut to this many characters
)

var searchContentDef = &toolDef{
	name:    "search_content",
	aliases: []string{"搜索内容"},
	description: "Search the text files of the workspace for a string (or a regular expression with " +
		"regex: true). Returns one match per line as \"path:line: text\". Binary files, files over " +
		"the read limit and denied paths are skipped; symlinks are not followed.",
	schema: `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"Text to find; a Go (RE2) regular expression when regex is true."},` +
		`"regex":{"type":"boolean","description":"Treat query as a regular expression. Default false."},` +
		`"ignore_case":{"type":"boolean","description":"Match case-insensitively. Default false."},` +
		`"path":{"type":"string","description":"File or directory to search, relative to the workspace. Default \".\"."},` +
		`"glob":{"type":"string","description":"Only search files matching this pattern, e.g. \"*.go\" (matched against the file name) or \"src/**/*.ts\" (matched against the path)."},` +
		`"max_results":{"type":"integer","minimum":1,"maximum":1000,"description":"Most matches to return. Default 100."}` +
		`},"required":["query"]}`,
	readOnly: true,
	run:      runSearchContent,
}

type searchArgs struct {
	Query      string `json:"query"`
	Regex      bool   `json:"regex"`
	IgnoreCase bool   `json:"ignore_case"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	MaxResults *int   `json:"max_results"`
}

var errSearchFull = errors.New("max results reached")

func runSearchContent(ctx context.Context, c *call) (*orchestrator.ToolResult, error) {
	var a searchArgs
	if err := decodeArgs(c.inv.Arguments, &a, "query"); err != nil {
		return errorf("%v", err)
	}
	if a.Query == "" {
		return errorf("query is empty")
	}
	maxResults := intArg(a.MaxResults, defaultSearchResults)
	if maxResults < 1 || maxResults > maxSearchResults {
		return errorf("max_results must be between 1 and %d", maxSearchResults)
	}
	if a.Glob != "" {
		if err := checkGlob(a.Glob); err != nil {
			return errorf("glob %q: %v", a.Glob, err)
		}
	}
	expr := a.Query
	if !a.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("query is not a valid regular expression: %v", err)
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()

	var matches []string
	skipped := 0
	fsys := root.FS()
	err = fs.WalkDir(fsys, r.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == r.rel {
				return err
			}
			return nil // unreadable directory: skip
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if c.ws.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (a.Glob != "" && !globSelects(a.Glob, p)) {
			return nil
		}
		found, ok := searchFile(root, p, re, c.set.opts.MaxFileBytes, maxResults-len(matches))
		if !ok {
			skipped++
		}
		matches = append(matches, found...)
		if len(matches) >= maxResults {
			return errSearchFull
		}
		return nil
	})
	full := errors.Is(err, errSearchFull)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !full:
		return errorf("search %s: %s", r.name, describeErr(err))
	}
	var out strings.Builder
	if len(matches) == 0 {
		fmt.Fprintf(&out, "no matches for %q in %s\n", a.Query, r.name)
	}
	for _, m := range matches {
		out.WriteString(m)
		out.WriteByte('\n')
	}
	if full {
		fmt.Fprintf(&out, "[stopped at %d matches; narrow path or glob, or raise max_results]\n", maxResults)
	}
	if skipped > 0 {
		fmt.Fprintf(&out, "[skipped %d binary, unreadable or oversized file(s)]\n", skipped)
	}
	return &orchestrator.ToolResult{
		Content: out.String(),
		Data:    map[string]any{"matches": len(matches), "truncated": full, "skipped_files": skipped},
	}, nil
}

// globSelects matches a file against the glob filter: a pattern without "/"
// matches the file name, one with "/" the whole path.
func globSelects(glob, p string) bool {
	if !strings.Contains(glob, "/") {
		return matchGlob(glob, path.Base(p))
	}
	return matchGlob(glob, p)
}

// searchFile returns up to limit "path:line: text" matches of re in file p;
// ok is false when the file was skipped (binary, too big, unreadable).
func searchFile(root *os.Root, p string, re *regexp.Regexp, maxBytes, limit int) (found []string, ok bool) {
	info, err := root.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > int64(maxBytes) {
		return nil, false
	}
	data, err := root.ReadFile(p)
	if err != nil || len(data) > maxBytes || isBinary(data) {
		return nil, false
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if !re.Match(line) {
			continue
		}
		found = append(found, fmt.Sprintf("%s:%d: %s", p, i+1, clipLine(line)))
		if len(found) >= limit {
			break
		}
	}
	return found, true
}

// clipLine trims a line for display, cutting long ones on a rune boundary.
func clipLine(line []byte) string {
	s := strings.TrimRight(string(line), "\r")
	if utf8.RuneCountInString(s) <= maxMatchLineChars {
		return s
	}
	n := 0
	for i := range s {
		if n == maxMatchLineChars {
			return s[:i] + " ..."
		}
		n++
	}
	return s
}
