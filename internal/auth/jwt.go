package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors of the JWT verifier. Every rejected token gives an error for which
// errors.Is(err, ErrInvalidToken) holds; ErrExpired, ErrNotYetValid and
// ErrUnknownKey narrow it down. No error carries any part of the token.
var (
	ErrInvalidToken = errors.New("auth: invalid token")
	ErrExpired      = fmt.Errorf("%w: expired", ErrInvalidToken)
	ErrNotYetValid  = fmt.Errorf("%w: not yet valid", ErrInvalidToken)
	ErrUnknownKey   = fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
	// ErrKeysUnavailable is NewJWTVerifier's error when the JWKS cannot be
	// fetched or holds no usable key.
	ErrKeysUnavailable = errors.New("auth: identity provider keys unavailable")
)

// The reasons a token is rejected besides the sentinels above; fixed
// strings, so an error never echoes what the caller sent.
var (
	errMalformed = fmt.Errorf("%w: malformed", ErrInvalidToken)
	errAlgorithm = fmt.Errorf("%w: algorithm not accepted", ErrInvalidToken)
	errSignature = fmt.Errorf("%w: bad signature", ErrInvalidToken)
	errIssuer    = fmt.Errorf("%w: wrong issuer", ErrInvalidToken)
	errAudience  = fmt.Errorf("%w: wrong audience", ErrInvalidToken)
	errMissing   = fmt.Errorf("%w: missing required claim", ErrInvalidToken)
	errClaims    = fmt.Errorf("%w: invalid claims", ErrInvalidToken)
	errUser      = fmt.Errorf("%w: missing user claim", ErrInvalidToken)
	errRoles     = fmt.Errorf("%w: bad roles claim", ErrInvalidToken)
)

// DefaultJWTAlgorithms are the signature algorithms accepted when
// JWTOptions.Algorithms is nil: every asymmetric algorithm a JWKS can carry.
var DefaultJWTAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

const (
	maxTokenBytes = 16 << 10 // the largest token Verify parses
	maxJWKSBytes  = 1 << 20  // the largest key set document read
	// minRefetch spaces the fetches a token with an unknown key triggers,
	// so made-up kids cannot make wunder hammer the identity provider.
	minRefetch = 15 * time.Second
)

// JWTOptions configures a JWTVerifier. Issuer, Audience and JWKSURL are
// required; every other field has the default stated on it.
type JWTOptions struct {
	// Issuer must equal the token's "iss" claim.
	Issuer string
	// Audience must be one of the token's "aud" values.
	Audience string
	// JWKSURL is where the identity provider publishes its keys: https, or
	// http on a loopback host.
	JWKSURL string
	// UserClaim names the claim that carries the user id; default "sub".
	// A name with dots that is not a claim itself is a path into nested
	// objects ("ext.uid").
	UserClaim string
	// RolesClaim names an optional claim with the user's roles, a list of
	// strings or one space-separated string ("roles", "realm_access.roles").
	// Only "admin" and "user" are kept. Empty means no roles are read.
	RolesClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat; default none.
	Leeway time.Duration
	// HTTPClient fetches the JWKS; default a client with a 10s timeout.
	HTTPClient *http.Client
	// RefreshInterval is how often the key set is fetched again; default
	// one hour. A token naming an unknown key also triggers a fetch, at
	// most once per minRefetch.
	RefreshInterval time.Duration
	// Algorithms lists the accepted "alg" values; default
	// DefaultJWTAlgorithms. "none" and HMAC algorithms are refused: a JWKS
	// publishes public keys, and HMAC with one as its secret is forgeable.
	Algorithms []string
}

// Claims is what a verified token says about its bearer.
type Claims struct {
	UserID    string
	Roles     []string // "admin" and/or "user"; empty when not given
	ExpiresAt time.Time
}

// JWTVerifier checks JWTs from one identity provider. It is safe for
// concurrent use.
type JWTVerifier struct {
	opts   JWTOptions
	keys   *keyCache
	parser *jwt.Parser
	now    func() time.Time // the clock; replaced in tests
}

// NewJWTVerifier checks opts, fetches the key set once and returns the
// verifier. A JWKS that cannot be fetched or has no usable key is
// ErrKeysUnavailable.
func NewJWTVerifier(ctx context.Context, opts JWTOptions) (*JWTVerifier, error) {
	if err := jwtDefaults(&opts); err != nil {
		return nil, err
	}
	v := &JWTVerifier{opts: opts, now: time.Now}
	v.keys = &keyCache{url: opts.JWKSURL, client: opts.HTTPClient, refresh: opts.RefreshInterval}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(opts.Algorithms),
		jwt.WithIssuer(opts.Issuer),
		jwt.WithAudience(opts.Audience),
		jwt.WithLeeway(opts.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return v.now() }),
	)
	now := v.now()
	v.keys.inflight, v.keys.triedAt = make(chan struct{}), now
	if err := v.keys.fetch(ctx, now); err != nil {
		return nil, err
	}
	return v, nil
}

