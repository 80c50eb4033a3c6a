package cardsig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// JWKSPath is where wunder serves the public key of its card signatures.
const JWKSPath = "/.well-known/jwks.json"

// jwksMaxAge is the Cache-Control max-age of the served JWKS, in seconds.
const jwksMaxAge = 3600

// JWKSHandler serves [Signer.JWKS] (GET and HEAD, CORS for any origin: it
// is public), with Cache-Control and an ETag.
func (s *Signer) JWKSHandler() http.Handler {
	sum := sha256.Sum256(s.jwks)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "If-None-Match")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Cache-Control", "public, max-age="+strconv.Itoa(jwksMaxAge))
		h.Set("ETag", etag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && (strings.Contains(inm, etag) || strings.TrimSpace(inm) == "*") {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/jwk-set+json")
		h.Set("Content-Length", strconv.Itoa(len(s.jwks)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(s.jwks)
		}
	})
}

// Bounds of a fetched JWKS.
const (
	maxJWKSBytes = 1 << 20
	jwksTimeout  = 10 * time.Second
)

// fetchJWKS reads the keys of a JWKS that can check a card signature. A
// key without a kid is named by its thumbprint; one whose alg does not fit
// its type, or whose use is not "sig", is skipped.
func fetchJWKS(ctx context.Context, hc *http.Client, url string) ([]trusted, error) {
	ctx, cancel := context.WithTimeout(ctx, jwksTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered HTTP %d", url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", url, maxJWKSBytes)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%s is not a JWKS: %w", url, err)
	}
	var keys []trusted
	for _, raw := range doc.Keys { // a key this reader does not know spoils no other
		var jk jose.JSONWebKey
		if jk.UnmarshalJSON(raw) != nil || !jk.Valid() || (jk.Use != "" && jk.Use != "sig") {
			continue
		}
		pub := jk.Public().Key // a private key published by mistake counts as its public half
		alg, err := algFor(pub)
		if err != nil || (jk.Algorithm != "" && jk.Algorithm != alg) {
			continue
		}
		kid := jk.KeyID
		if kid == "" {
			if kid, err = Thumbprint(pub); err != nil {
				continue
			}
		}
		keys = append(keys, trusted{kid: kid, alg: alg, key: pub})
	}
	if len(keys) == 0 {
		return nil, errors.New(url + " holds no EC P-256, EC P-384 or Ed25519 signing key")
	}
	return keys, nil
}
