package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/wunder/wunder/orchestrator"
)

// The rule for the ids of new accounts (self-registration, admin user
// creation, `wunder user add`). Lookups keep orchestrator.ValidateUserID,
// the older and wider rule, so accounts and data stored under ids made
// before this rule keep working; only what is created now is held to it.
//
// One normalisation: NFKC, then case folded (orchestrator.FoldUserID),
// then NFKC again. "Ａｌｉｃｅ", "ALICE" and "alice" are the one id
// "alice"; the account is stored under that form and the store keeps it
// unique ignoring case. One character set, after normalisation: letters
// (any script, one script per id, but for Latin with Chinese, Japanese or
// Korean writing), combining marks after the first character, decimal digits,
// and ". _ -"; it starts and ends with a letter or digit, and is at most
// 128 bytes. Spaces, control and format characters (a zero-width space, a
// bidi mark), symbols and other punctuation are refused, not stripped: an
// id that looked like another must not quietly become it. "@" is refused
// too: it joins a user id to a tool's name (alice@srv@echo is alice's
// server srv's tool echo), so a user "alice@srv" would name her tools.
//
// Reserved: the ids the server acts as itself — a2a.server.user_id and
// mcp.server.user_id (by default "a2a" and "wunder"), the prefixes of its
// load tests and evaluations ("wunder-") and of `wunder bench` ("bench-")
// — and names a person could mistake for the server's: admin, system,
// root, anonymous.

// maxNewUserIDBytes bounds a new id, as orchestrator.ValidateUserID bounds
// every id.
const maxNewUserIDBytes = 128

var (
	// serverUserIDs are ids the server acts as; serverPrefixes start ids
	// it makes up (internal/loadtest, internal/evaluation, wunder bench).
	serverUserIDs  = []string{"a2a", "wunder"}
	serverPrefixes = []string{"wunder-", "bench-"}
	// lookalikeUserIDs are names that would pass for the server's.
	lookalikeUserIDs = []string{"admin", "system", "root", "anonymous"}
)

// errUserIDReserved is wrapped by the error of a reserved id.
var errUserIDReserved = errors.New("reserved")

// UserIDRule checks the ids of new accounts; the zero value reserves the
// built-in ids only.
type UserIDRule struct {
	own []string // canonical ids the server acts as, beside serverUserIDs
}

// NewUserIDRule returns the rule reserving, beside the built-in ids, the
// ids this server acts as (a2a.server.user_id, mcp.server.user_id).
func NewUserIDRule(serverIDs ...string) UserIDRule {
	var r UserIDRule
	for _, id := range serverIDs {
		if id = canonicalUserID(id); id != "" && !slices.Contains(r.own, id) {
			r.own = append(r.own, id)
		}
	}
	return r
}

// canonicalUserID is id normalised: NFKC, case folded, NFKC.
func canonicalUserID(id string) string {
	return norm.NFKC.String(orchestrator.FoldUserID(norm.NFKC.String(id)))
}

// Check returns the id a new account named id gets (its normal form), or
// an error wrapping orchestrator.ErrInvalidArgument that says which rule
// it breaks.
func (r UserIDRule) Check(id string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w: user_id %q "+format, append([]any{orchestrator.ErrInvalidArgument, id}, args...)...)
	}
	switch {
	case id == "":
		return "", fmt.Errorf("%w: user_id is required", orchestrator.ErrInvalidArgument)
	case len(id) > 4*maxNewUserIDBytes:
		return "", fmt.Errorf("%w: user_id is longer than %d bytes", orchestrator.ErrInvalidArgument, maxNewUserIDBytes)
	case !utf8.ValidString(id):
		return bad("is not valid UTF-8")
	}
	c := canonicalUserID(id)
	if len(c) > maxNewUserIDBytes {
		return "", fmt.Errorf("%w: user_id is longer than %d bytes", orchestrator.ErrInvalidArgument, maxNewUserIDBytes)
	}
	for i, ch := range c {
		if why := badUserIDRune(ch, i == 0); why != "" {
			return bad("%s (user ids are letters, digits and . _ -)", why)
		}
	}
	if last, _ := utf8.DecodeLastRuneInString(c); !unicode.IsLetter(last) && !unicode.IsDigit(last) && !unicode.IsMark(last) {
		return bad("must end with a letter or digit")
	}
	if s := mixedScripts(c); s != "" {
		return bad("mixes the scripts %s (one script per id, against look-alike letters)", s)
	}
	if r.reserved(c) {
		return "", fmt.Errorf("%w: user_id %q is %w: the server uses it, or it would pass for the server", orchestrator.ErrInvalidArgument, c, errUserIDReserved)
	}
	return c, nil
}

// badUserIDRune says why ch may not be in a new id ("" if it may).
func badUserIDRune(ch rune, first bool) string {
	switch {
	case unicode.IsLetter(ch), unicode.IsDigit(ch):
		return ""
	case first:
		return "must start with a letter or digit"
	case unicode.IsMark(ch), strings.ContainsRune("._-", ch):
		return ""
	case unicode.IsSpace(ch):
		return "contains a space"
	case unicode.IsControl(ch), unicode.Is(unicode.Cf, ch):
		return fmt.Sprintf("contains the invisible character U+%04X", ch)
	}
	return fmt.Sprintf("contains %q", ch)
}

// reserved reports whether the canonical id c is one no account may take.
func (r UserIDRule) reserved(c string) bool {
	return r.ServerOwned(c) || slices.Contains(lookalikeUserIDs, c)
}

// ServerOwned reports whether id is one the server acts as itself, or
// could make up (a load test's, an evaluation's), ignoring case: no one
// else's credential may name it, since data the server's own traffic
// stores under it would be theirs.
func (r UserIDRule) ServerOwned(id string) bool {
	c := canonicalUserID(id)
	if slices.Contains(serverUserIDs, c) || slices.Contains(r.own, c) {
		return true
	}
	return slices.ContainsFunc(serverPrefixes, func(p string) bool { return strings.HasPrefix(c, p) })
}

// scriptSets are the sets of scripts one id may mix (Unicode TS #39's
// "highly restrictive" profile): Latin with the scripts of Chinese,
// Japanese and Korean writing. Latin with Cyrillic or Greek, the classic
// look-alikes, is none of them.
var scriptSets = [][]string{
	{"Latin", "Han", "Hiragana", "Katakana"},
	{"Latin", "Han", "Bopomofo"},
	{"Latin", "Han", "Hangul"},
}

// mixedScripts names the scripts of id's letters (Common and Inherited
// aside) when no one script nor one of scriptSets holds them all, "" when
// one does.
func mixedScripts(id string) string {
	var seen []string
	for _, ch := range id {
		if s := scriptOf(ch); s != "" && !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) < 2 {
		return ""
	}
	for _, set := range scriptSets {
		if !slices.ContainsFunc(seen, func(s string) bool { return !slices.Contains(set, s) }) {
			return ""
		}
	}
	slices.Sort(seen)
	return strings.Join(seen, ", ")
}

// scriptOf is the Unicode script of a letter ("" for anything else, and
// for Common and Inherited).
func scriptOf(ch rune) string {
	if !unicode.IsLetter(ch) {
		return ""
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, ch) {
			return name
		}
	}
	return ""
}