// jwtDefaults fills in the defaults of opts and rejects what cannot work.
func jwtDefaults(opts *JWTOptions) error {
	if opts.Issuer == "" || opts.Audience == "" || opts.JWKSURL == "" {
		return errors.New("auth: jwt: issuer, audience and jwks_url are required")
	}
	u, err := url.Parse(opts.JWKSURL)
	if err != nil || u.Host == "" {
		return errors.New("auth: jwt: jwks_url is not a URL")
	}
	ip := net.ParseIP(u.Hostname())
	loopback := u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback())
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return errors.New("auth: jwt: jwks_url must be an https URL (or http on a loopback host)")
	}
	if opts.Leeway < 0 || opts.RefreshInterval < 0 {
		return errors.New("auth: jwt: leeway and refresh interval must not be negative")
	}
	opts.UserClaim = cmp.Or(opts.UserClaim, "sub")
	opts.RefreshInterval = cmp.Or(opts.RefreshInterval, time.Hour)
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Algorithms == nil {
		opts.Algorithms = DefaultJWTAlgorithms
	}
	if len(opts.Algorithms) == 0 {
		return errors.New("auth: jwt: no algorithms accepted")
	}
	for _, alg := range opts.Algorithms {
		if !slices.Contains(DefaultJWTAlgorithms, alg) {
			return fmt.Errorf("auth: jwt: algorithm %q not supported (only asymmetric ones are)", alg)
		}
	}
	return nil
}

// Verify checks raw's signature against the provider's keys and its
// issuer, audience and times, and returns its claims.
func (v *JWTVerifier) Verify(ctx context.Context, raw string) (Claims, error) {
	if raw == "" || len(raw) > maxTokenBytes {
		return Claims{}, errMalformed
	}
	claims := jwt.MapClaims{}
	tok, err := v.parser.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.keys.get(ctx, kid, t.Method.Alg(), v.now())
	})
	if err != nil {
		return Claims{}, v.classify(tok, err)
	}
	var c Claims
	if c.UserID, _ = claimAt(claims, v.opts.UserClaim).(string); c.UserID == "" {
		return Claims{}, errUser
	}
	if v.opts.RolesClaim != "" {
		if c.Roles, err = parseRoles(claimAt(claims, v.opts.RolesClaim)); err != nil {
			return Claims{}, err
		}
	}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		c.ExpiresAt = exp.Time
	}
	return c, nil
}

// classify maps a parse error to one of the fixed errors above.
func (v *JWTVerifier) classify(tok *jwt.Token, err error) error {
	if tok != nil && tok.Method != nil && !slices.Contains(v.opts.Algorithms, tok.Method.Alg()) {
		return errAlgorithm
	}
	for _, m := range []struct{ jwt, ours error }{
		{ErrUnknownKey, ErrUnknownKey},
		{jwt.ErrTokenMalformed, errMalformed},
		{jwt.ErrTokenUnverifiable, errMalformed},
		{jwt.ErrTokenSignatureInvalid, errSignature},
		{jwt.ErrTokenInvalidIssuer, errIssuer},
		{jwt.ErrTokenInvalidAudience, errAudience},
		{jwt.ErrTokenRequiredClaimMissing, errMissing},
		{jwt.ErrTokenExpired, ErrExpired},
		{jwt.ErrTokenNotValidYet, ErrNotYetValid},
		{jwt.ErrTokenUsedBeforeIssued, ErrNotYetValid},
	} {
		if errors.Is(err, m.jwt) {
			return m.ours
		}
	}
	return errClaims
}

// claimAt returns the claim called name, or, when there is none and name
// has dots, the value at that path through nested objects.
func claimAt(claims map[string]any, name string) any {
	if v, ok := claims[name]; ok || !strings.Contains(name, ".") {
		return v
	}
	var cur any = claims
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// parseRoles reads a roles claim: absent, a list of strings or one
// space-separated string. It keeps "admin" and "user", once each.
func parseRoles(v any) ([]string, error) {
	var all []string
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		all = strings.Fields(v)
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, errRoles
			}
			all = append(all, s)
		}
	default:
		return nil, errRoles
	}
	var roles []string
	for _, r := range all {
		if (r == "admin" || r == "user") && !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	return roles, nil
}
