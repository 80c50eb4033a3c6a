package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxExpandDepth bounds ${A:-${B:-...}} nesting.
const maxExpandDepth = 8

// expandTree replaces ${VAR} and ${VAR:-default} in every scalar value of the
// merged tree (never in keys), before anything is decoded: the result is
// text, so a value with colons or quotes cannot change the YAML structure.
// A plain (unquoted) scalar is resolved again after expansion, so
// "port: ${PORT:-8000}" is an integer and "key: ${KEY:-}" is null; a quoted
// one stays a string.
func (l *loader) expandTree(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			l.expandTree(n.Content[i+1], joinPath(path, n.Content[i].Value))
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			l.expandTree(c, indexPath(path, i))
		}
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "$") {
			return
		}
		out, err := expand(n.Value, l.lookupEnv)
		if err != nil {
			l.probs.add(path, l.at(n), "%v", err)
			return
		}
		n.Value = out
		if n.Style == 0 {
			n.Tag = ""
		}
	}
}

// expand expands one value: ${VAR} is the variable's value (an error when it
// is unset), ${VAR:-default} is the value or, when the variable is unset or
// empty, the default (which may itself hold ${...}), $$ is a literal $, and
// any other $ is kept as it is.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	e := expander{lookup: lookup, src: s}
	out, rest, err := e.text(s, true, false, 0)
	if err != nil {
		return "", err
	}
	if rest != "" { // cannot happen at top level; keep the text anyway
		out += rest
	}
	return out, nil
}

type expander struct {
	lookup func(string) (string, bool)
	src    string // the whole value, for messages
}

// text expands s. Nested (inside a default), it stops at the first unmatched
// '}' and returns the text after it. With eval false it only scans.
func (e *expander) text(s string, eval, nested bool, depth int) (out, rest string, err error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			b.WriteByte('$')
			i += 2
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			val, n, err := e.ref(s[i+2:], eval, depth)
			if err != nil {
				return "", "", err
			}
			b.WriteString(val)
			i += 2 + n
		case nested && c == '}':
			return b.String(), s[i+1:], nil
		default:
			b.WriteByte(c)
			i++
		}
	}
	if nested {
		return "", "", fmt.Errorf("unterminated ${ in %s (write $$ for a literal $)", quoteShort(e.src))
	}
	return b.String(), "", nil
}

// ref expands the reference whose text after "${" is s, returning its value
// and the bytes of s it used (up to and including the closing brace).
func (e *expander) ref(s string, eval bool, depth int) (string, int, error) {
	if depth >= maxExpandDepth {
		return "", 0, fmt.Errorf("${...} nested more than %d deep in %s", maxExpandDepth, quoteShort(e.src))
	}
	j := 0
	for j < len(s) && isNameByte(s[j], j == 0) {
		j++
	}
	name := s[:j]
	rest := s[j:]
	switch {
	case name == "":
		if !strings.Contains(s, "}") {
			return "", 0, fmt.Errorf("unterminated ${ in %s (write $$ for a literal $)", quoteShort(e.src))
		}
		return "", 0, fmt.Errorf("invalid variable name in %s: a name is letters, digits and _, not starting with a digit", quoteShort(e.src))
	case strings.HasPrefix(rest, "}"):
		if !eval {
			return "", j + 1, nil
		}
		v, ok := e.lookup(name)
		if !ok {
			return "", 0, fmt.Errorf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)
		}
		return v, j + 1, nil
	case strings.HasPrefix(rest, ":-"):
		v, ok := "", false
		if eval {
			v, ok = e.lookup(name)
		}
		useDefault := eval && (!ok || v == "")
		def, after, err := e.text(rest[2:], useDefault, true, depth+1)
		if err != nil {
			return "", 0, err
		}
		used := len(s) - len(after)
		if useDefault {
			return def, used, nil
		}
		return v, used, nil
	case rest == "":
		return "", 0, fmt.Errorf("unterminated ${ in %s (write $$ for a literal $)", quoteShort(e.src))
	default:
		return "", 0, fmt.Errorf("unsupported form ${%s%s in %s: only ${VAR} and ${VAR:-default} are supported", name, rest[:1], quoteShort(e.src))
	}
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (!first && '0' <= c && c <= '9')
}
