package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The override file is what the admin APIs write: YAML in the schema of the
// base file, laid over it by [Load]. Its first line carries a revision
// number, so that two admins editing at once do not overwrite each other
// unknowingly: a write names the revision it read, and a stale one is
// refused ([ErrStaleRevision]).

// revisionHeader starts the override file's first line; the number after
// it is the revision. A file without it is revision 0.
const revisionHeader = "# wunder override revision: "

// writtenBy is the line SetOverride writes under the revision header.
const writtenBy = "# Written by wunder's admin API; edit with care (a running server does not reread it)."

// ErrStaleRevision: the override changed since the revision a write named.
var ErrStaleRevision = errors.New("config: the override has changed since that revision")

// OverridePath is the override file under dataDir.
func OverridePath(dataDir string) string { return overrideFile(dataDir) }

// OverrideRevision is the revision recorded in an override file's content.
func OverrideRevision(data []byte) int64 {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	rest, ok := bytes.CutPrefix(line, []byte(revisionHeader))
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReadOverride reads the override file at path: its content and revision.
// A missing file is empty content at revision 0.
func ReadOverride(path string) ([]byte, int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("config: %w", err)
	}
	return data, OverrideRevision(data), nil
}

// WriteOverride replaces the override file at path with data atomically (a
// temporary file in the same directory, synced, then renamed over it), so
// a reader or a crash sees the old content or the new, never a mix.
func WriteOverride(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	f, err := os.CreateTemp(dir, ".wunder.override-*.yaml")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("config: writing the override: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("config: writing the override: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("config: writing the override: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("config: replacing the override: %w", err)
	}
	if d, err := os.Open(dir); err == nil { // make the rename durable
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// SetOverride returns override content with the section at key (dotted:
// "mcp.servers", "llm.models") set to value, and the revision header set to
// rev. value is a JSON-decoded tree (maps, slices, strings, json.Number,
// bools, nil) as an admin API received it:
//
//   - A string equal to [Mask] stands for "keep the secret as it is": it is
//     replaced by the value current has at the same place (list items are
//     matched by their "name"), written as current wrote it (a ${VAR}
//     reference stays a reference); where current has none, the key is
//     left out, so a value from the environment still applies.
//   - Every other string is literal: a $ in it is written $$, so it is not
//     expanded.
//
// current is the merged base and override YAML ([MergedYAML]), or nil.
func SetOverride(override []byte, key string, value any, current *yaml.Node, rev int64) ([]byte, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(override)) > 0 {
		if err := yaml.Unmarshal(override, &doc); err != nil {
			return nil, fmt.Errorf("config: the override file is not valid YAML: %w", err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("config: the override file is not a mapping")
	}
	// The header read back is a comment of the first key: drop it, or
	// every write would stack the old headers under the new one.
	root.HeadComment = dropHeader(root.HeadComment)
	if len(root.Content) > 0 {
		root.Content[0].HeadComment = dropHeader(root.Content[0].HeadComment)
	}
	path := strings.Split(key, ".")
	cur := current
	if cur != nil && cur.Kind == yaml.DocumentNode && len(cur.Content) > 0 {
		cur = cur.Content[0]
	}
	for _, k := range path {
		cur = child(cur, k)
	}
	node, err := toNode(value, cur, true)
	if err != nil {
		return nil, err
	}
	m := root
	for i, k := range path {
		j := mappingIndex(m, k)
		if i == len(path)-1 {
			if j >= 0 {
				m.Content[j+1] = node
			} else {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, node)
			}
			break
		}
		if j < 0 || m.Content[j+1].Kind != yaml.MappingNode {
			next := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if j >= 0 {
				m.Content[j+1] = next
			} else {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, next)
			}
		}
		m = m.Content[mappingIndex(m, k)+1]
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s%d\n%s\n", revisionHeader, rev, writtenBy)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dropHeader removes the lines of SetOverride's header from a comment,
// keeping any other.
func dropHeader(comment string) string {
	var keep []string
	for _, line := range strings.Split(comment, "\n") {
		if !strings.HasPrefix(line, revisionHeader) && line != writtenBy {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// MergedYAML is the base file with the override laid over it, before any
// ${VAR} is expanded: where [SetOverride] finds the secrets a masked value
// keeps. override, when non-nil, replaces the override file's content.
func MergedYAML(opts LoadOptions) (*yaml.Node, error) {
	_, tree, err := readMerged(opts)
	return tree, err
}

// child is the value of key in mapping n, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	if i := mappingIndex(n, key); i >= 0 {
		return n.Content[i+1]
	}
	return nil
}

// itemNamed is the item of sequence n whose "name" is name, or nil.
func itemNamed(n *yaml.Node, name string) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || name == "" {
		return nil
	}
	for _, it := range n.Content {
		if v := child(it, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Value == name {
			return it
		}
	}
	return nil
}

// toNode encodes v as a YAML node, resolving masks against cur (see
// SetOverride).
func toNode(v any, cur *yaml.Node, escape bool) (*yaml.Node, error) {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(i, 10)}, nil
		}
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("config: %s is not a number YAML can hold", v)
		}
		return toNode(f, cur, escape)
	case float64:
		// A whole number is written as an integer (encoding/json decodes
		// 2000000 as a float64, and 'g' would write it 2e+06, which an
		// integer key refuses).
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(int64(v), 10)}, nil
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("config: %v is not a number YAML can hold", v)
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}, nil
	case string:
		if escape {
			v = strings.ReplaceAll(v, "$", "$$")
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i, it := range v {
			var c *yaml.Node
			if m, ok := it.(map[string]any); ok {
				name, _ := m["name"].(string)
				c = itemNamed(cur, name)
			} else if cur != nil && cur.Kind == yaml.SequenceNode && i < len(cur.Content) {
				c = cur.Content[i]
			}
			cn, err := toNode(it, c, escape)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, cn)
		}
		return n, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c := child(cur, k)
			if s, ok := v[k].(string); ok && s == Mask {
				if c == nil || c.Kind != yaml.ScalarNode || isNull(c) {
					continue // nothing to keep here: the environment may still set it
				}
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k},
					&yaml.Node{Kind: yaml.ScalarNode, Tag: c.Tag, Value: c.Value, Style: c.Style})
				continue
			}
			cn, err := toNode(v[k], c, escape)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, cn)
		}
		return n, nil
	default:
		return nil, fmt.Errorf("config: cannot write a %T", v)
	}
}

