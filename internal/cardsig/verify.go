package cardsig

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Errors of [Verifier.Verify]; test them with errors.Is. Each refusal
// wraps ErrRefused and one of the reasons.
var (
	// ErrRefused: the card is not trusted.
	ErrRefused = errors.New("agent card refused")
	// ErrUnsigned: the card carries no signature and one is required.
	ErrUnsigned = errors.New("the card carries no signature")
	// ErrUnknownKey: no trusted key has the signature's kid.
	ErrUnknownKey = errors.New("unknown key")
	// ErrAlgorithm: the signature's alg is not accepted, or does not fit
	// the key its kid names.
	ErrAlgorithm = errors.New("algorithm not accepted")
	// ErrMismatch: the signature does not match the card — it was changed
	// after signing.
	ErrMismatch = errors.New("signature does not match the card")
	// ErrMalformed: a signature entry that is not a compact JWS part.
	ErrMalformed = errors.New("malformed signature")
	// ErrKeysUnavailable: the JWKS could not be read.
	ErrKeysUnavailable = errors.New("trusted keys unavailable")
)

// Bounds of what a card's signatures may hold.
const (
	maxSignatures     = 16
	maxProtectedBytes = 4 << 10
)

// trusted is one key a verifier accepts.
type trusted struct {
	kid, alg string
	key      crypto.PublicKey
}

// VerifyOptions configure a [Verifier].
type VerifyOptions struct {
	// Require refuses a card without signatures. Without it, an unsigned
	// card passes, and a signed one must still verify.
	Require bool
	// Keys are trusted public keys, PEM text or PEM files' paths ("PUBLIC
	// KEY" or "CERTIFICATE"), each known by its RFC 7638 thumbprint.
	Keys []string
	// JWKSURL is a JWKS of trusted keys, read at each verification (a card
	// is read once and kept until the peer fails), by their kid.
	JWKSURL string
	// HTTP reads JWKSURL; pass a client behind the SSRF guard
	// (internal/netguard). Default http.DefaultClient.
	HTTP *http.Client
}

// Verifier checks peer cards against trusted keys.
type Verifier struct {
	require bool
	static  []trusted
	jwksURL string
	hc      *http.Client
}

// NewVerifier loads the trusted keys of o. It fails when a key does not
// load, or when nothing is trusted.
func NewVerifier(o VerifyOptions) (*Verifier, error) {
	v := &Verifier{require: o.Require, jwksURL: o.JWKSURL, hc: o.HTTP}
	if v.hc == nil {
		v.hc = http.DefaultClient
	}
	for i, spec := range o.Keys {
		pub, alg, err := parsePublic(spec)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		kid, err := Thumbprint(pub)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		v.static = append(v.static, trusted{kid: kid, alg: alg, key: pub})
	}
	if len(v.static) == 0 && v.jwksURL == "" {
		return nil, errors.New("no trusted keys: give keys or a jwks_url")
	}
	return v, nil
}

