package orchestrator

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ids and user ids: what the core accepts at its entry points.
//
// Run and session ids are issued by wunder (a prefix, the time and 80
// random bits in lower-case base32, see newID); clients only ever echo them back (A2A taskId and contextId,
// MCP and Connect session ids), they never choose one. An id is therefore
// at most maxIDLen bytes of ASCII letters, digits and "_-.:"; anything else
// cannot name a run or session and is ErrNotFound without asking the store,
// and an empty id where one is required is ErrInvalidArgument.

const (
	maxUserIDLen = 128
	maxIDLen     = 128
)

// ValidateUserID reports whether id may be a user id: 1 to 128 bytes of
// valid UTF-8 with no control character (C0, DEL, C1), no "/" or "\", and
// not "." or "..". A user id is one path element of the workspace
// directory, so these rules keep it inside; "a..b" is a valid user id. The
// error wraps ErrInvalidArgument. Every edge that takes a user id applies
// this one rule (through the core), and so does the workspace. A new
// account's id is also held to a narrower rule (gateway.UserIDRule: one
// character set, one normal form, reserved ids); ids stored before it keep
// this one, so their accounts and data keep working.
func ValidateUserID(id string) error {
	bad := func(why string) error { return fmt.Errorf("%w: user_id %q %s", ErrInvalidArgument, id, why) }
	switch {
	case id == "":
		return fmt.Errorf("%w: user_id is required", ErrInvalidArgument)
	case len(id) > maxUserIDLen:
		return fmt.Errorf("%w: user_id is longer than %d bytes", ErrInvalidArgument, maxUserIDLen)
	case !utf8.ValidString(id):
		return bad("is not valid UTF-8")
	case strings.ContainsFunc(id, unicode.IsControl):
		return bad("contains a control character")
	case strings.ContainsAny(id, `/\`):
		return bad("contains a path separator")
	case id == "." || id == "..":
		return bad("is not allowed")
	}
	return nil
}

// FoldUserID is the key under which user ids are unique: id with each
// character case-folded (Unicode simple case folding, to lower case), so
// "Alice", "ALICE" and "alice" share one key. Every account store (package accounts) keeps
// account ids unique by this key, deleted accounts included, and login
// throttles count attempts by it. It folds case only: the rule for new
// account ids (gateway.UserIDRule) normalises width and composition (NFKC)
// before an id is stored, so that two new ids never differ by those
// either; ids stored before that rule keep the form they were given.
func FoldUserID(id string) string {
	return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, id)
}

// CheckRunID returns nil when id can name a run, ErrInvalidArgument when it
// is empty and ErrNotFound when it holds anything an id wunder issues
// cannot.
func CheckRunID(id string) error { return checkID("run", id) }

// CheckSessionID is [CheckRunID] for session ids.
func CheckSessionID(id string) error { return checkID("session", id) }

// CheckID is [CheckRunID] for the ids of anything else wunder issues
// ([NewID]); kind names it in the error ("memory task").
func CheckID(kind, id string) error { return checkID(kind, id) }

// NewID returns a new id with the prefix, of the form of run and session
// ids: the time first, so ids issued together sort together, then 80
// random bits.
func NewID(prefix string) string { return newID(prefix) }

func checkID(kind, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s id is required", ErrInvalidArgument, kind)
	}
	if len(id) > maxIDLen || strings.ContainsFunc(id, notIDRune) {
		return fmt.Errorf("%w: %s %q", ErrNotFound, kind, truncateID(id))
	}
	return nil
}

func notIDRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r))
}

// truncateID bounds an id echoed in an error message.
func truncateID(id string) string {
	if len(id) > 64 {
		return id[:64] + "..."
	}
	return id
}
