package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FieldError is one problem with the configuration. [Load] and
// [Config.Validate] return all problems at once, joined with [errors.Join]
// and sorted by path; use [Problems] to get them back as a list.
type FieldError struct {
	// Path is the key's dotted path, e.g. "llm.models.gpt.tool_call_mode";
	// list items are written "name[2]". "" for the whole document.
	Path string
	// Source is where the value came from: a file name, an environment
	// variable (WUNDER_PORT) or "" for a default or a value set in code.
	Source string
	// Line is the 1-based line in Source when Source is a file, else 0.
	Line int
	// Msg says what is wrong, e.g. "must be between 1 and 65535, got 70000".
	Msg string
}

// Error formats the problem as "source:line: path: msg", leaving out the
// parts that are unknown.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Problems returns the [FieldError]s inside an error returned by [Load] or
// [Config.Validate], in order.
func Problems(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if fe, ok := err.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}

// problems collects FieldErrors.
type problems struct {
	list []*FieldError
	// reported holds the paths with a problem; validation skips them, so a
	// value of the wrong type is not also reported as out of range.
	reported map[string]bool
}

func (p *problems) add(path string, at origin, format string, args ...any) {
	if p.reported == nil {
		p.reported = map[string]bool{}
	}
	p.reported[path] = true
	p.list = append(p.list, &FieldError{Path: path, Source: at.source, Line: at.line, Msg: fmt.Sprintf(format, args...)})
}

// err sorts the problems (by path, then source, line and message), drops
// duplicates and joins them; nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	slices.SortStableFunc(p.list, func(a, b *FieldError) int {
		return cmp.Or(
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Source, b.Source),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Msg, b.Msg),
		)
	})
	p.list = slices.CompactFunc(p.list, func(a, b *FieldError) bool { return *a == *b })
	errs := make([]error, len(p.list))
	for i, fe := range p.list {
		errs[i] = fe
	}
	return errors.Join(errs...)
}

// origin is where a value was set.
type origin struct {
	source string // file name or env variable; "" = default or code
	line   int
}

// meta is what Load records on a Config.
type meta struct {
	origins  map[string]origin // key path -> where its value was set
	warnings []string
}

// originOf returns where the value at path was set, or the zero origin.
func (c *Config) originOf(path string) origin {
	if c.meta == nil {
		return origin{}
	}
	return c.meta.origins[path]
}

// joinPath appends a map key to a path, quoting keys that would be ambiguous.
func joinPath(path, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\" \t\n") {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to a path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// suggest returns the candidate closest to key, or "" when none is close.
func suggest(key string, candidates []string) string {
	if len(key) > 64 {
		return ""
	}
	best, bestDist := "", -1
	limit := max(1, min(3, len(key)/3))
	for _, c := range candidates {
		d := editDistance(strings.ToLower(key), c)
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b (bytes):
// insertions, deletions, substitutions and swaps of neighbours count 1.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
