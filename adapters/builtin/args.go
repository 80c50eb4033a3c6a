package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// decodeArgs decodes a tool call's arguments into dst, a pointer to a struct
// with json tags. Unknown fields are ignored; malformed JSON, a value of the
// wrong type or a missing required field is an error naming the field. Empty
// or null arguments decode as {}. Arguments the model sent as a JSON string
// holding an object are unwrapped once.
func decodeArgs(raw json.RawMessage, dst any, required ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			raw = bytes.TrimSpace([]byte(s))
		}
	}
	if len(raw) == 0 || raw[0] != '{' {
		return errors.New("invalid arguments: want a JSON object")
	}
	// The fields are read apart only to check the required ones; the
	// arguments of a tool that has none are read once (a tenth of
	// list_files' CPU went to reading them twice).
	var fields map[string]json.RawMessage
	if len(required) > 0 {
		if err := json.Unmarshal(raw, &fields); err != nil {
			return fmt.Errorf("invalid arguments: malformed JSON: %v", err)
		}
	}
	for _, name := range required {
		v, ok := fields[name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Errorf("invalid arguments: %q is required", name)
		}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("invalid arguments: malformed JSON: %v", err)
		}
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "(top level)"
			}
			t := te.Type
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			return fmt.Errorf("invalid arguments: field %q: want %s, got JSON %s", field, typeName(t.Kind()), te.Value)
		}
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// typeName renders a Go kind the way JSON Schema names it.
func typeName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return k.String()
}

// intArg returns *p, or def when the field was absent.
func intArg(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