// WithSection returns a copy of c with the section at key (dotted, as
// [SetOverride] takes it) replaced by value, decoded and validated as
// [Load] would: the problems are [FieldError]s with their key paths. A
// masked secret in value keeps c's value. c does not change.
func (c *Config) WithSection(key string, value any) (*Config, error) {
	cp := c.Clone()
	field, err := fieldAt(reflect.ValueOf(cp).Elem(), key)
	if err != nil {
		return nil, err
	}
	def, _ := fieldAt(reflect.ValueOf(Default()).Elem(), key)
	var effective yaml.Node
	if err := effective.Encode(field.Interface()); err != nil {
		return nil, err
	}
	node, err := toNode(value, &effective, false)
	if err != nil {
		return nil, err
	}
	field.Set(def) // the section starts from its defaults, as in Load
	l := newLoader(os.LookupEnv)
	l.decode(node, field, key)
	cp.Derive()
	cp.validate(&l.probs)
	if err := l.probs.err(); err != nil {
		return nil, err
	}
	return cp, nil
}

// fieldAt is the field of the Config struct v at key, a dotted path of
// YAML names.
func fieldAt(v reflect.Value, key string) (reflect.Value, error) {
	for _, k := range strings.Split(key, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("config: %s is not a section", key)
		}
		i, ok := yamlFields(v.Type())[k]
		if !ok {
			return reflect.Value{}, fmt.Errorf("config: no section %s", key)
		}
		v = v.Field(i)
	}
	return v, nil
}

// SectionValue is the value at key (as [Config.WithSection] takes it) as
// JSON-ready values keyed by the YAML names: maps, slices (a nil list is
// empty), strings, float64 numbers, bools. Call it on [Config.Redacted] to
// show it.
func (c *Config) SectionValue(key string) (any, error) {
	v, err := fieldAt(reflect.ValueOf(c).Elem(), key)
	if err != nil {
		return nil, err
	}
	b, err := yaml.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	var out any
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil && v.Kind() == reflect.Slice {
		out = []any{}
	}
	// Through JSON, so the value compares equal to one read back from JSON.
	j, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var norm any
	err = json.Unmarshal(j, &norm)
	return norm, err
}
