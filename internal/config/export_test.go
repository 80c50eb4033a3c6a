package config

import "reflect"

// DecodeInto runs the loader's parse, expansion and decoding of data (named
// file) into v, a pointer to any struct, for tests of schema shapes that
// Config does not have yet (lists of structs).
func DecodeInto(file string, data []byte, env map[string]string, v any) error {
	l := newLoader(func(k string) (string, bool) { s, ok := env[k]; return s, ok })
	tree, err := l.parse(file, data)
	if err != nil {
		return err
	}
	if tree != nil {
		l.expandTree(tree, "")
		l.decode(tree, reflect.ValueOf(v).Elem(), "")
	}
	return l.probs.err()
}

// Expand is expand, for table tests.
var Expand = expand
