package cardsig_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wunder/wunder/internal/cardsig"
)

// FuzzVerify feeds the verifier cards it did not sign: it must not panic
// and must refuse everything but a card carrying the key's signature;
// Payload and Canonical must not panic either.
func FuzzVerify(f *testing.F) {
	k := newKey(f, "ES256")
	s, err := cardsig.NewSigner(k.privPEM, nil)
	if err != nil {
		f.Fatal(err)
	}
	signed, err := s.Sign([]byte(sampleCard))
	if err != nil {
		f.Fatal(err)
	}
	v, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: []string{k.pubPEM}})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{string(signed), sampleCard, `{}`, `{"signatures":null}`, `{"signatures":[{"protected":"e30","signature":""}]}`, `[`, "\x00"} {
		f.Add([]byte(seed))
	}
	sig := signed[bytes.Index(signed, []byte(`"signatures"`)):]
	f.Fuzz(func(t *testing.T, card []byte) {
		_, _ = cardsig.Payload(card)
		_, _ = cardsig.Canonical(card)
		err := v.Verify(t.Context(), card)
		if err == nil && !bytes.Contains(card, sig[:40]) {
			t.Fatalf("verified a card without the key's signature: %q", card)
		}
		if err != nil && !errors.Is(err, cardsig.ErrRefused) {
			t.Fatalf("a refusal that does not wrap ErrRefused: %v", err)
		}
	})
}
