// Package auth holds wunder's credential primitives: password hashes, opaque
// tokens, JWT verification against an identity provider's JWKS, and
// per-principal rate limits.
//
// It is a leaf: it imports nothing of wunder and returns plain values, so the
// authenticator in the gateway turns them into a principal.
package auth
