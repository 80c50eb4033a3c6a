package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"

	"github.com/wunder/wunder/internal/config"
)

// JWTs of an external identity provider, through the wired server: a
// valid token is its user (user_id may be left out, and another user's run
// is not found), and a token that is expired, for another audience or
// signed by another key is 401.
func TestJWTWired(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	}))
	t.Cleanup(jwks.Close)
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Auth.JWT = config.JWT{Issuer: "https://idp.example", Audience: "wunder", JWKSURL: jwks.URL, UserClaim: "sub"}
	})
	sign := func(k *rsa.PrivateKey, sub, aud string, exp time.Time) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": "https://idp.example", "aud": aud, "sub": sub,
			"exp": exp.Unix(), "iat": time.Now().Add(-time.Minute).Unix()})
		tok.Header["kid"] = "k1"
		raw, err := tok.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	do := func(method, path, bearer, body string) (int, map[string]any) {
		req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	alice := sign(key, "jwt-alice", "wunder", time.Now().Add(time.Hour))
	code, run := do(http.MethodPost, "/wunder", alice, `{"question":"hello","stream":false}`)
	if code != http.StatusOK || run["state"] != "finished" {
		t.Fatalf("POST /wunder with alice's JWT: %d %v", code, run)
	}
	runID, _ := run["run_id"].(string)
	if code, got := do(http.MethodGet, "/wunder/runs/"+runID, alice, ""); code != http.StatusOK || got["user_id"] != "jwt-alice" {
		t.Fatalf("alice reading her run: %d %v", code, got)
	}
	bob := sign(key, "jwt-bob", "wunder", time.Now().Add(time.Hour))
	if code, _ := do(http.MethodGet, "/wunder/runs/"+runID, bob, ""); code != http.StatusNotFound {
		t.Fatalf("bob reading alice's run: %d, want 404", code)
	}
	// The MCP protected-resource metadata names the provider whose tokens
	// are accepted.
	if code, meta := do(http.MethodGet, "/.well-known/oauth-protected-resource/wunder/mcp", "", ""); code != http.StatusOK ||
		!strings.Contains(fmt.Sprint(meta["authorization_servers"]), "https://idp.example") {
		t.Fatalf("protected-resource metadata: %d %v", code, meta)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"expired":        sign(key, "jwt-alice", "wunder", time.Now().Add(-time.Hour)),
		"other audience": sign(key, "jwt-alice", "someone-else", time.Now().Add(time.Hour)),
		"other key":      sign(other, "jwt-alice", "wunder", time.Now().Add(time.Hour)),
		"bad user id":    sign(key, "a/b", "wunder", time.Now().Add(time.Hour)),
		"not a jwt":      "eyJ.garbage.here",
	} {
		if code, _ := do(http.MethodGet, "/wunder/runs/"+runID, raw, ""); code != http.StatusUnauthorized {
			t.Errorf("%s token: %d, want 401", name, code)
		}
	}
}
