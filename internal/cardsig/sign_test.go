package cardsig_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/cardsig"
)

// Every key type, from PEM text and from a file: the signed card carries
// one signature whose protected header names alg, kid (the RFC 7638
// thumbprint, computed here by hand), typ JOSE and jku, and which the
// standard library verifies over an independent JCS of the card.
func TestSignEveryKeyType(t *testing.T) {
	t.Parallel()
	for _, k := range allKeys(t) {
		for _, spec := range []string{k.privPEM, writeFile(t, k.name+".pem", k.privPEM)} {
			s, err := cardsig.NewSigner(spec, &cardsig.Options{JKU: "https://agent.example/.well-known/jwks.json"})
			if err != nil {
				t.Fatalf("%s: %v", k.name, err)
			}
			signed, err := s.Sign([]byte(sampleCard))
			if err != nil {
				t.Fatalf("%s: Sign: %v", k.name, err)
			}
			hdrs := independentVerify(t, signed, k.priv.Public())
			want := map[string]any{"alg": k.alg, "kid": thumbprint(t, k.priv.Public()), "typ": "JOSE", "jku": "https://agent.example/.well-known/jwks.json"}
			if len(hdrs) != 1 || !equalJSON(hdrs[0], want) {
				t.Errorf("%s: protected header %v; want %v", k.name, hdrs, want)
			}
			if s.KID() != want["kid"] || s.Alg() != k.alg {
				t.Errorf("%s: KID %q Alg %q", k.name, s.KID(), s.Alg())
			}
			// The rest of the card is served as built, byte for byte.
			if !bytes.HasPrefix(signed, []byte(sampleCard[:len(sampleCard)-1])) {
				t.Errorf("%s: the card's own bytes changed:\n%s", k.name, signed)
			}
		}
	}
}

// thumbprint is RFC 7638 by hand: SHA-256 of the required members in
// lexicographic order, without whitespace.
func thumbprint(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	var members string
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		n := (k.Curve.Params().BitSize + 7) / 8
		point, err := k.Bytes() // 0x04 || X || Y
		if err != nil || len(point) != 1+2*n {
			t.Fatalf("EC point: %v", err)
		}
		x, y := point[1:1+n], point[1+n:]
		members = `{"crv":"` + k.Curve.Params().Name + `","kty":"EC","x":"` + b64(x) + `","y":"` + b64(y) + `"}`
	case ed25519.PublicKey:
		members = `{"crv":"Ed25519","kty":"OKP","x":"` + b64(k) + `"}`
	}
	sum := sha256.Sum256([]byte(members))
	return b64(sum[:])
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// A configured kid replaces the thumbprint; SEC 1 EC keys load too; a
// card that already has signatures (a peer's, re-served) gets wunder's
// instead; the same card signs to the same bytes (its ETag holds
// although ECDSA is randomised).
func TestSignKIDReplaceAndMemo(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalECPrivateKey(ec)
	s, err := cardsig.NewSigner(string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), &cardsig.Options{KID: "card-2026"})
	if err != nil {
		t.Fatal(err)
	}
	peer := `{"name":"peer","signatures":[{"protected":"eyJhbGciOiJub25lIn0","signature":"AA"}],"skills":[]}`
	signed, err := s.Sign([]byte(peer))
	if err != nil {
		t.Fatal(err)
	}
	hdrs := independentVerify(t, signed, ec.Public())
	if len(hdrs) != 1 || hdrs[0]["kid"] != "card-2026" || hdrs[0]["jku"] != nil {
		t.Errorf("headers %v; want one, kid card-2026, no jku", hdrs)
	}
	again, _ := s.Sign([]byte(peer))
	if !bytes.Equal(signed, again) {
		t.Error("signing the same card twice gave different bytes")
	}
	for _, empty := range []string{`{}`, " { } \n"} {
		out, err := s.Sign([]byte(empty))
		if err != nil || !json.Valid(out) || !bytes.HasPrefix(bytes.TrimSpace(out), []byte(`{ "signatures":[`)) && !bytes.HasPrefix(out, []byte(`{"signatures":[`)) {
			t.Errorf("Sign(%q) = %s, %v", empty, out, err)
		}
	}
}

// A bad key is refused with a reason naming what is wrong.
func TestSignerKeyErrors(t *testing.T) {
	t.Parallel()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	p521, _ := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	p521DER, _ := x509.MarshalPKCS8PrivateKey(p521)
	es := newKey(t, "ES256")
	cases := []struct{ spec, want string }{
		{"", "empty"},
		{"/nonexistent/card.pem", "not a readable file"},
		{writeFile(t, "junk.pem", "not a key"), "no PEM block"},
		{string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER})), "RSA keys are not supported"},
		{string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p521DER})), "curve P-521 is not supported"},
		{es.pubPEM, `"PUBLIC KEY" is not a supported private key`},
		{string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("garbage")})), "PRIVATE KEY:"},
		{writeFile(t, "big.pem", strings.Repeat("x", 70<<10)), "larger than"},
	}
	for _, c := range cases {
		_, err := cardsig.NewSigner(c.spec, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSigner(%.40q) = %v; want an error containing %q", c.spec, err, c.want)
		}
		if _, err2 := cardsig.CheckSigningKey(c.spec); (err2 == nil) != (err == nil) {
			t.Errorf("CheckSigningKey(%.40q) = %v, NewSigner %v", c.spec, err2, err)
		}
	}
	if _, err := cardsig.CheckPublicKey(es.privPEM); err == nil || !strings.Contains(err.Error(), "is not a public key") {
		t.Errorf("CheckPublicKey(private) = %v", err)
	}
}

// The JWKS is served with its key (kid, alg, use sig, no private part),
// Cache-Control and an ETag that answers 304.
func TestJWKSHandler(t *testing.T) {
	t.Parallel()
	for _, k := range allKeys(t) {
		s, err := cardsig.NewSigner(k.privPEM, nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s.JWKSHandler())
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Keys []map[string]any `json:"keys"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwk-set+json" ||
			resp.Header.Get("Cache-Control") != "public, max-age=3600" || resp.Header.Get("ETag") == "" {
			t.Errorf("%s: %d %v", k.name, resp.StatusCode, resp.Header)
		}
		if len(doc.Keys) != 1 || doc.Keys[0]["kid"] != s.KID() || doc.Keys[0]["alg"] != k.alg || doc.Keys[0]["use"] != "sig" || doc.Keys[0]["d"] != nil {
			t.Errorf("%s: keys %v", k.name, doc.Keys)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		resp2, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if resp2.StatusCode != http.StatusNotModified {
			t.Errorf("%s: conditional GET = %d; want 304", k.name, resp2.StatusCode)
		}
		resp3, _ := http.Post(srv.URL, "application/json", nil)
		resp3.Body.Close()
		if resp3.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: POST = %d; want 405", k.name, resp3.StatusCode)
		}
		srv.Close()
	}
}
