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
	maxResults := intArg(a.MaxResults, defaultSearchResults)
	q, err := newContentQuery(a.Query, a.Regex, a.IgnoreCase, a.Glob, maxResults, c.set.opts.MaxFileBytes)
	if err != nil {
		return errorf("%v", err)
	}
	root, r, err := c.openTarget(a.Path)
	if err != nil {
		return errorf("%v", err)
	}
	defer root.Close()

	res, err := c.ws.searchContent(ctx, root, r, q)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return errorf("search %s: %s", r.name, describeErr(err))
	}
	var out strings.Builder
	if len(res.matches) == 0 {
		fmt.Fprintf(&out, "no matches for %q in %s\n", a.Query, r.name)
	}
	for _, m := range res.matches {
		fmt.Fprintf(&out, "%s:%d: %s\n", m.Path, m.Line, m.Text)
	}
	if res.full {
		fmt.Fprintf(&out, "[stopped at %d matches; narrow path or glob, or raise max_results]\n", maxResults)
	}
	if res.skipped > 0 {
		fmt.Fprintf(&out, "[skipped %d binary, unreadable or oversized file(s)]\n", res.skipped)
	}
	return &orchestrator.ToolResult{
		Content: out.String(),
		Data:    map[string]any{"matches": len(res.matches), "truncated": res.full, "skipped_files": res.skipped},
	}, nil
}

// contentQuery is a content search: what search_content and the workspace
// API's search both run ([Workspace.searchContent]).
type contentQuery struct {
	re           *regexp.Regexp
	glob         string
	max          int // most matches
	maxFileBytes int // larger files are skipped
}

// newContentQuery checks a search's arguments; its errors are messages for
// the caller (the tool's model, the API's client).
func newContentQuery(query string, regex, ignoreCase bool, glob string, maxResults, maxFileBytes int) (contentQuery, error) {
	if query == "" {
		return contentQuery{}, errors.New("query is empty")
	}
	if maxResults < 1 || maxResults > maxSearchResults {
		return contentQuery{}, fmt.Errorf("max_results must be between 1 and %d", maxSearchResults)
	}
	if glob != "" {
		if err := checkGlob(glob); err != nil {
			return contentQuery{}, fmt.Errorf("glob %q: %v", glob, err)
		}
	}
	expr := query
	if !regex {
		expr = regexp.QuoteMeta(expr)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return contentQuery{}, fmt.Errorf("query is not a valid regular expression: %v", err)
	}
	return contentQuery{re: re, glob: glob, max: maxResults, maxFileBytes: maxFileBytes}, nil
}

// ContentMatch is one matching line of a content search.
type ContentMatch struct {
	Path string `json:"path"` // relative to the workspace
	Line int    `json:"line"` // 1-based
	Text string `json:"text"` // the line, clipped
}

// contentResult is what a content search found.
type contentResult struct {
	matches []ContentMatch
	skipped int  // binary, oversized or unreadable files
	full    bool // stopped at q.max
}

// searchContent is the one content search engine: it walks r (a file or a
// directory) inside root without following symlinks, skips denied paths,
// files the glob does not select and files it cannot read as text, and
// returns up to q.max matching lines. It stops early when ctx ends.
func (w *Workspace) searchContent(ctx context.Context, root *os.Root, r resolved, q contentQuery) (contentResult, error) {
	var res contentResult
	err := fs.WalkDir(root.FS(), r.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == r.rel {
				return err
			}
			return nil // unreadable directory: skip
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if w.denied(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (q.glob != "" && !globSelects(q.glob, p)) {
			return nil
		}
		found, ok := searchFile(root, p, q.re, q.maxFileBytes, q.max-len(res.matches))
		if !ok {
			res.skipped++
		}
		res.matches = append(res.matches, found...)
		if len(res.matches) >= q.max {
			return errSearchFull
		}
		return nil
	})
	if errors.Is(err, errSearchFull) {
		res.full, err = true, nil
	}
	return res, err
}

// globSelects matches a file against the glob filter: a pattern without "/"
// matches the file name, one with "/" the whole path.
func globSelects(glob, p string) bool {
	if !strings.Contains(glob, "/") {
		return matchGlob(glob, path.Base(p))
	}
	return matchGlob(glob, p)
}

// searchFile returns up to limit matches of re in file p; ok is false when
// the file was skipped (binary, too big, unreadable).
func searchFile(root *os.Root, p string, re *regexp.Regexp, maxBytes, limit int) (found []ContentMatch, ok bool) {
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
		found = append(found, ContentMatch{Path: p, Line: i + 1, Text: clipLine(line)})
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

// SearchOptions are a workspace API search: the arguments of
// search_content, plus which kinds of match to return.
type SearchOptions struct {
	Query, Path, Glob string
	Regex, IgnoreCase bool
	// MaxResults bounds names and matches each (1 to 1000).
	MaxResults int
	// Files and Dirs match the query against the names of files (any
	// entry not a directory) and of directories; Content against the
	// lines of text files (search_content's engine).
	Files, Dirs, Content bool
}

// SearchResult is what [Set.Search] found.
type SearchResult struct {
	Names        []FileInfo
	Matches      []ContentMatch
	Truncated    bool // stopped at MaxResults
	SkippedFiles int  // binary, oversized or unreadable files
}

// Search looks for o.Query under o.Path in userID's workspace: in entry
// names and, with search_content's engine, in file contents. Bad arguments
// wrap [orchestrator.ErrInvalidArgument].
func (s *Set) Search(ctx context.Context, userID string, o SearchOptions) (*SearchResult, error) {
	q, err := newContentQuery(o.Query, o.Regex, o.IgnoreCase, o.Glob, o.MaxResults, s.opts.MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
	}
	ws, root, r, err := s.openAPI(userID, o.Path)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := &SearchResult{}
	if o.Files || o.Dirs {
		err := fs.WalkDir(root.FS(), r.rel, func(p string, d fs.DirEntry, err error) error {
			if err != nil && p != r.rel {
				return nil // unreadable directory: skip, as the content search does
			}
			if err != nil || p == r.rel {
				return err
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if ws.denied(p) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if (d.IsDir() && !o.Dirs) || (!d.IsDir() && !o.Files) {
				return nil // a kind not asked for: it takes no place in MaxResults
			}
			if !q.re.MatchString(d.Name()) || (q.glob != "" && !globSelects(q.glob, p)) {
				return nil
			}
			if len(out.Names) == q.max {
				return errSearchFull
			}
			if info, err := d.Info(); err == nil {
				out.Names = append(out.Names, fileInfo(p, info))
			}
			return nil
		})
		if errors.Is(err, errSearchFull) {
			out.Truncated, err = true, nil
		}
		if err != nil {
			return nil, fsError(r, err)
		}
	}
	if o.Content {
		res, err := ws.searchContent(ctx, root, r, q)
		if err != nil {
			return nil, fsError(r, err)
		}
		out.Matches, out.SkippedFiles = res.matches, res.skipped
		out.Truncated = out.Truncated || res.full
	}
	return out, nil
}
