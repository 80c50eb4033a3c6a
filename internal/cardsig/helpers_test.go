package cardsig_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"unicode/utf16"
)

// testKey is a key of each supported type, its PEM forms and what the
// signature must say.
type testKey struct {
	name    string
	alg     string
	priv    crypto.Signer
	privPEM string // PKCS #8
	pubPEM  string
}

func newKey(t testing.TB, alg string) testKey {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "EdDSA":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return testKey{name: alg, alg: alg, priv: priv,
		privPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		pubPEM:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))}
}

func allKeys(t *testing.T) []testKey {
	return []testKey{newKey(t, "ES256"), newKey(t, "ES384"), newKey(t, "EdDSA")}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A card with what canonicalization must get right: non-ASCII text,
// characters JSON escapes, HTML-looking text, numbers, nesting, empty
// lists and false values.
const sampleCard = `{"name":"wunder <test> & co","description":"Grüße, 世界 — \"quoted\"\n\ttab",
 "version":"1.2.3","supportedInterfaces":[{"url":"http://127.0.0.1:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
 "capabilities":{"streaming":true,"pushNotifications":false,"extensions":[]},
 "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
 "skills":[{"id":"answer","name":"answer","description":"answers","tags":["general"]}],
 "x-numbers":{"int":42,"neg":-7,"big":1e21,"frac":0.5,"small":2e-7},
 "securityRequirements":[{"schemes":{"apiKey":[]}}],
 "zeta":"last","Alpha":"upper","ünïcode":"key"}`

// independentJCS canonicalizes the JSON value v (decoded with UseNumber)
// without the library under test: keys sorted by UTF-16 code units,
// strings escaped as RFC 8785 section 3.2.2.2 says, numbers in the ES6
// form (encoding/json formats float64 as ES6 does).
func independentJCS(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case json.Number:
			f, err := x.Float64()
			if err != nil || math.IsInf(f, 0) {
				t.Fatalf("number %s", x)
			}
			if f == 0 {
				f = 0 // -0 is 0
			}
			out, _ := json.Marshal(f)
			b.Write(out)
		case string:
			b.WriteString(jcsString(x))
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				walk(e)
			}
			b.WriteByte(']')
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.SortFunc(keys, func(a, b string) int {
				return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
			})
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jcsString(k))
				b.WriteByte(':')
				walk(x[k])
			}
			b.WriteByte('}')
		default:
			t.Fatalf("unexpected %T", v)
		}
	}
	walk(v)
	return b.Bytes()
}

func jcsString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

// withoutDefaults removes what A2A 1.0 section 8.4.1 calls default
// values the way the reference SDKs do (null, "", [], {}; recursively, a
// container emptied by it going too), written apart from the library's.
func withoutDefaults(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return x
	case []any:
		var out []any
		for _, e := range x {
			if c := withoutDefaults(e); c != nil {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if c := withoutDefaults(e); c != nil {
				out[k] = c
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// signedForm is the payload a card's signature covers, computed
// independently: JCS of the card less signatures, defaults removed.
func signedForm(t *testing.T, m map[string]any) []byte {
	t.Helper()
	c := withoutDefaults(m)
	if c == nil {
		c = map[string]any{}
	}
	return independentJCS(t, c)
}

// independentVerify checks every signature of a signed card by hand, with
// the standard library alone: base64url(protected) "." base64url(JCS(card
// less signatures, defaults removed)), then ECDSA over SHA-256/384 (r||s)
// or Ed25519. It returns the protected headers.
func independentVerify(t *testing.T, signed []byte, pub crypto.PublicKey) []map[string]any {
	t.Helper()
	m := decode(t, signed)
	sigs, ok := m["signatures"].([]any)
	if !ok || len(sigs) == 0 {
		t.Fatalf("no signatures in %s", signed)
	}
	delete(m, "signatures")
	payload := signedForm(t, m)
	var headers []map[string]any
	for _, s := range sigs {
		entry := s.(map[string]any)
		prot, _ := entry["protected"].(string)
		sigB64, _ := entry["signature"].(string)
		hdrJSON, err := base64.RawURLEncoding.DecodeString(prot)
		if err != nil {
			t.Fatalf("protected %q: %v", prot, err)
		}
		var hdr map[string]any
		if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
			t.Fatal(err)
		}
		headers = append(headers, hdr)
		sig, err := base64.RawURLEncoding.DecodeString(sigB64)
		if err != nil {
			t.Fatalf("signature %q: %v", sigB64, err)
		}
		input := []byte(prot + "." + base64.RawURLEncoding.EncodeToString(payload))
		var good bool
		switch k := pub.(type) {
		case *ecdsa.PublicKey:
			n := (k.Curve.Params().BitSize + 7) / 8
			if len(sig) != 2*n {
				t.Fatalf("ECDSA signature of %d bytes, want %d (r||s)", len(sig), 2*n)
			}
			r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
			var digest []byte
			if n == 32 {
				d := sha256.Sum256(input)
				digest = d[:]
			} else {
				d := sha512.Sum384(input)
				digest = d[:]
			}
			good = ecdsa.Verify(k, digest, r, s)
		case ed25519.PublicKey:
			good = ed25519.Verify(k, input, sig)
		}
		if !good {
			t.Fatalf("signature does not verify by hand over %s", payload)
		}
	}
	return headers
}
