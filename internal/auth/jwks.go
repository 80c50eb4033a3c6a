package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// jwksKey is one usable key of the set.
type jwksKey struct {
	kid, alg string // alg is empty when the JWK does not pin one
	key      crypto.PublicKey
}

// keyCache holds the provider's keys, fetched again when they are older
// than refresh or a token names a kid it lacks (at most once per
// minRefetch). One fetch runs at a time; other callers wait for it.
type keyCache struct {
	url     string
	client  *http.Client
	refresh time.Duration

	// mu guards the fields below.
	mu        sync.Mutex
	keys      []jwksKey
	fetchedAt time.Time     // last successful fetch
	triedAt   time.Time     // last attempt
	inflight  chan struct{} // closed when the running fetch ends
}

// get returns the key for kid that can check alg.
func (c *keyCache) get(ctx context.Context, kid, alg string, now time.Time) (crypto.PublicKey, error) {
	c.mu.Lock()
	if k, found := lookup(c.keys, kid, alg); found && now.Sub(c.fetchedAt) < c.refresh {
		c.mu.Unlock()
		return k, nil
	}
	if c.inflight == nil && now.Sub(c.triedAt) >= minRefetch {
		c.inflight, c.triedAt = make(chan struct{}), now
		c.mu.Unlock()
		// Others wait for this fetch: it must not end with this request. On
		// failure the keys we have stay in use.
		_ = c.fetch(context.WithoutCancel(ctx), now)
	} else {
		wait := c.inflight
		c.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, found := lookup(c.keys, kid, alg); found {
		return k, nil
	}
	return nil, ErrUnknownKey
}

// fetch downloads and parses the key set, replaces the cached keys and
// ends the fetch the caller began by setting inflight.
func (c *keyCache) fetch(ctx context.Context, now time.Time) error {
	keys, err := c.download(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.inflight)
	c.inflight = nil
	if err != nil {
		return fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	c.keys, c.fetchedAt = keys, now
	return nil
}

// download reads the key set and keeps the keys that can check a signature.
func (c *keyCache) download(ctx context.Context) ([]jwksKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks answered %s", resp.Status)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	var keys []jwksKey
	for _, raw := range doc.Keys { // one key the parser does not know spoils no other
		var jk jose.JSONWebKey
		if jk.UnmarshalJSON(raw) != nil || !jk.Valid() || (jk.Use != "" && jk.Use != "sig") {
			continue
		}
		k := jwksKey{kid: jk.KeyID, alg: jk.Algorithm, key: jk.Public().Key} // a private key published by mistake counts as its public half
		if slices.ContainsFunc(DefaultJWTAlgorithms, func(alg string) bool { return fits(k, alg) }) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no usable signing key in the jwks")
	}
	return keys, nil
}

// lookup finds the key named kid that fits alg; a token without a kid is
// checked with the set's only key that fits alg.
func lookup(keys []jwksKey, kid, alg string) (crypto.PublicKey, bool) {
	var match []jwksKey
	for _, k := range keys {
		if (kid == "" || k.kid == kid) && fits(k, alg) {
			match = append(match, k)
		}
	}
	if len(match) != 1 && (kid == "" || len(match) == 0) {
		return nil, false
	}
	return match[0].key, true
}

// fits reports whether k can check a signature made with alg.
func fits(k jwksKey, alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		return (strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")) && key.N.BitLen() >= 2048
	case *ecdsa.PublicKey:
		return (alg == "ES256" && key.Curve == elliptic.P256()) ||
			(alg == "ES384" && key.Curve == elliptic.P384()) ||
			(alg == "ES512" && key.Curve == elliptic.P521())
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}
