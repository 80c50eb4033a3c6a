package a2atools_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/a2atools"
	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/cardsig"
)

// keyPEMs returns a new key as PKCS #8 and public PEM text.
func keyPEMs(t *testing.T, ed bool) (priv, pub string) {
	t.Helper()
	var k any
	var p any
	if ed {
		pk, sk, _ := ed25519.GenerateKey(rand.Reader)
		k, p = sk, pk
	} else {
		sk, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		k, p = sk, sk.Public()
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(p)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
}

// signedPeer is a wunder peer whose card (at url) is signed by its key,
// with the JWKS at url+cardsig.JWKSPath; tampered serves the same signed
// card with its description changed.
type signedPeer struct {
	url, tampered, pub string
}

func startSignedWunder(t *testing.T) signedPeer {
	peer := startWunder(t, nil)
	priv, pub := keyPEMs(t, false)
	signer, err := cardsig.NewSigner(priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	card := agentcard.New(peer.o, &agentcard.Options{PublicURL: peer.url, Sign: signer.Sign})
	mux := http.NewServeMux()
	mux.Handle(agentcard.Path, card)
	mux.Handle(cardsig.JWKSPath, signer.JWKSHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		card.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, agentcard.Path, nil))
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Error(err)
		}
		m["description"] = "a friendlier agent" // signatures kept as they were
		_ = json.NewEncoder(w).Encode(m)
	}))
	t.Cleanup(evil.Close)
	return signedPeer{url: srv.URL, tampered: evil.URL, pub: pub}
}

// A peer's signed card is verified with a trusted PEM key or the peer's
// JWKS before the peer is called; the JWKS is read through the SSRF guard,
// so a loopback JWKS is refused unless allow_private is set.
func TestCallVerifiesSignedCard(t *testing.T) {
	p := startSignedWunder(t)
	s := newSet(t,
		a2atools.Service{Name: "bykey", URL: p.url, Card: a2atools.CardCheck{Require: true, Keys: []string{p.pub}}},
		a2atools.Service{Name: "byjwks", URL: p.url, Card: a2atools.CardCheck{Require: true, JWKSURL: p.url + cardsig.JWKSPath, AllowPrivate: true}},
		a2atools.Service{Name: "guarded", URL: p.url, Card: a2atools.CardCheck{Require: true, JWKSURL: p.url + cardsig.JWKSPath}},
	)
	for _, name := range []string{"a2a@bykey", "a2a@byjwks"} {
		rec := &recorder{}
		res, err := toolNamed(t, s, name).Call(t.Context(), invocation(`{"message":"signed hello"}`, rec, nil))
		if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: signed hello") {
			t.Fatalf("%s: %+v %v (events %v)", name, res, err, rec.evs)
		}
	}
	rec := &recorder{}
	res, err := toolNamed(t, s, "a2a@guarded").Call(t.Context(), invocation(`{"message":"hi"}`, rec, nil))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "trusted keys unavailable") ||
		!strings.Contains(res.Content, "private, loopback or link-local") {
		t.Fatalf("guarded JWKS on loopback: %+v %v", res, err)
	}
	if slices.Contains(rec.types(), "a2a_request") {
		t.Error("a peer whose card was refused was sent the message")
	}
}

// A card changed after signing, an unsigned card when a signature is
// required, and a card signed by a key not trusted are refused, each with
// its reason, before any message is sent; the refusal is not cached.
func TestCallRefusesUntrustedCard(t *testing.T) {
	p := startSignedWunder(t)
	_, otherPub := keyPEMs(t, true)
	unsigned := startWunder(t, nil)
	s := newSet(t,
		a2atools.Service{Name: "tampered", URL: p.tampered, Card: a2atools.CardCheck{Keys: []string{p.pub}}},
		a2atools.Service{Name: "unsigned", URL: unsigned.url, Card: a2atools.CardCheck{Require: true, Keys: []string{p.pub}}},
		a2atools.Service{Name: "otherkey", URL: p.url, Card: a2atools.CardCheck{Require: true, Keys: []string{otherPub}}},
	)
	for name, want := range map[string]string{
		"a2a@tampered": "signature does not match the card",
		"a2a@unsigned": "the card carries no signature, and card_verification.require is set",
		"a2a@otherkey": "is not a trusted key",
	} {
		for range 2 { // refused again: a refused card is not kept
			rec := &recorder{}
			res, err := toolNamed(t, s, name).Call(t.Context(), invocation(`{"message":"hi"}`, rec, nil))
			if err != nil || !res.IsError || !strings.Contains(res.Content, "not trusted: agent card refused") || !strings.Contains(res.Content, want) {
				t.Fatalf("%s: %+v %v; want a refusal containing %q", name, res, err, want)
			}
			if slices.Contains(rec.types(), "a2a_request") {
				t.Fatalf("%s: the message was sent to an untrusted peer", name)
			}
		}
	}
	// Without require, an unsigned card is used.
	lax := newSet(t, a2atools.Service{Name: "lax", URL: unsigned.url, Card: a2atools.CardCheck{Keys: []string{p.pub}}})
	if res, err := toolNamed(t, lax, "a2a@lax").Call(t.Context(), invocation(`{"message":"hi"}`, &recorder{}, nil)); err != nil || res.IsError {
		t.Fatalf("unsigned, not required: %+v %v", res, err)
	}
}

// Verification needs the card; a bad trusted key fails New.
func TestCardCheckConfigErrors(t *testing.T) {
	for _, svc := range []a2atools.Service{
		{Name: "pinned", URL: "http://p/a2a", Version: "1.0", Card: a2atools.CardCheck{Require: true, Keys: []string{"x"}}},
		{Name: "nokeys", URL: "http://p", Card: a2atools.CardCheck{Require: true}},
		{Name: "badkey", URL: "http://p", Card: a2atools.CardCheck{Keys: []string{"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"}}},
	} {
		if _, err := a2atools.New([]a2atools.Service{svc}, nil); err == nil || !strings.Contains(err.Error(), svc.Name) {
			t.Errorf("New(%s) = %v; want an error naming it", svc.Name, err)
		}
	}
}
