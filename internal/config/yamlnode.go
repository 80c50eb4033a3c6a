package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxNodes bounds the nodes of one document after alias expansion, so that
// a "billion laughs" file fails instead of exhausting memory.
const maxNodes = 100_000

// Short tags of the YAML core schema that the loader looks at.
const (
	tagNull  = "!!null"
	tagMerge = "!!merge"
)

// loader holds the state of one Load.
type loader struct {
	lookupEnv func(string) (string, bool)
	// files maps every node of the normalized trees to the file it came from.
	files    map[*yaml.Node]string
	nodes    int // nodes made so far, against maxNodes
	probs    problems
	origins  map[string]origin
	warnings []string
}

func newLoader(lookupEnv func(string) (string, bool)) *loader {
	return &loader{
		lookupEnv: lookupEnv,
		files:     map[*yaml.Node]string{},
		origins:   map[string]origin{},
	}
}

// at is where node n was written.
func (l *loader) at(n *yaml.Node) origin {
	return origin{source: l.files[n], line: n.Line}
}

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse parses one configuration file into a normalized tree: no document
// node, no aliases, no merge keys, no duplicate keys, every node registered
// in l.files. It returns nil for an empty document. Syntax errors are
// returned (not collected): nothing after them can be trusted.
func (l *loader) parse(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(file, err)
		}
		return nil, &FieldError{Source: file, Line: extra.Line, Msg: "a second YAML document: a configuration file holds one"}
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		root = doc.Content[0]
	}
	tree := l.normalize(file, "", root, map[*yaml.Node]bool{})
	if l.nodes > maxNodes {
		return nil, &FieldError{Source: file, Msg: fmt.Sprintf("more than %d YAML nodes after expanding aliases", maxNodes)}
	}
	if isNull(tree) {
		return nil, nil
	}
	if tree.Kind != yaml.MappingNode {
		return nil, &FieldError{Source: file, Line: tree.Line, Msg: "the top level must be a mapping, got " + describe(tree)}
	}
	l.renameDeprecated(tree)
	return tree, nil
}

// syntaxError turns a yaml error into a FieldError with the line.
func syntaxError(file string, err error) error {
	msg := err.Error()
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{Source: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	if len(msg) > 6 && msg[:6] == "yaml: " {
		msg = msg[6:]
	}
	return &FieldError{Source: file, Msg: "invalid YAML: " + msg}
}

// normalize copies n, resolving aliases and merge keys and checking keys.
// active holds the anchors being expanded, to stop self-reference.
func (l *loader) normalize(file, path string, n *yaml.Node, active map[*yaml.Node]bool) *yaml.Node {
	l.nodes++
	if l.nodes > maxNodes {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull}
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil || active[n.Alias] {
			l.probs.add(path, origin{file, n.Line}, "alias *%s refers to its own anchor", n.Value)
			return l.register(file, &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull, Line: n.Line, Column: n.Column})
		}
		active[n.Alias] = true
		out := l.normalize(file, path, n.Alias, active)
		delete(active, n.Alias)
		return out
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return l.register(file, &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull, Line: n.Line})
		}
		return l.normalize(file, path, n.Content[0], active)
	}
	if n.Anchor != "" { // an alias inside its own anchor refers to n
		active[n] = true
		defer delete(active, n)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		out := l.shallow(file, n)
		for i, c := range n.Content {
			out.Content = append(out.Content, l.normalize(file, indexPath(path, i), c, active))
		}
		return out
	case yaml.MappingNode:
		return l.normalizeMapping(file, path, n, active)
	default:
		return l.shallow(file, n)
	}
}

func (l *loader) normalizeMapping(file, path string, n *yaml.Node, active map[*yaml.Node]bool) *yaml.Node {
	out := l.shallow(file, n)
	seen := map[string]int{} // key -> line
	var merged []*yaml.Node  // mappings from merge keys, in priority order
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == tagMerge {
			mv := l.normalize(file, path, v, active)
			switch mv.Kind {
			case yaml.MappingNode:
				merged = append(merged, mv)
			case yaml.SequenceNode:
				for _, item := range mv.Content {
					if item.Kind != yaml.MappingNode {
						l.probs.add(path, origin{file, item.Line}, "a merge key (<<) takes mappings, got %s", describe(item))
						continue
					}
					merged = append(merged, item)
				}
			default:
				l.probs.add(path, origin{file, k.Line}, "a merge key (<<) takes a mapping, got %s", describe(mv))
			}
			continue
		}
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			l.probs.add(path, origin{file, k.Line}, "keys must be plain strings, got %s", describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			l.probs.add(joinPath(path, k.Value), origin{file, k.Line}, "duplicate key (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		out.Content = append(out.Content, l.shallow(file, k), l.normalize(file, joinPath(path, k.Value), v, active))
	}
	for _, m := range merged {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if _, dup := seen[m.Content[i].Value]; dup {
				continue
			}
			seen[m.Content[i].Value] = m.Content[i].Line
			out.Content = append(out.Content, m.Content[i], m.Content[i+1])
		}
	}
	return out
}

// shallow copies n without its children and registers the copy.
func (l *loader) shallow(file string, n *yaml.Node) *yaml.Node {
	return l.register(file, &yaml.Node{
		Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value,
		Line: n.Line, Column: n.Column,
	})
}

func (l *loader) register(file string, n *yaml.Node) *yaml.Node {
	l.files[n] = file
	return n
}

// merge lays src over dst: mappings merge key by key, anything else in src
// replaces what dst has. Either may be nil.
func merge(dst, src *yaml.Node) *yaml.Node {
	if dst == nil {
		return src
	}
	if src == nil {
		return dst
	}
	if dst.Kind != yaml.MappingNode || src.Kind != yaml.MappingNode {
		return src
	}
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		if j := mappingIndex(dst, k.Value); j >= 0 {
			dst.Content[j+1] = merge(dst.Content[j+1], v)
		} else {
			dst.Content = append(dst.Content, k, v)
		}
	}
	return dst
}

// mappingIndex is the index in m.Content of key, or -1.
func mappingIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// isNull reports whether n is absent or a YAML null (~, null, empty).
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == tagNull)
}

// describe names a node's kind for messages: a mapping, a sequence, "text".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return quoteShort(n.Value)
	default:
		return "an alias"
	}
}

// quoteShort quotes s for a message, cutting it at 60 bytes.
func quoteShort(s string) string {
	if len(s) > 60 {
		return strconv.Quote(s[:57]) + "..."
	}
	return strconv.Quote(s)
}
