package config_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pemFile writes a PEM block to a temporary file and returns its path.
func pemFile(t *testing.T, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Card signing and verification keys are loaded when the configuration
// is: a key that cannot sign or verify fails with the key's path and why.
func TestCardKeysValidated(t *testing.T) {
	t.Parallel()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	pubDER, _ := x509.MarshalPKIXPublicKey(ec.Public())
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	edDER, _ := x509.MarshalPKCS8PrivateKey(ed)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaDER, _ := x509.MarshalPKCS8PrivateKey(rsaKey)
	good, edKey, pub := pemFile(t, "PRIVATE KEY", ecDER), pemFile(t, "PRIVATE KEY", edDER), pemFile(t, "PUBLIC KEY", pubDER)
	rsaFile := pemFile(t, "PRIVATE KEY", rsaDER)
	inline := strings.ReplaceAll(string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})), "\n", "\n            ")

	for _, ok := range []string{
		"a2a:\n  server:\n    card_signing_key: " + good + "\n",
		"a2a:\n  server:\n    card_signing_key: " + edKey + "\n    card_signing_kid: k1\n",
		"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification:\n        require: true\n        keys:\n          - |\n            " + inline + "\n",
		"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification: {keys: [" + pub + "]}\n",
		"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification: {require: true, jwks_url: https://p/.well-known/jwks.json}\n",
	} {
		if _, err := load(t, files{basePath: ok}, nil); err != nil {
			t.Errorf("Load(%s) = %v", ok, err)
		}
	}
	cases := []struct{ yaml, want string }{
		{"a2a:\n  server:\n    card_signing_key: " + rsaFile + "\n", "a2a.server.card_signing_key: RSA keys are not supported"},
		{"a2a:\n  server:\n    card_signing_key: /nonexistent.pem\n", "a2a.server.card_signing_key: not PEM text, and not a readable file"},
		{"a2a:\n  server:\n    card_signing_key: " + pub + "\n", `a2a.server.card_signing_key: PEM block "PUBLIC KEY" is not a supported private key`},
		{"a2a:\n  server:\n    card_signing_kid: k1\n", "a2a.server.card_signing_kid: is set but a2a.server.card_signing_key is not"},
		{"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification: {require: true}\n",
			"a2a.services[0].card_verification: has no trusted keys: give keys or jwks_url"},
		{"a2a:\n  services:\n    - name: p\n      endpoint: http://p/a2a\n      version: \"1.0\"\n      card_verification: {keys: [" + pub + "]}\n",
			`a2a.services[0].card_verification: needs the peer's card, but version "1.0" skips it`},
		{"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification: {keys: [" + good + "]}\n",
			`a2a.services[0].card_verification.keys[0]: PEM block "PRIVATE KEY" is not a public key`},
		{"a2a:\n  services:\n    - name: p\n      endpoint: http://p\n      card_verification: {jwks_url: ftp://p/jwks}\n",
			"a2a.services[0].card_verification.jwks_url: must be an absolute http:// or https:// URL"},
	}
	for _, c := range cases {
		if got := loadErr(t, c.yaml); !strings.Contains(got, c.want) {
			t.Errorf("Load error =\n%s\nwant it to contain\n%s", got, c.want)
		}
	}
}
