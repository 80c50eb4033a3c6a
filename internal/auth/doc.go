// Package auth holds wunder's credential primitives, leaves that know
// nothing of HTTP or the store: argon2id password hashes (password.go),
// checked and made within a memory budget that bounds how many run at once
// (hasher.go), opaque bearer tokens kept only as SHA-256 hashes (token.go), JWT
// verification against an identity provider's JWKS (jwt.go, jwks.go), and
// per-key rate limits (ratelimit.go). It imports nothing of wunder and
// returns plain values; the gateway's authenticator composes them into
// principals.
//
//	h := auth.NewHasher(256<<20, 2*time.Second) // four 64 MiB hashes at once
//	hash, _ := h.Hash(ctx, "correct horse")
//	ok, err := h.Check(ctx, hash, "correct horse") // auth.ErrBusy when full
//	secret, hash := auth.NewToken() // give secret out once, store hash
package auth
