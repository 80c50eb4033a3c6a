package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters (RFC 9106 second recommended option, "memory
// constrained"): t=3, 64 MiB, p=4, a 16-byte salt and a 32-byte key. They
// are stored in every hash, so they can change without invalidating
// existing ones.
const (
	argonTime    = 3
	argonMemory  = 64 * 1024
	argonThreads = 4
	argonKeyLen  = 32
	saltLen      = 16
	// MaxPasswordBytes bounds what is hashed, so a huge password costs no
	// more than a long one.
	MaxPasswordBytes = 1024
)

// ErrPasswordTooLong: the password is longer than MaxPasswordBytes.
var ErrPasswordTooLong = fmt.Errorf("password longer than %d bytes", MaxPasswordBytes)

// HashPassword returns the PHC-style encoding of an argon2id hash of pw:
// $argon2id$v=19$m=65536,t=3,p=4$<salt>$<key> (unpadded standard base64).
// It takes 64 MiB while it runs and bounds nothing; a server hashes
// through a [Hasher], which bounds how many run at once.
func HashPassword(pw string) (string, error) { return hashPassword(pw, argonKey) }

// CheckPassword reports whether pw matches the encoded hash, comparing the
// derived keys in constant time. A malformed hash (or "", a user without a
// password) never matches; it still costs one derivation with the default
// parameters, so its timing does not tell it apart from a wrong password.
// Like HashPassword it bounds nothing: see [Hasher.Check].
func CheckPassword(encoded, pw string) bool { return checkPassword(encoded, pw, argonKey) }

// DummyCheck spends what CheckPassword spends, for a login naming no such
// user, so that response times do not reveal which user ids exist.
func DummyCheck(pw string) { CheckPassword("", pw) }

// deriveFunc derives a key from pw with the parameters p (p.key gives its
// length): argon2.IDKey, or a test's recorder.
type deriveFunc func(pw []byte, p params) []byte

func argonKey(pw []byte, p params) []byte {
	return argon2.IDKey(pw, p.salt, p.time, p.memory, p.threads, uint32(len(p.key)))
}

func hashPassword(pw string, derive deriveFunc) (string, error) {
	if len(pw) > MaxPasswordBytes {
		return "", ErrPasswordTooLong
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := derive([]byte(pw), params{memory: argonMemory, time: argonTime, threads: argonThreads, salt: salt, key: make([]byte, argonKeyLen)})
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// checkParams are the parameters checking pw against encoded derives with,
// and whether a match is possible at all: a malformed hash and a password
// too long to have been hashed are checked against the dummy, with the
// default parameters.
func checkParams(encoded, pw string) (params, bool) {
	p, err := decodeHash(encoded)
	if err != nil || len(pw) > MaxPasswordBytes {
		return dummy, false
	}
	return p, true
}

func checkPassword(encoded, pw string, derive deriveFunc) bool {
	p, possible := checkParams(encoded, pw)
	return matches(p, possible, pw, derive)
}

// matches derives pw's key with p (always: the time spent is the same
// whether a match is possible or not) and compares it in constant time.
func matches(p params, possible bool, pw string, derive deriveFunc) bool {
	key := derive([]byte(pw), p)
	return possible && subtle.ConstantTimeCompare(key, p.key) == 1
}

type params struct {
	memory, time uint32
	threads      uint8
	salt, key    []byte
}

var dummy = params{memory: argonMemory, time: argonTime, threads: argonThreads, salt: make([]byte, saltLen), key: make([]byte, argonKeyLen)}

var errBadHash = errors.New("not an argon2id hash")

func decodeHash(s string) (params, error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return params{}, errBadHash
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return params{}, errBadHash
	}
	var p params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return params{}, errBadHash
	}
	// Bounds keep a forged hash from making verification expensive.
	if p.memory < 8*1024 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || p.threads < 1 {
		return params{}, errBadHash
	}
	var err error
	b64 := base64.RawStdEncoding
	if p.salt, err = b64.DecodeString(parts[4]); err != nil || len(p.salt) < 8 {
		return params{}, errBadHash
	}
	if p.key, err = b64.DecodeString(parts[5]); err != nil || len(p.key) < 16 || len(p.key) > 64 {
		return params{}, errBadHash
	}
	return p, nil
}
