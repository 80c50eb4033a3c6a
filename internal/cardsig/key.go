package cardsig

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// The algorithms wunder signs and verifies with, one per key type.
const (
	ES256 = "ES256" // ECDSA P-256 with SHA-256
	ES384 = "ES384" // ECDSA P-384 with SHA-384
	EdDSA = "EdDSA" // Ed25519
)

// maxPEMBytes bounds a key file.
const maxPEMBytes = 64 << 10

// readPEM returns the first PEM block of spec: PEM text itself (it holds
// "-----BEGIN") or the path of a file that holds it.
func readPEM(spec string) (*pem.Block, error) {
	data := []byte(spec)
	if !strings.Contains(spec, "-----BEGIN") {
		if strings.TrimSpace(spec) == "" {
			return nil, errors.New("empty: want PEM text or the path of a PEM file")
		}
		f, err := os.Open(spec)
		if err != nil {
			return nil, fmt.Errorf("not PEM text, and not a readable file: %w", err)
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxPEMBytes+1)); err != nil {
			return nil, fmt.Errorf("read %s: %w", spec, err)
		}
		if len(data) > maxPEMBytes {
			return nil, fmt.Errorf("%s is larger than %d bytes: not a key file", spec, maxPEMBytes)
		}
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found (want -----BEGIN ...-----)")
	}
	return block, nil
}

// parsePrivate reads a signing key: PKCS #8 ("PRIVATE KEY") or SEC 1
// ("EC PRIVATE KEY").
func parsePrivate(spec string) (crypto.Signer, string, error) {
	block, err := readPEM(spec)
	if err != nil {
		return nil, "", err
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, "", fmt.Errorf("PEM block %q is not a supported private key: want PKCS #8 \"PRIVATE KEY\" or SEC 1 \"EC PRIVATE KEY\" (EC P-256, EC P-384 or Ed25519)", block.Type)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", block.Type, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, "", fmt.Errorf("%T is not a signing key", key)
	}
	alg, err := algFor(signer.Public())
	if err != nil {
		return nil, "", err
	}
	return signer, alg, nil
}

// parsePublic reads a trusted key: "PUBLIC KEY" (SubjectPublicKeyInfo) or a
// "CERTIFICATE" whose key is used.
func parsePublic(spec string) (crypto.PublicKey, string, error) {
	block, err := readPEM(spec)
	if err != nil {
		return nil, "", err
	}
	var key any
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		return nil, "", fmt.Errorf("PEM block %q is not a public key: want \"PUBLIC KEY\" or \"CERTIFICATE\"", block.Type)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", block.Type, err)
	}
	alg, err := algFor(key)
	if err != nil {
		return nil, "", err
	}
	return key, alg, nil
}

// algFor is the one algorithm a key signs with.
func algFor(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return ES256, nil
		case elliptic.P384():
			return ES384, nil
		}
		return "", fmt.Errorf("EC curve %s is not supported: want P-256 (ES256) or P-384 (ES384)", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return EdDSA, nil
	}
	return "", fmt.Errorf("%s keys are not supported: want EC P-256, EC P-384 or Ed25519", keyKind(pub))
}

func keyKind(pub crypto.PublicKey) string {
	s := fmt.Sprintf("%T", pub) // *rsa.PublicKey
	s = strings.TrimPrefix(s, "*")
	s, _, _ = strings.Cut(s, ".")
	return strings.ToUpper(s)
}

// Thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url) of a
// public key: wunder's default kid.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	sum, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", err
	}
	if len(sum) != sha256.Size {
		return "", errors.New("thumbprint: unexpected size")
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// CheckSigningKey reports whether spec is a usable signing key (config
// validation); it returns the key's algorithm.
func CheckSigningKey(spec string) (string, error) {
	_, alg, err := parsePrivate(spec)
	return alg, err
}

// CheckPublicKey reports whether spec is a usable trusted key (config
// validation); it returns the key's algorithm.
func CheckPublicKey(spec string) (string, error) {
	_, alg, err := parsePublic(spec)
	return alg, err
}
