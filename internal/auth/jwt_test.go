package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

const (
	testIss = "https://idp.test"
	testAud = "wunder"
)

var (
	rsaKey  = sync.OnceValue(func() *rsa.PrivateKey { return must(rsa.GenerateKey(rand.Reader, 2048)) })
	rsaKey2 = sync.OnceValue(func() *rsa.PrivateKey { return must(rsa.GenerateKey(rand.Reader, 2048)) })
	ecKey   = sync.OnceValue(func() *ecdsa.PrivateKey { return must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)) })
	edKey   = sync.OnceValue(func() ed25519.PrivateKey { _, k, err := ed25519.GenerateKey(rand.Reader); return must(k, err) })
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// idp is an identity provider's JWKS endpoint on loopback TLS.
type idp struct {
	srv     *httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	body    []byte // the JWKS served; nil answers 500
}

func newIDP(t testing.TB, keys ...jose.JSONWebKey) *idp {
	p := &idp{}
	p.serve(t, keys...)
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.body == nil {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(p.body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// serve replaces the key set; no keys makes the endpoint fail.
func (p *idp) serve(t testing.TB, keys ...jose.JSONWebKey) {
	t.Helper()
	var body []byte
	if keys != nil {
		body = must(json.Marshal(jose.JSONWebKeySet{Keys: keys}))
	}
	p.mu.Lock()
	p.body = body
	p.mu.Unlock()
}

func (p *idp) opts() JWTOptions {
	return JWTOptions{Issuer: testIss, Audience: testAud, JWKSURL: p.srv.URL + "/jwks", HTTPClient: p.srv.Client()}
}

func pub(kid, alg string, k crypto.Signer) jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}
}

// clock is a settable time source for the verifier.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newVerifier builds a verifier on a clock that stands at its first fetch.
func newVerifier(t testing.TB, opts JWTOptions) (*JWTVerifier, *clock) {
	t.Helper()
	v, err := NewJWTVerifier(context.Background(), opts)
	if err != nil {
		t.Fatalf("NewJWTVerifier: %v", err)
	}
	c := &clock{t: v.keys.triedAt}
	v.now = c.now
	return v, c
}

// claims returns valid claims at now for user alice.
func claims(now time.Time) jwt.MapClaims {
	return jwt.MapClaims{"iss": testIss, "aud": testAud, "sub": "alice",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

func sign(t testing.TB, m jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	return must(tok.SignedString(key))
}

// fixedMessages is every error text Verify may return: none can echo input.
var fixedMessages = map[string]bool{}

func init() {
	for _, e := range []error{ErrExpired, ErrNotYetValid, ErrUnknownKey, errMalformed, errAlgorithm,
		errSignature, errIssuer, errAudience, errMissing, errClaims, errUser, errRoles} {
		fixedMessages[e.Error()] = true
	}
}

func TestVerifyAccepts(t *testing.T) {
	p := newIDP(t, pub("r1", "RS256", rsaKey()), pub("e1", "", ecKey()), pub("d1", "EdDSA", edKey()))
	v, c := newVerifier(t, p.opts())
	now := c.now()
	for _, tc := range []struct {
		name string
		m    jwt.SigningMethod
		kid  string
		key  any
	}{
		{"RS256", jwt.SigningMethodRS256, "r1", rsaKey()},
		{"ES256", jwt.SigningMethodES256, "e1", ecKey()},
		{"EdDSA", jwt.SigningMethodEdDSA, "d1", edKey()},
	} {
		got, err := v.Verify(t.Context(), sign(t, tc.m, tc.kid, tc.key, claims(now)))
		if err != nil {
			t.Fatalf("%s: Verify: %v", tc.name, err)
		}
		want := Claims{UserID: "alice", ExpiresAt: time.Unix(now.Add(time.Hour).Unix(), 0)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: claims (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	p := newIDP(t, pub("r1", "RS256", rsaKey()), pub("e1", "ES256", ecKey()))
	v, c := newVerifier(t, p.opts())
	now := c.now()
	with := func(k string, val any) jwt.MapClaims {
		m := claims(now)
		if val == nil {
			delete(m, k)
		} else {
			m[k] = val
		}
		return m
	}
	rs := func(m jwt.MapClaims) string { return sign(t, jwt.SigningMethodRS256, "r1", rsaKey(), m) }
	spki := must(x509.MarshalPKIXPublicKey(&rsaKey().PublicKey))
	for _, tc := range []struct {
		name, token string
		want        error
	}{
		{"wrong issuer", rs(with("iss", "https://evil.test")), errIssuer},
		{"wrong audience", rs(with("aud", []string{"other"})), errAudience},
		{"no audience", rs(with("aud", nil)), errMissing},
		{"expired", rs(with("exp", now.Add(-time.Second).Unix())), ErrExpired},
		{"no exp", rs(with("exp", nil)), errMissing},
		{"not yet valid", rs(with("nbf", now.Add(time.Minute).Unix())), ErrNotYetValid},
		{"issued in the future", rs(with("iat", now.Add(time.Minute).Unix())), ErrNotYetValid},
		{"missing user", rs(with("sub", nil)), errUser},
		{"empty user", rs(with("sub", "")), errUser},
		{"numeric user", rs(with("sub", 42)), errUser},
		{"bad signature", sign(t, jwt.SigningMethodRS256, "r1", rsaKey2(), claims(now)), errSignature},
		{"key of another type", sign(t, jwt.SigningMethodES256, "r1", ecKey(), claims(now)), ErrUnknownKey},
		{"alg none", sign(t, jwt.SigningMethodNone, "r1", jwt.UnsafeAllowNoneSignatureType, claims(now)), errAlgorithm},
		{"HMAC with the public key", sign(t, jwt.SigningMethodHS256, "r1", spki, claims(now)), errAlgorithm},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, "zz", rsaKey(), claims(now)), ErrUnknownKey},
		{"two segments", "a.b", errMalformed},
		{"empty", "", errMalformed},
	} {
		_, err := v.Verify(t.Context(), tc.token)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestVerifyLeeway(t *testing.T) {
	p := newIDP(t, pub("r1", "RS256", rsaKey()))
	opts := p.opts()
	opts.Leeway = 30 * time.Second
	v, c := newVerifier(t, opts)
	m := claims(c.now())
	m["exp"], m["nbf"] = c.now().Add(-20*time.Second).Unix(), c.now().Add(20*time.Second).Unix()
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "r1", rsaKey(), m)); err != nil {
		t.Errorf("within leeway: %v", err)
	}
	c.advance(time.Minute)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "r1", rsaKey(), m)); !errors.Is(err, ErrExpired) {
		t.Errorf("past leeway: %v, want ErrExpired", err)
	}
}

func TestKeyRotation(t *testing.T) {
	p := newIDP(t, pub("k1", "RS256", rsaKey()))
	v, c := newVerifier(t, p.opts())
	if got := p.fetches.Load(); got != 1 {
		t.Fatalf("fetches after NewJWTVerifier = %d, want 1", got)
	}
	tok2 := sign(t, jwt.SigningMethodRS256, "k2", rsaKey2(), claims(c.now()))
	if _, err := v.Verify(t.Context(), tok2); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("before rotation: %v, want ErrUnknownKey", err)
	}
	p.serve(t, pub("k2", "RS256", rsaKey2())) // the provider rotates: k1 out, k2 in
	// Unknown kids within minRefetch of the last fetch do not reach the provider.
	for range 50 {
		if _, err := v.Verify(t.Context(), tok2); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("within minRefetch: %v, want ErrUnknownKey", err)
		}
	}
	if got := p.fetches.Load(); got != 1 {
		t.Fatalf("fetches within minRefetch = %d, want 1", got)
	}
	c.advance(minRefetch)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "k2", rsaKey2(), claims(c.now()))); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if got := p.fetches.Load(); got != 2 {
		t.Errorf("fetches after rotation = %d, want 2", got)
	}
	tok1 := sign(t, jwt.SigningMethodRS256, "k1", rsaKey(), claims(c.now()))
	if _, err := v.Verify(t.Context(), tok1); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("rotated-out key: %v, want ErrUnknownKey", err)
	}
}

