package builtin

import (
	"errors"
	"path"
	"strings"
)

// matchGlob reports whether name, a clean slash-separated relative path,
// matches pattern. Each pattern segment matches one path segment with
// [path.Match] semantics ("*", "?", "[...]", "\" escapes), except "**", which
// matches zero or more whole segments. A malformed pattern matches nothing.
//
//	matchGlob("**/*.pem", "a/b/key.pem")  // true
//	matchGlob(".git/**", ".git")          // true: ** matches zero segments
//	matchGlob("*.pem", "a/key.pem")       // false: * stays in one segment
func matchGlob(pattern, name string) bool {
	return matchSegments(splitPath(pattern), splitPath(name))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			// Collapse runs of "**"; then try every split point.
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegments(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		ok, err := path.Match(pat[0], name[0])
		if err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// splitPath splits a slash-separated path into its non-empty segments,
// dropping "." segments.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// checkGlob reports a malformed pattern.
func checkGlob(pattern string) error {
	segs := splitPath(pattern)
	if len(segs) == 0 {
		return errors.New("empty pattern")
	}
	if strings.HasPrefix(pattern, "/") {
		return errors.New("patterns are relative to the workspace; drop the leading /")
	}
	for _, s := range segs {
		if s == "**" {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return err
		}
	}
	return nil
}
