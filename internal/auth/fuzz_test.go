package auth

import (
	"strings"
	"testing"
)

// FuzzDecodeHash feeds stored-hash strings to the PHC decoder: whatever it
// accepts stays inside the bounds that keep one verification cheap
// (a forged row must not make a login derive with a gigabyte or a
// thousand passes), and never panics.
func FuzzDecodeHash(f *testing.F) {
	good, err := HashPassword("correct horse")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		good, "", "$", "$argon2id$v=19$m=65536,t=3,p=4$AAAA$AAAA",
		"$argon2id$v=19$m=8192,t=1,p=1$" + strings.Repeat("A", 11) + "$" + strings.Repeat("A", 22),
		"$argon2id$v=19$m=1048577,t=3,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2id$v=19$m=65536,t=17,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2id$v=19$m=65536,t=3,p=0$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2id$v=19$m=65536,t=3,p=256$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2i$v=19$m=65536,t=3,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2id$v=16$m=65536,t=3,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
		"$argon2id$v=19$m=-1,t=3,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := decodeHash(s)
		if err != nil {
			return
		}
		if p.memory < 8*1024 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || p.threads < 1 ||
			len(p.salt) < 8 || len(p.key) < 16 || len(p.key) > 64 {
			t.Fatalf("decodeHash(%q) accepted %d KiB, %d passes, %d threads, salt %d, key %d",
				s, p.memory, p.time, p.threads, len(p.salt), len(p.key))
		}
	})
}

// What HashPassword writes decodes to the parameters it used; the bounds
// refuse each parameter just outside them.
func TestDecodeHashBounds(t *testing.T) {
	good, err := HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeHash(good)
	if err != nil || p.memory != argonMemory || p.time != argonTime || p.threads != argonThreads || len(p.salt) != saltLen || len(p.key) != argonKeyLen {
		t.Fatalf("decodeHash(HashPassword) = %+v, %v", p, err)
	}
	salt, key := strings.Repeat("A", 11), strings.Repeat("A", 22) // 8 and 16 bytes
	for params, ok := range map[string]bool{
		"m=8192,t=1,p=1":     true,
		"m=8191,t=1,p=1":     false,
		"m=1048576,t=16,p=1": true,
		"m=1048577,t=1,p=1":  false,
		"m=8192,t=0,p=1":     false,
		"m=8192,t=17,p=1":    false,
		"m=8192,t=1,p=0":     false,
		"m=8192,t=1":         false,
	} {
		_, err := decodeHash("$argon2id$v=19$" + params + "$" + salt + "$" + key)
		if (err == nil) != ok {
			t.Errorf("%s: %v; want accepted %v", params, err, ok)
		}
	}
	for _, tc := range []struct{ salt, key string }{
		{strings.Repeat("A", 10), key},  // 7-byte salt
		{salt, strings.Repeat("A", 21)}, // 15-byte key
		{salt, strings.Repeat("A", 87)}, // 65-byte key
		{salt + "=", key},               // padded: not raw base64
		{"!" + salt, key},               // not base64
	} {
		if _, err := decodeHash("$argon2id$v=19$m=8192,t=1,p=1$" + tc.salt + "$" + tc.key); err == nil {
			t.Errorf("salt %q key %q accepted", tc.salt, tc.key)
		}
	}
}

// FuzzLooksLikeToken: whatever passes the shape check is the prefix and
// 52 lower-case base32 characters, as NewToken makes them.
func FuzzLooksLikeToken(f *testing.F) {
	s, _ := NewToken()
	for _, seed := range []string{s, "", TokenPrefix, strings.ToUpper(s), s + "a", s[:len(s)-1] + "8", "wdr_" + strings.Repeat("a", 52)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !LooksLikeToken(s) {
			return
		}
		rest := strings.TrimPrefix(s, TokenPrefix)
		if !strings.HasPrefix(s, TokenPrefix) || len(rest) != 52 || strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Fatalf("LooksLikeToken(%q) = true", s)
		}
	})
}
