// Package auth holds wunder's credential primitives, leaves that know
// nothing of HTTP or the store: argon2id password hashes (password.go),
// opaque bearer tokens kept only as SHA-256 hashes (token.go), JWT
// verification against an identity provider's JWKS (jwt.go, jwks.go), and
// per-key rate limits (ratelimit.go). It imports nothing of wunder and
// returns plain values; the gateway's authenticator composes them into
// principals.
//
//	hash, _ := auth.HashPassword("correct horse")
//	ok := auth.CheckPassword(hash, "correct horse")
//	secret, hash := auth.NewToken() // give secret out once, store hash
package auth
