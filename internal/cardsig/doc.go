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
// The signed bytes are the card as served, less `signatures`. Section
// 8.4.1 also asks that default values be removed first, which needs the
// protobuf schema; wunder's builder already leaves unset optional fields
// out, so it signs what it serves. The verifier accepts that form and,
// failing it, the form of the reference SDK (a2a-python: empty strings,
// lists and objects removed), so cards signed by either verify.
package cardsig
