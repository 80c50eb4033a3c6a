package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/npmpeers"
)

// cardKey is a new key of alg as PKCS #8 and public PEM text.
func cardKey(t *testing.T, alg string) (priv, pub string) {
	t.Helper()
	var k crypto.Signer
	var err error
	switch alg {
	case "ES256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		k, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	default:
		_, k, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
}

// verifyCardJS runs testdata/a2a-js/verify_card.mjs (independent JCS/JWS
// in node, or the @a2a-js/sdk verifier) and fails the test on its failure.
func verifyCardJS(t *testing.T, cardURL, jwksURL, mode string) {
	t.Helper()
	npmpeers.Require(t, "node", "@a2a-js/sdk peers")
	dir := npmpeers.Dir(t, "a2a-js", "@a2a-js/sdk peers", "@a2a-js/sdk/package.json")
	out, err := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "verify_card.mjs"), cardURL, jwksURL, mode).CombinedOutput()
	t.Logf("node verify_card.mjs %s:\n%s", mode, out)
	if err != nil {
		t.Fatalf("verify_card.mjs %s: %v", mode, err)
	}
}

// With a2a.server.card_signing_key, for every key type, through the real
// wiring (API key set): the card and the JWKS are public; the a2a-go v2
// client resolves the signed card, reads its signature and still sends a
// task; the authenticated extended card is signed too; the signature
// verifies in node with a JCS and JWS written there, and a changed card
// does not; wunder's own verifier accepts it from the served JWKS.
func TestSignedCardThroughRealServer(t *testing.T) {
	for _, alg := range []string{"ES256", "ES384", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			priv, pub := cardKey(t, alg)
			s := startServer(t, func(c *config.Config) {
				c.Security.APIKey = "card-key"
				c.A2A.Server.CardSigningKey = priv
			})
			jwksURL, cardURL := s.url+cardsig.JWKSPath, s.url+w.WellKnownCardPath
			resp, err := http.Get(jwksURL)
			if err != nil {
				t.Fatal(err)
			}
			var jwks struct {
				Keys []struct{ Kid, Alg, Kty string }
			}
			_ = json.NewDecoder(resp.Body).Decode(&jwks)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=") ||
				len(jwks.Keys) != 1 || jwks.Keys[0].Alg != alg {
				t.Fatalf("JWKS without credentials: %d %v %+v", resp.StatusCode, resp.Header, jwks)
			}

			card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
			if err != nil {
				t.Fatal(err)
			}
			if len(card.Signatures) != 1 || card.Signatures[0].Signature == "" {
				t.Fatalf("a2a-go read signatures %+v", card.Signatures)
			}
			var hdr struct{ Alg, Kid, Typ string }
			raw, _ := base64.RawURLEncoding.DecodeString(card.Signatures[0].Protected)
			if err := json.Unmarshal(raw, &hdr); err != nil || hdr.Alg != alg || hdr.Kid != jwks.Keys[0].Kid || hdr.Typ != "JOSE" {
				t.Fatalf("protected header %s (%v); want alg %s, the JWKS kid, typ JOSE", raw, err, alg)
			}
			c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: keyTransport{"card-key"}}))
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello"))})
			if err != nil || res.(*sdk.Task).Status.State != sdk.TaskStateCompleted {
				t.Fatalf("send through the signed card: %v %v", res, err)
			}

			byKey, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: []string{pub}})
			if err != nil {
				t.Fatal(err)
			}
			f := &fixture{s: s}
			ext, code := f.a2a(t, "1.0", "GetExtendedAgentCard", `{}`, map[string]string{"X-API-Key": "card-key"})
			if code != 0 || !strings.Contains(string(ext), `"signatures"`) {
				t.Fatalf("extended card: %d %s", code, ext)
			}
			if err := byKey.Verify(t.Context(), ext); err != nil {
				t.Errorf("extended card: %v", err)
			}
			resp, err = http.Get(cardURL)
			if err != nil {
				t.Fatal(err)
			}
			var served json.RawMessage
			_ = json.NewDecoder(resp.Body).Decode(&served)
			resp.Body.Close()
			byJWKS, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, JWKSURL: jwksURL})
			if err != nil {
				t.Fatal(err)
			}
			if err := byJWKS.Verify(t.Context(), served); err != nil {
				t.Errorf("served card, keys from the JWKS: %v", err)
			}

			verifyCardJS(t, cardURL, jwksURL, "independent")
			// The @a2a-js verifier reads the card through the 1.0 schema:
			// it agrees once the card served to 1.0 clients carries 1.0
			// fields only (issue 38, cards per version).
			var top map[string]json.RawMessage
			_ = json.Unmarshal(served, &top)
			if _, union := top["protocolVersion"]; union {
				t.Log("the card carries 0.3 fields outside the 1.0 schema: the @a2a-js verifier is run on a 1.0 card in TestSDKVerifiesSignedCard instead")
			} else {
				verifyCardJS(t, cardURL, jwksURL, "sdk")
			}
		})
	}
}

