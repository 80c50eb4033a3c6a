package cardsig

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
)

// Signature is one entry of a card's signatures (A2A 1.0
// AgentCardSignature): the JWS protected header and signature, base64url,
// and the optional unprotected header.
type Signature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// Options of a [Signer]. Zero values mean the defaults stated.
type Options struct {
	// KID names the key in the protected header and the JWKS. Default: the
	// key's RFC 7638 thumbprint.
	KID string
	// JKU, when set, goes into the protected header: the URL of the JWKS
	// that holds the key. Default: none.
	JKU string
}

// Signer signs cards with one key.
type Signer struct {
	pub    crypto.PublicKey
	alg    string
	kid    string
	signer jose.Signer
	jwks   []byte

	// mu guards memo: the signed card of each card recently signed, so a
	// card that did not change keeps its bytes (and its ETag) although
	// ECDSA signatures are randomised.
	mu   sync.Mutex
	memo map[[sha256.Size]byte][]byte
}

// maxMemo bounds the memo; it is cleared when full.
const maxMemo = 64

// NewSigner loads the private key keySpec (PEM text or a PEM file's path;
// EC P-256, EC P-384 or Ed25519).
func NewSigner(keySpec string, opts *Options) (*Signer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	key, alg, err := parsePrivate(keySpec)
	if err != nil {
		return nil, err
	}
	kid := o.KID
	if kid == "" {
		if kid, err = Thumbprint(key.Public()); err != nil {
			return nil, err
		}
	}
	so := (&jose.SignerOptions{}).WithType("JOSE")
	if o.JKU != "" {
		so = so.WithHeader("jku", o.JKU)
	}
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: jose.JSONWebKey{Key: key, KeyID: kid}}, so)
	if err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}}})
	if err != nil {
		return nil, err
	}
	return &Signer{pub: key.Public(), alg: alg, kid: kid, signer: js, jwks: jwks, memo: map[[sha256.Size]byte][]byte{}}, nil
}

// KID is the key's id.
func (s *Signer) KID() string { return s.kid }

// Alg is the key's algorithm: ES256, ES384 or EdDSA.
func (s *Signer) Alg() string { return s.alg }

// Public is the public key.
func (s *Signer) Public() crypto.PublicKey { return s.pub }

// JWKS is the JSON Web Key Set of the public key.
func (s *Signer) JWKS() []byte { return bytes.Clone(s.jwks) }

// Sign returns card with a signatures member holding one signature by this
// key; signatures the card already had (a peer's, when wunder re-serves a
// card) are replaced. The same card gives the same bytes while it stays in
// the memo.
func (s *Signer) Sign(card []byte) ([]byte, error) {
	sum := sha256.Sum256(card)
	s.mu.Lock()
	out, ok := s.memo[sum]
	s.mu.Unlock()
	if ok {
		return out, nil
	}
	members, old, err := split(card)
	if err != nil {
		return nil, err
	}
	signed, err := payload(members)
	if err != nil {
		return nil, err
	}
	obj, err := s.signer.Sign(signed)
	if err != nil {
		return nil, fmt.Errorf("sign agent card: %w", err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return nil, err
	}
	prot, sig, _ := strings.Cut(compact, "..")
	sigs, err := json.Marshal([]Signature{{Protected: prot, Signature: sig}})
	if err != nil {
		return nil, err
	}
	if old == nil {
		out = appendMember(card, sigs) // members as split saw them, less signatures
	} else {
		members[signaturesKey] = sigs
		if out, err = json.Marshal(members); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	if len(s.memo) >= maxMemo {
		clear(s.memo)
	}
	s.memo[sum] = out
	s.mu.Unlock()
	return out, nil
}

// appendMember adds "signatures": sigs as the last member of the object
// card (valid JSON, checked by split), keeping the rest byte for byte.
func appendMember(card, sigs []byte) []byte {
	body := bytes.TrimRight(card, " \t\r\n")
	body = body[:len(body)-1] // the closing brace
	var out bytes.Buffer
	out.Grow(len(card) + len(sigs) + 16)
	out.Write(body)
	if len(bytes.TrimSpace(bytes.TrimLeft(body, " \t\r\n")[1:])) > 0 {
		out.WriteByte(',')
	}
	out.WriteString(`"signatures":`)
	out.Write(sigs)
	out.WriteByte('}')
	return out.Bytes()
}