func TestPeriodicRefresh(t *testing.T) {
	p := newIDP(t, pub("k1", "RS256", rsaKey()))
	opts := p.opts()
	opts.RefreshInterval = time.Minute
	v, c := newVerifier(t, opts)
	p.serve(t) // the provider goes down: the keys we have stay in use
	c.advance(time.Minute)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "k1", rsaKey(), claims(c.now()))); err != nil {
		t.Fatalf("with the provider down: %v", err)
	}
	if got := p.fetches.Load(); got != 2 {
		t.Errorf("fetches = %d, want 2 (one refresh attempt)", got)
	}
	p.serve(t, pub("k2", "RS256", rsaKey2()))
	c.advance(time.Minute)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "k1", rsaKey(), claims(c.now()))); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("after the refresh dropped k1: %v, want ErrUnknownKey", err)
	}
}

func TestClaimsMapping(t *testing.T) {
	p := newIDP(t, pub("k1", "RS256", rsaKey()))
	for _, tc := range []struct {
		name, userClaim, rolesClaim string
		extra                       jwt.MapClaims
		want                        Claims
		err                         error
	}{
		{"roles list", "", "roles", jwt.MapClaims{"roles": []string{"admin", "offline_access", "user", "admin"}}, Claims{UserID: "alice", Roles: []string{"admin", "user"}}, nil},
		{"roles string", "", "roles", jwt.MapClaims{"roles": "user openid"}, Claims{UserID: "alice", Roles: []string{"user"}}, nil},
		{"roles absent", "", "roles", nil, Claims{UserID: "alice"}, nil},
		{"roles nested", "", "realm_access.roles", jwt.MapClaims{"realm_access": map[string]any{"roles": []string{"admin"}}}, Claims{UserID: "alice", Roles: []string{"admin"}}, nil},
		{"roles namespaced", "", "https://wunder.test/roles", jwt.MapClaims{"https://wunder.test/roles": []string{"user"}}, Claims{UserID: "alice", Roles: []string{"user"}}, nil},
		{"roles not strings", "", "roles", jwt.MapClaims{"roles": []int{1}}, Claims{}, errRoles},
		{"roles an object", "", "roles", jwt.MapClaims{"roles": map[string]any{"admin": true}}, Claims{}, errRoles},
		{"user claim", "preferred_username", "", jwt.MapClaims{"preferred_username": "bob"}, Claims{UserID: "bob"}, nil},
		{"user claim missing", "email", "", nil, Claims{}, errUser},
	} {
		opts := p.opts()
		opts.UserClaim, opts.RolesClaim = tc.userClaim, tc.rolesClaim
		v, c := newVerifier(t, opts)
		m := claims(c.now())
		for k, val := range tc.extra {
			m[k] = val
		}
		got, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "k1", rsaKey(), m))
		got.ExpiresAt = time.Time{}
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: claims (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestNewJWTVerifierRefuses(t *testing.T) {
	good := newIDP(t, pub("k1", "RS256", rsaKey()))
	small := newIDP(t, pub("k1", "RS256", must(rsa.GenerateKey(rand.Reader, 1024))))
	hmac := newIDP(t, jose.JSONWebKey{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "h", Algorithm: "HS256"})
	down := newIDP(t)
	for _, tc := range []struct {
		name   string
		change func(*JWTOptions)
		want   error // nil: a configuration error
	}{
		{"no issuer", func(o *JWTOptions) { o.Issuer = "" }, nil},
		{"no audience", func(o *JWTOptions) { o.Audience = "" }, nil},
		{"plain http off loopback", func(o *JWTOptions) { o.JWKSURL = "http://idp.example.com/jwks" }, nil},
		{"alg none", func(o *JWTOptions) { o.Algorithms = []string{"none"} }, nil},
		{"HMAC", func(o *JWTOptions) { o.Algorithms = []string{"RS256", "HS256"} }, nil},
		{"no algorithms", func(o *JWTOptions) { o.Algorithms = []string{} }, nil},
		{"negative leeway", func(o *JWTOptions) { o.Leeway = -time.Second }, nil},
		{"provider down", func(o *JWTOptions) { *o = down.opts() }, ErrKeysUnavailable},
		{"only a 1024-bit key", func(o *JWTOptions) { *o = small.opts() }, ErrKeysUnavailable},
		{"only an HMAC key", func(o *JWTOptions) { *o = hmac.opts() }, ErrKeysUnavailable},
	} {
		opts := good.opts()
		tc.change(&opts)
		v, err := NewJWTVerifier(t.Context(), opts)
		if v != nil || err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: NewJWTVerifier = %v, %v; want an error %v", tc.name, v, err, tc.want)
		}
	}
}