// protectedHeader is what the verifier reads of a protected header.
type protectedHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// Verify checks card (the bytes as fetched): at least one of its
// signatures must be by a trusted key and match the card. A refusal says
// why, naming each signature's reason.
func (v *Verifier) Verify(ctx context.Context, card []byte) error {
	members, rawSigs, err := split(card)
	if err != nil {
		return fmt.Errorf("%w: %w: %w", ErrRefused, ErrMalformed, err)
	}
	var sigs []Signature
	if rawSigs != nil && string(rawSigs) != "null" {
		if err := json.Unmarshal(rawSigs, &sigs); err != nil {
			return fmt.Errorf("%w: %w: signatures must be a list of {protected, signature}: %w", ErrRefused, ErrMalformed, err)
		}
	}
	if len(sigs) == 0 {
		if v.require {
			return fmt.Errorf("%w: %w, and card_verification.require is set", ErrRefused, ErrUnsigned)
		}
		return nil
	}
	if len(sigs) > maxSignatures {
		return fmt.Errorf("%w: %w: %d signatures, at most %d are read", ErrRefused, ErrMalformed, len(sigs), maxSignatures)
	}
	keys := v.static
	var jwksErr error // reported with the refusal when the static keys do not verify
	if v.jwksURL != "" {
		fetched, err := fetchJWKS(ctx, v.hc, v.jwksURL)
		switch {
		case err != nil && len(keys) == 0:
			return fmt.Errorf("%w: %w: jwks_url: %w", ErrRefused, ErrKeysUnavailable, err)
		case err != nil:
			jwksErr = fmt.Errorf("%w: jwks_url: %w", ErrKeysUnavailable, err)
		default:
			keys = append(append([]trusted(nil), keys...), fetched...)
		}
	}
	// The signed form (defaults removed), then the card as it is less
	// its signatures, for signers that sign that.
	primary, err := payload(members)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	var plain []byte // computed once, if needed
	var errs []error
	for i, s := range sigs {
		err := check(s, keys, func(yield func([]byte) bool) {
			if !yield(primary) {
				return
			}
			if plain == nil {
				var perr error
				if plain, perr = canonical(members); perr != nil {
					return
				}
			}
			if !bytes.Equal(plain, primary) {
				yield(plain)
			}
		})
		if err == nil {
			return nil
		}
		if len(sigs) > 1 {
			err = fmt.Errorf("signature %d of %d: %w", i+1, len(sigs), err)
		}
		errs = append(errs, err)
	}
	if jwksErr != nil {
		errs = append(errs, jwksErr)
	}
	return &refusal{errs: errs}
}

// check verifies one signature against the payloads (the card's forms).
func check(s Signature, keys []trusted, payloads func(func([]byte) bool)) error {
	if s.Protected == "" || s.Signature == "" {
		return fmt.Errorf("%w: protected and signature are required", ErrMalformed)
	}
	if len(s.Protected) > maxProtectedBytes {
		return fmt.Errorf("%w: protected header longer than %d bytes", ErrMalformed, maxProtectedBytes)
	}
	raw, err := base64.RawURLEncoding.DecodeString(s.Protected)
	var h protectedHeader
	if err == nil {
		err = json.Unmarshal(raw, &h)
	}
	if err != nil {
		return fmt.Errorf("%w: protected is not base64url JSON: %w", ErrMalformed, err)
	}
	switch h.Alg {
	case ES256, ES384, EdDSA:
	default:
		return fmt.Errorf("%w: alg %q (accepted: ES256, ES384, EdDSA)", ErrAlgorithm, h.Alg)
	}
	if h.Kid == "" {
		return fmt.Errorf("%w: the protected header names no kid", ErrUnknownKey)
	}
	var key *trusted
	for i := range keys {
		if keys[i].kid == h.Kid {
			key = &keys[i]
			break
		}
	}
	if key == nil {
		return fmt.Errorf("%w: kid %q is not a trusted key", ErrUnknownKey, h.Kid)
	}
	if key.alg != h.Alg {
		return fmt.Errorf("%w: alg %q does not fit key %q, which signs with %s", ErrAlgorithm, h.Alg, h.Kid, key.alg)
	}
	for p := range payloads {
		jws, err := jose.ParseDetached(s.Protected+".."+s.Signature, p, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(h.Alg)})
		if err != nil {
			return fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if jws.DetachedVerify(p, key.key) == nil {
			return nil
		}
	}
	return fmt.Errorf("%w (kid %q): the card was changed after it was signed", ErrMismatch, h.Kid)
}

// refusal is the error of a card none of whose signatures verified.
type refusal struct{ errs []error }

func (r *refusal) Error() string {
	parts := make([]string, len(r.errs))
	for i, e := range r.errs {
		parts[i] = e.Error()
	}
	return ErrRefused.Error() + ": " + strings.Join(parts, "; ")
}

func (r *refusal) Unwrap() []error { return append([]error{ErrRefused}, r.errs...) }
