package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// TokenPrefix starts every user token wunder issues, so a leaked one is
// recognisable (secret scanners, logs) and told apart from an API key or a
// JWT without a lookup.
const TokenPrefix = "wdr_"

// NewToken returns a fresh bearer token (TokenPrefix and 32 random bytes,
// base32) and the hash to store. The secret is given to its owner once
// and never stored.
func NewToken() (secret, hash string) {
	secret = TokenPrefix + strings.ToLower(rand.Text()) + strings.ToLower(rand.Text())
	return secret, HashToken(secret)
}

// HashToken is the stored form of a token secret: hex SHA-256. Tokens are
// long random strings, so a fast hash is enough (no salt or stretching
// needed) and lookups are by equality of hashes.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// LooksLikeToken reports whether s has the shape of a token wunder issues:
// the prefix and 52 lower-case base32 characters. Anything else is
// refused without a store lookup.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != 52 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// NewID returns a public id for a token ("tok_" and 16 base32 characters):
// listing and revoking name tokens by it.
func NewID() string { return "tok_" + strings.ToLower(rand.Text())[:16] }