// The @a2a-js/sdk 1.3.0 verifier (verifyAgentCardSignature) accepts a 1.0
// card signed by cardsig, for every key type, and refuses it changed.
func TestSDKVerifiesSignedCard(t *testing.T) {
	for _, alg := range []string{"ES256", "ES384", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			priv, _ := cardKey(t, alg)
			signer, err := cardsig.NewSigner(priv, nil)
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			defer srv.Close()
			card := &sdk.AgentCard{Name: "signed", Description: "a 1.0 card", Version: "1.0.0",
				SupportedInterfaces: []*sdk.AgentInterface{sdk.NewAgentInterface(srv.URL+"/a2a", sdk.TransportProtocolJSONRPC)},
				Capabilities:        sdk.AgentCapabilities{Streaming: true},
				DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain", "application/json"},
				Skills: []sdk.AgentSkill{{ID: "answer", Name: "answer", Description: "answers", Tags: []string{"general"}}}}
			body, err := json.Marshal(card)
			if err != nil {
				t.Fatal(err)
			}
			// wunder's security members, as its 1.0 card carries them (the
			// empty scope list is a default value both sides leave out).
			body = append(body[:len(body)-1], `,"securitySchemes":{"apiKey":{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key"}}},`+
				`"securityRequirements":[{"schemes":{"apiKey":[]}}]}`...)
			signed, err := signer.Sign(body)
			if err != nil {
				t.Fatal(err)
			}
			mux.HandleFunc(w.WellKnownCardPath, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(signed)
			})
			mux.Handle(cardsig.JWKSPath, signer.JWKSHandler())
			verifyCardJS(t, srv.URL+w.WellKnownCardPath, srv.URL+cardsig.JWKSPath, "sdk")
			verifyCardJS(t, srv.URL+w.WellKnownCardPath, srv.URL+cardsig.JWKSPath, "independent")
		})
	}
}

// Two real wunders: A signs its card. B trusts A's JWKS and delegates to
// it; C trusts another key and refuses A's card — the run gets an
// a2a_result error naming why, and A is never sent the message.
func TestSignedCardBetweenTwoWunders(t *testing.T) {
	priv, _ := cardKey(t, "ES256")
	_, otherPub := cardKey(t, "EdDSA")
	a := startServer(t, func(c *config.Config) { c.A2A.Server.CardSigningKey = priv })
	service := func(cv config.A2ACardVerification) func(c *config.Config) {
		return func(c *config.Config) {
			c.A2A.Services = []config.A2AService{{Name: "A", Endpoint: a.url, Enabled: true, MaxDepth: 3, CardVerification: cv}}
		}
	}
	b := startServer(t, service(config.A2ACardVerification{Require: true, JWKSURL: a.url + cardsig.JWKSPath, AllowPrivate: true}))
	c := startServer(t, service(config.A2ACardVerification{Require: true, Keys: []string{otherPub}}))

	evs := askAll(t, client.New(b.url, "", nil), client.RunRequest{UserID: "u", Question: callQuestion(t, "a2a__A", "hello signed A"), ToolNames: []string{"a2a@A"}})
	res := a2aResults(t, evs)
	if len(res) != 1 || res[0]["error"] != nil || !strings.Contains(res[0]["answer"].(string), "hello signed A") {
		t.Fatalf("B through A's verified card: %v (events %v)", res, eventTypes(evs))
	}
	evs = askAll(t, client.New(c.url, "", nil), client.RunRequest{UserID: "u", Question: callQuestion(t, "a2a__A", "hello"), ToolNames: []string{"a2a@A"}})
	res = a2aResults(t, evs)
	if len(res) != 1 || !strings.Contains(res[0]["error"].(string), "agent card refused: unknown key") {
		t.Fatalf("C with another key: %v", res)
	}
	for _, typ := range eventTypes(evs) {
		if typ == "a2a_request" {
			t.Fatal("C sent the message to a peer whose card it refused")
		}
	}
}
