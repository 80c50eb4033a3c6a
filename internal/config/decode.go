package config

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decode lays the YAML tree n over v (which holds the defaults), recording
// where each value came from. It reports, with the key's path, every unknown
// key and every value of the wrong type, and goes on past them. Rules:
//   - a mapping sets a struct field by field, or a map entry by entry (a new
//     entry starts from its type's applyDefaults);
//   - a sequence replaces a slice;
//   - null (~, null, or nothing) keeps what v holds, that is the default;
//   - scalars are read by the Go type: any scalar is a string, numbers may
//     be quoted ("8000"), booleans are true or false.
func (l *loader) decode(n *yaml.Node, v reflect.Value, path string) {
	if n == nil {
		return
	}
	l.origins[path] = l.at(n)
	if isNull(n) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		l.decodeStruct(n, v, path)
	case reflect.Map:
		l.decodeMap(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			l.typeError(n, path, "a list")
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			newEntry(s.Index(i))
			l.decode(c, s.Index(i), indexPath(path, i))
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			p.Elem().Set(v.Elem())
		} else {
			newEntry(p.Elem())
		}
		l.decode(n, p.Elem(), path)
		v.Set(p)
	default:
		l.decodeScalar(n, v, path)
	}
}

func (l *loader) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		l.typeError(n, path, "a mapping")
		return
	}
	fields := yamlFields(v.Type())
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		idx, ok := fields[k.Value]
		if !ok && path == "" && strings.HasPrefix(k.Value, "x-") {
			continue // extension keys: a place for YAML anchors
		}
		if !ok {
			l.unknownKey(k, v.Type(), path)
			continue
		}
		l.decode(val, v.Field(idx), joinPath(path, k.Value))
	}
}

func (l *loader) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		l.typeError(n, path, "a mapping")
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := reflect.ValueOf(k.Value).Convert(v.Type().Key())
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		} else {
			newEntry(elem)
		}
		p := joinPath(path, k.Value)
		l.origins[p] = l.at(k)
		l.decode(val, elem, p)
		v.SetMapIndex(key, elem)
	}
}

// newEntry sets the defaults of a new map or list entry, if its type has any.
func newEntry(v reflect.Value) {
	if d, ok := v.Addr().Interface().(entryDefaulter); ok {
		d.applyDefaults()
	}
}

func (l *loader) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			l.typeError(n, path, "a string")
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode {
			l.typeError(n, path, "a boolean (true or false)")
			return
		}
		switch n.Value {
		case "true", "True", "TRUE":
			v.SetBool(true)
		case "false", "False", "FALSE":
			v.SetBool(false)
		default:
			l.typeError(n, path, "a boolean (true or false)")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.Kind != yaml.ScalarNode {
			l.typeError(n, path, "an integer")
			return
		}
		i, err := parseInt(n.Value, v.Type().Bits())
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				l.probs.add(path, l.at(n), "integer %s is out of range", quoteShort(n.Value))
				return
			}
			l.typeError(n, path, "an integer")
			return
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		if n.Kind != yaml.ScalarNode {
			l.typeError(n, path, "a number")
			return
		}
		f, err := parseFloat(n.Value)
		if err != nil {
			l.typeError(n, path, "a number")
			return
		}
		v.SetFloat(f)
	default:
		// A field type the decoder does not know is a bug in this package;
		// report it rather than panic.
		l.probs.add(path, l.at(n), "cannot decode into Go type %s", v.Type())
	}
}

// parseInt reads a decimal integer, or one with a 0x, 0o or 0b prefix;
// underscores may group digits. A leading zero does not mean octal.
func parseInt(s string, bits int) (int64, error) {
	s = strings.ReplaceAll(s, "_", "")
	digits := strings.TrimLeft(s, "+-")
	base := 10
	if len(digits) > 2 && digits[0] == '0' && strings.ContainsRune("xXoObB", rune(digits[1])) {
		base = 0
	}
	return strconv.ParseInt(s, base, bits)
}

// parseFloat reads a YAML 1.2 float (including .inf and .nan) or a Go one.
func parseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return math.Inf(1), nil
	case "-.inf":
		return math.Inf(-1), nil
	case ".nan":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
}

func (l *loader) typeError(n *yaml.Node, path, want string) {
	if l.probs.reported[path] {
		return // e.g. ${VAR} could not be expanded
	}
	l.probs.add(path, l.at(n), "expected %s, got %s", want, describe(n))
}

// unknownKey reports key k of struct type t at path, with a suggestion: a
// close spelling among t's keys, or the same key elsewhere in the schema.
func (l *loader) unknownKey(k *yaml.Node, t reflect.Type, path string) {
	msg := "unknown key"
	names := slices.Sorted(maps.Keys(yamlFields(t)))
	if s := suggest(k.Value, names); s != "" {
		msg += " (did you mean " + s + "?)"
	} else if elsewhere := findKey(reflect.TypeFor[Config](), "", k.Value); elsewhere != "" {
		msg += " (did you mean " + elsewhere + "?)"
	}
	l.probs.add(joinPath(path, k.Value), l.at(k), "%s", msg)
}

// findKey returns the first path (breadth-first) in the schema rooted at t
// whose last key is key; map entries are written <name>.
func findKey(t reflect.Type, prefix, key string) string {
	type item struct {
		t    reflect.Type
		path string
	}
	queue := []item{{t, prefix}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for name, idx := range sortedFields(it.t) {
			p := joinPath(it.path, name)
			if name == key {
				return p
			}
			ft := it.t.Field(idx).Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				if ft.Kind() == reflect.Map {
					p += ".<name>"
				}
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				queue = append(queue, item{ft, p})
			}
		}
	}
	return ""
}

// yamlFields maps the YAML keys of struct type t to field indexes.
func yamlFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = i
	}
	return out
}

// sortedFields yields t's YAML keys and field indexes in key order.
func sortedFields(t reflect.Type) func(func(string, int) bool) {
	fields := yamlFields(t)
	return func(yield func(string, int) bool) {
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			if !yield(name, fields[name]) {
				return
			}
		}
	}
}
