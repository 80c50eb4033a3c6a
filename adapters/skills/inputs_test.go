package skills

import (
	"encoding/json"
	"testing"
)

// checkRequired, the check a skill's script call passes before it runs:
// every required input present, of its schema's basic type; inputs not
// required, or without a type, pass as they are (the script checks them).
func TestCheckRequired(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type":"object","required":["s","n","i","b","a","o","z","any"],"properties":{
		"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},
		"a":{"type":"array"},"o":{"type":"object"},"z":{"type":"null"},"opt":{"type":"string"}}}`)
	good := `{"s":"x","n":1.5,"i":3,"b":false,"a":[],"o":{},"z":null,"any":[1]}`
	for _, tc := range []struct {
		name, payload, want string
	}{
		{"all of their types", good, ""},
		{"a whole number written with a fraction is an integer", `{"s":"x","n":1,"i":3.0,"b":true,"a":[1],"o":{"k":1},"z":null,"any":"y"}`, ""},
		{"an optional input of the wrong type", `{"s":"x","n":1,"i":3,"b":true,"a":[],"o":{},"z":null,"any":0,"opt":5}`, ""},
		{"a missing input", `{"n":1,"i":3,"b":true,"a":[],"o":{},"z":null,"any":0}`, `missing required input "s"`},
		{"a missing untyped input", `{"s":"x","n":1,"i":3,"b":true,"a":[],"o":{},"z":null}`, `missing required input "any"`},
		{"a number for a string", `{"s":1,"n":1,"i":3,"b":true,"a":[],"o":{},"z":null,"any":0}`, `input "s" must be of type string`},
		{"a string for a number", `{"s":"x","n":"1","i":3,"b":true,"a":[],"o":{},"z":null,"any":0}`, `input "n" must be of type number`},
		{"a fraction for an integer", `{"s":"x","n":1,"i":2.5,"b":true,"a":[],"o":{},"z":null,"any":0}`, `input "i" must be of type integer`},
		{"a string for a boolean", `{"s":"x","n":1,"i":3,"b":"true","a":[],"o":{},"z":null,"any":0}`, `input "b" must be of type boolean`},
		{"an object for an array", `{"s":"x","n":1,"i":3,"b":true,"a":{},"o":{},"z":null,"any":0}`, `input "a" must be of type array`},
		{"an array for an object", `{"s":"x","n":1,"i":3,"b":true,"a":[],"o":[],"z":null,"any":0}`, `input "o" must be of type object`},
		{"a value for null", `{"s":"x","n":1,"i":3,"b":true,"a":[],"o":{},"z":0,"any":0}`, `input "z" must be of type null`},
		{"null for a string", `{"s":null,"n":1,"i":3,"b":true,"a":[],"o":{},"z":null,"any":0}`, `input "s" must be of type string`},
	} {
		var payload map[string]any
		if err := json.Unmarshal([]byte(tc.payload), &payload); err != nil {
			t.Fatal(err)
		}
		if got := checkRequired(schema, payload); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
	// A schema without required inputs, or one that does not parse, checks
	// nothing.
	for _, s := range []string{`{"type":"object"}`, `not json`} {
		if got := checkRequired(json.RawMessage(s), map[string]any{}); got != "" {
			t.Errorf("schema %s: %q; want nothing to check", s, got)
		}
	}
}
