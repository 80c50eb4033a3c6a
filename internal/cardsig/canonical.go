package cardsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
)

// signaturesKey is the card member a signature leaves out.
const signaturesKey = "signatures"

// split checks card (one JSON object, I-JSON: no duplicate names) and
// returns its members and the raw signatures member (nil when absent).
func split(card []byte) (map[string]json.RawMessage, json.RawMessage, error) {
	// JCS parses strictly: a duplicate member name, which two JSON readers
	// may resolve differently, is refused before anything is signed or
	// trusted.
	canon, err := jcs.Transform(card)
	if err != nil {
		return nil, nil, fmt.Errorf("agent card is not canonicalizable JSON: %w", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(canon, &m); err != nil || m == nil {
		return nil, nil, errors.New("agent card is not a JSON object")
	}
	sigs := m[signaturesKey]
	delete(m, signaturesKey)
	return m, sigs, nil
}

// canonical is the RFC 8785 form of members.
func canonical(members map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// Canonical returns the RFC 8785 (JCS) form of card without its
// signatures member.
func Canonical(card []byte) ([]byte, error) {
	m, _, err := split(card)
	if err != nil {
		return nil, err
	}
	return canonical(m)
}

// Payload returns the bytes wunder signs, and the first form a verifier
// tries: the card without its signatures, its default values removed (A2A
// 1.0 section 8.4.1) as the reference SDKs remove them (a2a-python's and
// @a2a-js's canonicalizeAgentCard: null, "", [] and {} dropped,
// recursively, a container left empty going too), in RFC 8785 form.
func Payload(card []byte) ([]byte, error) {
	m, _, err := split(card)
	if err != nil {
		return nil, err
	}
	return payload(m)
}

// payload is the signed form of a card's members.
func payload(members map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(members)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers keep their text; JCS formats them
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	cleaned, _ := clean(v)
	if cleaned == nil {
		cleaned = map[string]any{}
	}
	out, err := json.Marshal(cleaned)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(out)
}

// clean drops empty values; nil means v itself is empty. It reports
// whether anything was dropped.
func clean(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		if x == "" {
			return nil, true
		}
	case map[string]any:
		changed := false
		for k, e := range x {
			c, ch := clean(e)
			changed = changed || ch
			if c == nil {
				delete(x, k)
			} else {
				x[k] = c
			}
		}
		if len(x) == 0 {
			return nil, true
		}
		return x, changed
	case []any:
		out := x[:0]
		changed := false
		for _, e := range x {
			c, ch := clean(e)
			changed = changed || ch
			if c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, true
		}
		return out, changed
	}
	return v, false
}
