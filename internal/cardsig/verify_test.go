package cardsig_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/cardsig"
)

func sign(t *testing.T, k testKey, card string, opts *cardsig.Options) []byte {
	t.Helper()
	s, err := cardsig.NewSigner(k.privPEM, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sign([]byte(card))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func verifier(t *testing.T, o cardsig.VerifyOptions) *cardsig.Verifier {
	t.Helper()
	v, err := cardsig.NewVerifier(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// edit decodes a signed card, lets f change it and encodes it again (the
// signatures kept as they were).
func edit(t *testing.T, signed []byte, f func(m map[string]any)) []byte {
	t.Helper()
	m := decode(t, signed)
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each key type verifies from a trusted PEM key and from a JWKS; every
// change to a signed card — a top-level field, a nested one, an added or
// a removed member, a reordered list — is refused as a mismatch, while
// re-encoding the same card (member order, whitespace) is not a change.
func TestVerifyAndTamper(t *testing.T) {
	t.Parallel()
	for _, k := range allKeys(t) {
		signer, _ := cardsig.NewSigner(k.privPEM, nil)
		jwks := httptest.NewServer(signer.JWKSHandler())
		defer jwks.Close()
		signed := sign(t, k, sampleCard, nil)
		byPEM := verifier(t, cardsig.VerifyOptions{Require: true, Keys: []string{writeFile(t, "trusted.pem", k.pubPEM)}})
		byJWKS := verifier(t, cardsig.VerifyOptions{Require: true, JWKSURL: jwks.URL})
		for name, v := range map[string]*cardsig.Verifier{"pem": byPEM, "jwks": byJWKS} {
			if err := v.Verify(t.Context(), signed); err != nil {
				t.Errorf("%s/%s: Verify(signed) = %v", k.name, name, err)
			}
			reencoded := edit(t, signed, func(map[string]any) {})
			var pretty bytes.Buffer
			_ = json.Indent(&pretty, reencoded, "", "   ")
			if err := v.Verify(t.Context(), pretty.Bytes()); err != nil {
				t.Errorf("%s/%s: Verify(re-encoded) = %v", k.name, name, err)
			}
			tampers := map[string]func(m map[string]any){
				"name": func(m map[string]any) { m["name"] = "evil" },
				"url": func(m map[string]any) {
					m["supportedInterfaces"].([]any)[0].(map[string]any)["url"] = "https://evil.example/a2a"
				},
				"added":                 func(m map[string]any) { m["iconUrl"] = "https://evil.example/i.png" },
				"removed":               func(m map[string]any) { delete(m, "skills") },
				"capability":            func(m map[string]any) { m["capabilities"].(map[string]any)["pushNotifications"] = true },
				"number":                func(m map[string]any) { m["x-numbers"].(map[string]any)["int"] = 43 },
				"list order":            func(m map[string]any) { m["defaultInputModes"] = []any{"application/json", "text/plain"} },
				"whitespace in a value": func(m map[string]any) { m["version"] = "1.2.3 " },
			}
			for tn, f := range tampers {
				err := v.Verify(t.Context(), edit(t, signed, f))
				if !errors.Is(err, cardsig.ErrMismatch) || !errors.Is(err, cardsig.ErrRefused) ||
					!strings.Contains(err.Error(), "changed after it was signed") {
					t.Errorf("%s/%s: tampered %s: Verify = %v; want ErrMismatch", k.name, name, tn, err)
				}
			}
		}
	}
}

// The refusals other than a mismatch, each with its reason.
func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	es256, es384, other := newKey(t, "ES256"), newKey(t, "ES384"), newKey(t, "ES256")
	trust := verifier(t, cardsig.VerifyOptions{Require: true, Keys: []string{es256.pubPEM, es384.pubPEM}})
	signed := sign(t, es256, sampleCard, nil)
	kid := thumbprint(t, es256.priv.Public())

	// withProtected replaces the first signature's protected header and
	// re-signs with key (a real signature over a header that lies).
	withHeader := func(hdr string, sigBytes func(input []byte) []byte) []byte {
		m := decode(t, signed)
		delete(m, "signatures")
		payload := signedForm(t, m)
		prot := base64.RawURLEncoding.EncodeToString([]byte(hdr))
		input := []byte(prot + "." + base64.RawURLEncoding.EncodeToString(payload))
		m["signatures"] = []any{map[string]any{"protected": prot, "signature": base64.RawURLEncoding.EncodeToString(sigBytes(input))}}
		b, _ := json.Marshal(m)
		return b
	}
	es256Sig := func(input []byte) []byte {
		d := sha256.Sum256(input)
		r, s, err := ecdsa.Sign(rand.Reader, es256.priv.(*ecdsa.PrivateKey), d[:])
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		s.FillBytes(out[32:])
		return out
	}
	// The alg-confusion attack: HMAC keyed with the public key's PEM.
	hmacSig := func(input []byte) []byte {
		h := hmac.New(sha256.New, []byte(es256.pubPEM))
		h.Write(input)
		return h.Sum(nil)
	}
	unsigned := []byte(sampleCard)
	cases := []struct {
		name string
		card []byte
		want error
		text string
	}{
		{"unsigned", unsigned, cardsig.ErrUnsigned, "carries no signature, and card_verification.require is set"},
		{"empty list", edit(t, signed, func(m map[string]any) { m["signatures"] = []any{} }), cardsig.ErrUnsigned, ""},
		{"unknown kid", sign(t, other, sampleCard, nil), cardsig.ErrUnknownKey, "is not a trusted key"},
		{"configured kid unknown", sign(t, es256, sampleCard, &cardsig.Options{KID: "k1"}), cardsig.ErrUnknownKey, `kid "k1"`},
		{"no kid", withHeader(`{"alg":"ES256"}`, es256Sig), cardsig.ErrUnknownKey, "names no kid"},
		{"alg none", withHeader(`{"alg":"none","kid":"`+kid+`"}`, func([]byte) []byte { return []byte{0} }), cardsig.ErrAlgorithm, `alg "none"`},
		{"alg HS256", withHeader(`{"alg":"HS256","kid":"`+kid+`"}`, hmacSig), cardsig.ErrAlgorithm, `alg "HS256"`},
		{"alg RS256", withHeader(`{"alg":"RS256","kid":"`+kid+`"}`, es256Sig), cardsig.ErrAlgorithm, "accepted: ES256, ES384, EdDSA"},
		{"alg of another key type", withHeader(`{"alg":"ES384","kid":"`+kid+`"}`, es256Sig), cardsig.ErrAlgorithm, "signs with ES256"},
		{"EdDSA on an EC key", withHeader(`{"alg":"EdDSA","kid":"`+kid+`"}`, es256Sig), cardsig.ErrAlgorithm, "does not fit key"},
		{"protected not base64", edit(t, signed, func(m map[string]any) {
			m["signatures"].([]any)[0].(map[string]any)["protected"] = "!!"
		}), cardsig.ErrMalformed, "base64url"},
		{"signature missing", edit(t, signed, func(m map[string]any) {
			delete(m["signatures"].([]any)[0].(map[string]any), "signature")
		}), cardsig.ErrMalformed, "required"},
		{"signatures not a list", edit(t, signed, func(m map[string]any) { m["signatures"] = "x" }), cardsig.ErrMalformed, "list"},
		{"too many", edit(t, signed, func(m map[string]any) {
			s := m["signatures"].([]any)[0]
			m["signatures"] = []any{s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s}
		}), cardsig.ErrMalformed, "at most 16"},
		{"duplicate member", append([]byte(`{"name":"evil",`), signed[1:]...), cardsig.ErrMalformed, "canonicalizable"},
	}
	for _, c := range cases {
		err := trust.Verify(t.Context(), c.card)
		if !errors.Is(err, c.want) || !errors.Is(err, cardsig.ErrRefused) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: Verify = %v; want %v containing %q", c.name, err, c.want, c.text)
		}
	}
	// A good header and a real signature by the trusted key verify: the
	// cases above fail for their header, not for the test's signing.
	if err := trust.Verify(t.Context(), withHeader(`{"alg":"ES256","kid":"`+kid+`"}`, es256Sig)); err != nil {
		t.Errorf("hand-signed card: %v", err)
	}
	// Without require, an unsigned card passes; a signed one must verify.
	lax := verifier(t, cardsig.VerifyOptions{Keys: []string{es256.pubPEM}})
	if err := lax.Verify(t.Context(), unsigned); err != nil {
		t.Errorf("unsigned, not required: %v", err)
	}
	if err := lax.Verify(t.Context(), edit(t, signed, func(m map[string]any) { m["name"] = "x" })); !errors.Is(err, cardsig.ErrMismatch) {
		t.Errorf("tampered, not required: %v", err)
	}
}

// Key rotation: a card with an old signature (by a key no longer trusted)
// and a new one verifies; a refusal of several signatures names each.
func TestVerifySeveralSignatures(t *testing.T) {
	t.Parallel()
	oldKey, newK := newKey(t, "EdDSA"), newKey(t, "ES384")
	a := decode(t, sign(t, oldKey, sampleCard, nil))
	b := decode(t, sign(t, newK, sampleCard, nil))
	a["signatures"] = append(a["signatures"].([]any), b["signatures"].([]any)...)
	both, _ := json.Marshal(a)
	if err := verifier(t, cardsig.VerifyOptions{Keys: []string{newK.pubPEM}}).Verify(t.Context(), both); err != nil {
		t.Errorf("rotated card: %v", err)
	}
	err := verifier(t, cardsig.VerifyOptions{Keys: []string{newKey(t, "ES256").pubPEM}}).Verify(t.Context(), both)
	if !errors.Is(err, cardsig.ErrUnknownKey) || !strings.Contains(err.Error(), "signature 1 of 2") || !strings.Contains(err.Error(), "signature 2 of 2") {
		t.Errorf("no trusted key: %v", err)
	}
}

// A card whose signer signed it as it is — defaults left in — verifies
// too (the second form the verifier tries), and still refuses a change.
func TestVerifyPlainForm(t *testing.T) {
	t.Parallel()
	k := newKey(t, "ES256")
	m := decode(t, []byte(sampleCard))
	payload := independentJCS(t, m) // "extensions":[] and the empty scopes included
	if bytes.Equal(payload, signedForm(t, m)) {
		t.Fatal("the sample card has no default values: the test would not tell the forms apart")
	}
	prot := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"` + thumbprint(t, k.priv.Public()) + `","typ":"JOSE"}`))
	d := sha256.Sum256([]byte(prot + "." + base64.RawURLEncoding.EncodeToString(payload)))
	r, s, _ := ecdsa.Sign(rand.Reader, k.priv.(*ecdsa.PrivateKey), d[:])
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	m["signatures"] = []any{map[string]any{"protected": prot, "signature": base64.RawURLEncoding.EncodeToString(sig)}}
	card, _ := json.Marshal(m)
	v := verifier(t, cardsig.VerifyOptions{Require: true, Keys: []string{k.pubPEM}})
	if err := v.Verify(t.Context(), card); err != nil {
		t.Errorf("plain form: %v", err)
	}
	m["description"] = "changed"
	card, _ = json.Marshal(m)
	if err := v.Verify(t.Context(), card); !errors.Is(err, cardsig.ErrMismatch) {
		t.Errorf("plain form, tampered: %v", err)
	}
}

// A JWKS that cannot be read refuses the card, saying so; with static
// keys as well, those still verify.
func TestVerifyJWKSUnavailable(t *testing.T) {
	t.Parallel()
	k := newKey(t, "EdDSA")
	signed := sign(t, k, sampleCard, nil)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			http.Error(w, "down", http.StatusInternalServerError)
		case "/notjson":
			_, _ = w.Write([]byte("<html>"))
		case "/rsa":
			_, _ = w.Write([]byte(`{"keys":[{"kty":"RSA","n":"sXch","e":"AQAB","kid":"r"}]}`))
		}
	}))
	defer bad.Close()
	for _, p := range []string{"/500", "/notjson", "/rsa"} {
		err := verifier(t, cardsig.VerifyOptions{Require: true, JWKSURL: bad.URL + p}).Verify(t.Context(), signed)
		if !errors.Is(err, cardsig.ErrKeysUnavailable) || !strings.Contains(err.Error(), "jwks_url") {
			t.Errorf("%s: %v", p, err)
		}
	}
	withStatic := verifier(t, cardsig.VerifyOptions{Require: true, JWKSURL: bad.URL + "/500", Keys: []string{k.pubPEM}})
	if err := withStatic.Verify(t.Context(), signed); err != nil {
		t.Errorf("static key with a JWKS down: %v", err)
	}
	if _, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true}); err == nil {
		t.Error("NewVerifier without keys: no error")
	}
	if _, err := cardsig.NewVerifier(cardsig.VerifyOptions{Keys: []string{k.privPEM}}); err == nil || !strings.Contains(err.Error(), "key 1") {
		t.Errorf("NewVerifier(private key as trusted) = %v", err)
	}
}
