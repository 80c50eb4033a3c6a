package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Client-to-server messages: what a client sends when the user acts on a
// surface (action) or when it could not render one (error). A front-end
// hands them to the model as text, one line per message: the prefix and
// the message's body as JSON, e.g.
//
//	[a2ui action] {"context":{"name":"Ada"},"name":"submit","sourceComponentId":"send","surfaceId":"form","timestamp":"2026-12-08T10:00:00Z"}
//
// The web console writes the same lines for its buttons (web/src/a2ui.ts).
//
// The list is not a transaction (the extension's processing rules): each
// message is read on its own, and one that is not a valid client message
// becomes a line that says why ("[a2ui invalid] message 1: ...") while
// the others still count. Only data that is no list of messages at all
// (not JSON, another type, over the bounds) is refused.

// Prefixes of the text a client message becomes.
const (
	ActionPrefix  = "[a2ui action] "
	ErrorPrefix   = "[a2ui error] "
	InvalidPrefix = "[a2ui invalid] "
)

// Bounds of the A2UI data of one incoming part.
const (
	MaxClientBytes    = 64 << 10
	MaxClientMessages = 16
)

// ClientText reads data, the A2UI messages of a client's DataPart (a list,
// or one message object), and returns the text the model reads. An error
// says why the data is no list of messages, for the client.
func ClientText(data json.RawMessage) (string, error) {
	data = bytes.TrimSpace(data)
	if len(data) > MaxClientBytes {
		return "", fmt.Errorf("A2UI data of %d bytes is over the limit of %d", len(data), MaxClientBytes)
	}
	if d := depth(data); d > MaxDepth {
		return "", fmt.Errorf("A2UI data nests %d levels deep, over the limit of %d", d, MaxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("A2UI data is not JSON: %v", err)
	}
	var list []any
	switch t := v.(type) {
	case []any:
		list = t
	case map[string]any:
		list = []any{t}
	default:
		return "", fmt.Errorf("A2UI data must be a list of messages such as {\"version\":%q,\"action\":{...}}, not %s", Version, typeName(v))
	}
	switch {
	case len(list) == 0:
		return "", fmt.Errorf("A2UI data holds no message")
	case len(list) > MaxClientMessages:
		return "", fmt.Errorf("A2UI data holds %d messages, over the limit of %d", len(list), MaxClientMessages)
	}
	var b strings.Builder
	for i, e := range list {
		line, err := clientLine(e)
		if err != nil {
			line = fmt.Sprintf("%smessage %d: %v", InvalidPrefix, i, err)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String(), nil
}

// clientLine checks one client message and returns its line.
func clientLine(e any) (string, error) {
	m, ok := e.(map[string]any)
	if !ok {
		return "", fmt.Errorf("must be an object, not %s", typeName(e))
	}
	if v, ok := m["version"]; ok && v != Version {
		return "", fmt.Errorf("version must be %q, not %s", Version, show(v))
	}
	action, isAction := m["action"].(map[string]any)
	failure, isError := m["error"].(map[string]any)
	switch {
	case isAction && isError:
		return "", fmt.Errorf("has both action and error: a message carries one")
	case isAction:
		if s, _ := action["name"].(string); s == "" {
			return "", fmt.Errorf("action.name is required")
		}
		if s, _ := action["surfaceId"].(string); s == "" {
			return "", fmt.Errorf("action.surfaceId is required")
		}
		if cx, ok := action["context"]; ok {
			if _, ok := cx.(map[string]any); !ok {
				return "", fmt.Errorf("action.context must be an object, not %s", typeName(cx))
			}
		}
		return ActionPrefix + string(compact(action)), nil
	case isError:
		if s, _ := failure["code"].(string); s == "" {
			return "", fmt.Errorf("error.code is required")
		}
		if _, ok := failure["message"].(string); !ok {
			return "", fmt.Errorf("error.message is required")
		}
		return ErrorPrefix + string(compact(failure)), nil
	}
	return "", fmt.Errorf("needs action or error (a client sends these; %s are the server's)", orList(messageKinds))
}
