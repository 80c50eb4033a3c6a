package agentcard_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/orchestrator"
)

// Options.Sign signs the public and the extended card; the signed card
// keeps its ETag (conditional GETs answer 304) across requests; a signer
// that fails makes the card unavailable rather than served unsigned.
func TestSignHook(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(priv)
	pubDER, _ := x509.MarshalPKIXPublicKey(pub)
	signer, err := cardsig.NewSigner(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: []string{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))}})
	if err != nil {
		t.Fatal(err)
	}
	cat := &perUser{tools: map[string][]orchestrator.ToolSpec{"a2a": {{Name: "read_file", Description: "reads"}}, "alice": {{Name: "write_file", Description: "writes"}}}}
	h := agentcard.New(cat, &agentcard.Options{Sign: signer.Sign, APIKeyRequired: true})

	first := get(t, h, http.MethodGet, agentcard.Path)
	if first.Code != 200 {
		t.Fatalf("GET: %d", first.Code)
	}
	if err := v.Verify(t.Context(), first.Body.Bytes()); err != nil {
		t.Fatalf("served card: %v\n%s", err, first.Body)
	}
	etag := first.Header().Get("ETag")
	if again := get(t, h, http.MethodGet, agentcard.Path); again.Header().Get("ETag") != etag || again.Body.String() != first.Body.String() {
		t.Error("the signed card changed between two requests")
	}
	if nm := get(t, h, http.MethodGet, agentcard.Path, "If-None-Match", etag); nm.Code != http.StatusNotModified {
		t.Errorf("conditional GET = %d; want 304", nm.Code)
	}
	for _, version := range []a2awire.Version{agentcard.Unversioned, a2awire.V10, a2awire.V03} {
		ext, err := h.Extended(httptest.NewRequest(http.MethodPost, "/a2a", nil), "alice", version)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(t.Context(), ext); err != nil || !slices.Contains(skillIDs(t, ext), "write_file") {
			t.Errorf("extended card %q: %v\n%s", version, err, ext)
		}
		if version == agentcard.Unversioned {
			continue
		}
		served := get(t, h, http.MethodGet, agentcard.Path, "A2A-Version", string(version))
		if err := v.Verify(t.Context(), served.Body.Bytes()); err != nil {
			t.Errorf("served %s card: %v\n%s", version, err, served.Body)
		}
	}

	failing := agentcard.New(cat, &agentcard.Options{Sign: func([]byte) ([]byte, error) { return nil, errors.New("no key") }})
	if w := get(t, failing, http.MethodGet, agentcard.Path); w.Code != http.StatusServiceUnavailable {
		t.Errorf("failing signer: %d %s; want 503", w.Code, w.Body)
	}
}
