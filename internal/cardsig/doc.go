// Package cardsig signs wunder's A2A agent card and verifies the cards of
// peer agents, as A2A 1.0 section 8.4 defines: each entry of the card's
// `signatures` is a detached JWS (RFC 7515) over the RFC 8785 (JCS) form
// of the card without its `signatures` member, with alg, kid and typ
// "JOSE" (and jku when configured) in the protected header.
//
// Signing (agentcard calls [Signer.Sign] on each card it builds; cmd/wunder
// mounts [Signer.JWKSHandler] at [JWKSPath]):
//
//	s, err := cardsig.NewSigner(cfg.A2A.Server.CardSigningKey, &cardsig.Options{JKU: base + cardsig.JWKSPath})
//	signed, err := s.Sign(cardJSON)
//
// Verifying (adapters/a2atools, before it trusts a peer's card):
//
//	v, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: pems, JWKSURL: u, HTTP: guarded})
//	if err := v.Verify(ctx, cardJSON); err != nil { ... } // wraps ErrRefused and the reason
//
// Keys are EC P-256 (ES256), EC P-384 (ES384) or Ed25519 (EdDSA), given as
// PEM text or the path of a PEM file. A key's kid is its RFC 7638
// thumbprint unless configured. JWS and JWK come from go-jose; JCS from
// github.com/gowebpki/jcs, the RFC author's Go implementation.
//
// What is signed ([Payload]): the card less `signatures`, with its default
// values removed first as section 8.4.1 asks. Knowing which members are
// defaults needs the protobuf schema; the reference SDKs (a2a-python,
// @a2a-js) remove null, "", [] and {} recursively, and so does wunder, so
// their verifiers and wunder's agree. Such empty members are therefore not
// covered: adding or removing one does not break a signature. The
// verifier tries that form, then the card as it is less `signatures`
// ([Canonical]), for signers that sign that.
package cardsig
