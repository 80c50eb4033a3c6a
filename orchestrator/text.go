package orchestrator

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// StoredText is s as every [Store] keeps it: valid UTF-8 without NUL. Each
// NUL byte and each byte of an invalid UTF-8 sequence becomes U+FFFD (the
// replacement character); everything else, other control characters
// included, is kept as is. Stores apply it to every string they write and
// to every string they look up by, so a text column never holds what one
// backend cannot (PostgreSQL text holds neither NUL nor invalid UTF-8) and
// GetRun("r\x00") is a plain ErrNotFound. The replacement of invalid bytes
// is the one encoding/json makes when it encodes such a string, so a
// client reading a stored value over JSON sees what it would have seen of
// the original.
//
// Valid UTF-8 without NUL is returned unchanged: ids and user ids that pass
// [ValidateUserID] and [CheckRunID] are stored as given.
func StoredText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s { // an invalid byte ranges as utf8.RuneError, width 1
		if r == 0 {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// StoredJSON is [StoredText] for JSON kept as text (event data, tool
// arguments): a raw NUL or invalid byte becomes U+FFFD, escapes such as
// \u0000 are text and stay as they are. Empty input is nil.
func StoredJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(StoredText(string(b)))
}

// ClipText cuts s to at most n bytes, on a rune boundary, marking a cut
// with "…": how front-ends shorten a value they quote in a message.
func ClipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutText(s, n) + "…"
}

// CutText cuts s to at most n bytes, on a rune boundary, with no mark.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
