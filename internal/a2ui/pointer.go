package a2ui

import (
	"strconv"
	"strings"
)

// JSON Pointers (RFC 6901) into a surface's data model, as
// updateDataModel and the bindings use them.

// tokens splits a pointer into its unescaped reference tokens ("" and "/"
// are the whole document).
func tokens(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, t := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return parts
}

// getPointer returns the value at p in doc, or nil.
func getPointer(doc any, p string) any {
	for _, t := range tokens(p) {
		switch v := doc.(type) {
		case map[string]any:
			doc = v[t]
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			doc = v[i]
		default:
			return nil
		}
	}
	return doc
}

// setPointer returns doc with the value at p replaced by val (has) or
// removed (!has), creating the objects on the way.
func setPointer(doc any, p string, val any, has bool) any {
	ts := tokens(p)
	if len(ts) == 0 {
		if !has {
			return nil
		}
		return val
	}
	var set func(cur any, ts []string) any
	set = func(cur any, ts []string) any {
		t := ts[0]
		if l, ok := cur.([]any); ok {
			i, err := strconv.Atoi(t)
			switch {
			case err != nil || i < 0 || i > len(l):
				return cur
			case len(ts) > 1 && i < len(l):
				l[i] = set(l[i], ts[1:])
			case len(ts) > 1:
				l = append(l, set(nil, ts[1:]))
			case !has && i < len(l):
				l = append(l[:i], l[i+1:]...)
			case has && i < len(l):
				l[i] = val
			case has:
				l = append(l, val)
			}
			return l
		}
		m, ok := cur.(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		switch {
		case len(ts) > 1:
			m[t] = set(m[t], ts[1:])
		case has:
			m[t] = val
		default:
			delete(m, t)
		}
		return m
	}
	return set(doc, ts)
}
