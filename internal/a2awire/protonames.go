package a2awire

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ProtoNames rewrites the field names of A2A params written with the
// proto field names ("task_id", "history_length",
// "push_notification_config") to the lowerCamelCase JSON names wunder
// decodes: a ProtoJSON parser accepts both (the A2A 1.0 spec says params
// are ProtoJSON). Keys without '_' and the contents of free-form values —
// metadata and data parts — are left as they are; where both spellings
// are present the lowerCamelCase one wins. Params that are not a JSON
// object, or have no key with a '_', come back unchanged (and are not
// decoded: values hold '_' in every A2A 1.0 request, "ROLE_USER").
func ProtoNames(params json.RawMessage) json.RawMessage {
	if !snakeKey(params) {
		return params
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return params
	}
	if _, ok := v.(map[string]any); !ok {
		return params
	}
	out, err := json.Marshal(camelKeys(v))
	if err != nil {
		return params
	}
	return out
}

// snakeKey reports whether some object key of the JSON b holds a '_'. It
// skips strings whole (escapes included) and calls a string a key when a
// ':' follows it. On bytes that are not JSON its answer does not matter:
// ProtoNames would return them unchanged either way.
func snakeKey(b []byte) bool {
	if bytes.IndexByte(b, '_') < 0 {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j, underscore := i+1, false
		for ; j < len(b) && b[j] != '"'; j++ {
			switch b[j] {
			case '\\':
				j++
			case '_':
				underscore = true
			}
		}
		k := j + 1
		for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
			k++
		}
		if underscore && k < len(b) && b[k] == ':' {
			return true
		}
		i = j
	}
	return false
}

// freeForm are the fields whose values are the caller's own JSON.
var freeForm = map[string]bool{"metadata": true, "data": true}

func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if !freeForm[k] {
				val = camelKeys(val)
			}
			ck := lowerCamel(k)
			if ck != k {
				if _, both := x[ck]; both {
					continue
				}
				if freeForm[ck] {
					val = x[k] // as given: free-form under its proto name too
				}
			}
			out[ck] = val
		}
		return out
	case []any:
		for i := range x {
			x[i] = camelKeys(x[i])
		}
		return x
	}
	return v
}

// lowerCamel is protoc's JSON name of a field name: "task_id" -> "taskId".
func lowerCamel(name string) string {
	if !strings.Contains(name, "_") {
		return name
	}
	var b strings.Builder
	upper := false
	for _, r := range name {
		switch {
		case r == '_':
			upper = true
		case upper && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			upper = false
		default:
			b.WriteRune(r)
			upper = false
		}
	}
	return b.String()
}
