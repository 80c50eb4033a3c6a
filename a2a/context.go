package a2a

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Contexts. A2A's contextId is a wunder session. The agent issues one for
// a message that names none; a client may also name a context of its own
// (specification section 3.4: "Agents MAY accept and preserve
// client-provided contextId values"), which starts it, or continues it
// when the client named it before.
//
// Such names are the client's, so they are kept apart per user: the
// session of user u named n is "ctx_" + tag(u) + "_" + n, where tag is the
// first 64 bits of SHA-256(u). Two users naming the same context get two
// sessions; a name can never reach another user's session, and which names
// other users took shows nowhere (every name is free to every user). A
// contextId of the form wunder issues ("sess_...") is a session as it is,
// found only among the caller's own, as before. Answers carry the name the
// client chose (contextOf), never the session behind it.

const (
	issuedPrefix = "sess_" // orchestrator's session ids
	namedPrefix  = "ctx_"
	tagLen       = 16 // hex digits
	// maxContextName bounds a client's name: a session id is at most 128
	// bytes, and the prefix and tag take 21.
	maxContextName = 128 - len(namedPrefix) - tagLen - 1
)

// sessionOf maps the contextId a message names to its session: named
// tells a client-chosen name (its session may be created) from an issued
// id (it must exist and be the user's).
func sessionOf(userID, contextID string) (sessionID string, named bool, err error) {
	if strings.HasPrefix(contextID, issuedPrefix) {
		return contextID, false, nil
	}
	if len(contextID) > maxContextName || strings.ContainsFunc(contextID, notNameRune) {
		return "", false, errParams("contextId %q: a context named by its client holds at most %d letters, digits, _ - . or :", short(contextID), maxContextName)
	}
	return namedPrefix + tag(userID) + "_" + contextID, true, nil
}

// contextOf is the contextId of a session: the client's name for a named
// one, the id itself for one wunder issued.
func contextOf(sessionID string) string {
	rest, ok := strings.CutPrefix(sessionID, namedPrefix)
	if !ok || len(rest) <= tagLen || rest[tagLen] != '_' {
		return sessionID
	}
	return rest[tagLen+1:]
}

func tag(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return hex.EncodeToString(sum[:tagLen/2])
}

func notNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:", r))
}

// short bounds a name echoed in an error.
func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