func TestKeySetLookup(t *testing.T) {
	// A key the parser does not know spoils no other; a token without a kid
	// uses the one key that fits its algorithm, and none when two do.
	p := newIDP(t, pub("r1", "RS256", rsaKey()), pub("e1", "ES256", ecKey()))
	p.mu.Lock()
	p.body = []byte(`{"keys":[{"kty":"XYZ","kid":"odd"},` + string(p.body[len(`{"keys":[`):]))
	p.mu.Unlock()
	v, c := newVerifier(t, p.opts())
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "", rsaKey(), claims(c.now()))); err != nil {
		t.Errorf("no kid, one RSA key: %v", err)
	}
	p.serve(t, pub("r1", "RS256", rsaKey()), pub("r2", "RS256", rsaKey2()))
	c.advance(time.Hour)
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, "", rsaKey(), claims(c.now()))); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("no kid, two RSA keys: %v, want ErrUnknownKey", err)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	p := newIDP(t, pub("k1", "RS256", rsaKey()))
	v, c := newVerifier(t, p.opts())
	p.serve(t, pub("k1", "RS256", rsaKey()), pub("k2", "RS256", rsaKey2()))
	c.advance(minRefetch) // new kids may fetch again: the goroutines race for it
	toks := []string{
		sign(t, jwt.SigningMethodRS256, "k1", rsaKey(), claims(c.now())),  // known
		sign(t, jwt.SigningMethodRS256, "k2", rsaKey2(), claims(c.now())), // new: every caller waits for the one fetch
		sign(t, jwt.SigningMethodRS256, "k9", rsaKey(), claims(c.now())),  // unknown
	}
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 30 {
		wg.Go(func() {
			if _, err := v.Verify(t.Context(), toks[i%3]); (err == nil) != (i%3 < 2) {
				errs <- fmt.Errorf("token %d: %v", i%3, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Verify: %v", err)
	}
	if got := p.fetches.Load(); got != 2 {
		t.Errorf("fetches = %d, want 2 (one refetch shared by all)", got)
	}
}

func FuzzVerify(f *testing.F) {
	p := newIDP(f, pub("k1", "RS256", rsaKey()))
	v, c := newVerifier(f, p.opts())
	valid := sign(f, jwt.SigningMethodRS256, "k1", rsaKey(), claims(c.now()))
	for _, s := range []string{valid, valid[:len(valid)-3], valid + "x", "", ".", "..", "a.b.c",
		"eyJhbGciOiJub25lIn0.e30.", "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.bnVsbA.AA", "\x00\xff.\n.\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := v.Verify(t.Context(), raw)
		switch {
		case err == nil && got.UserID == "":
			t.Fatalf("accepted with an empty user")
		case err != nil && (!errors.Is(err, ErrInvalidToken) || !fixedMessages[err.Error()]):
			t.Fatalf("error %q is not one of the fixed token errors", err)
		}
	})
}
