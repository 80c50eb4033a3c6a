package a2awire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
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

// SameField finds in the JSON params two keys of one object that wunder
// reads as one field: a key given twice, or two spellings that
// ProtoNames and encoding/json take for the same name ("task_id" and
// "taskId"; "id" and "ID", Go matching names case-insensitively, with
// Unicode's simple folding: "ſ" is "s"). Wunder reads the last of them
// (the lowerCamelCase one before a proto name); another parser may read
// the first, or the exact spelling only. Values of free-form fields
// (metadata, data parts) are not looked into. It reports nothing for
// params that are not JSON (their decoder refuses them).
func SameField(params []byte) (first, second string, found bool) {
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	first, second, found, _ = sameField(d, 0)
	return first, second, found
}

// freeFormNames are the folded names of freeForm's fields (encoding/json
// takes "Metadata" for metadata).
var freeFormNames = map[string]bool{foldName("metadata"): true, foldName("data"): true}

// maxSameFieldDepth is encoding/json's bound on nesting: deeper params
// are refused by their decoder anyway.
const maxSameFieldDepth = 10000

// sameField reads one value from d, looking for two keys of an object
// that name one field.
func sameField(d *json.Decoder, depth int) (first, second string, found bool, err error) {
	if depth > maxSameFieldDepth {
		return "", "", false, errors.New("too deep")
	}
	tok, err := d.Token()
	if err != nil {
		return "", "", false, err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]string{}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return "", "", false, err
			}
			key, _ := kt.(string)
			name := foldName(key)
			if k, ok := seen[name]; ok {
				return k, key, true, nil
			}
			seen[name] = key
			if freeFormNames[name] {
				var skip json.RawMessage
				if err := d.Decode(&skip); err != nil {
					return "", "", false, err
				}
				continue
			}
			if first, second, found, err = sameField(d, depth+1); found || err != nil {
				return first, second, found, err
			}
		}
		_, err = d.Token() // '}'
	case json.Delim('['):
		for d.More() {
			if first, second, found, err = sameField(d, depth+1); found || err != nil {
				return first, second, found, err
			}
		}
		_, err = d.Token() // ']'
	}
	return "", "", false, err
}

// foldName is the name a key is matched by: ProtoNames' lowerCamelCase
// spelling, each rune folded to the least of its simple case-folding
// orbit (so that two names are equal as bytes.EqualFold, which
// encoding/json matches field names with, says).
func foldName(key string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, lowerCamel(key))
}
