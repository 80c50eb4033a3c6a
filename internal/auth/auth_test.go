package auth_test

import (
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/auth"
)

func TestPassword(t *testing.T) {
	h, err := auth.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=4$") || strings.Contains(h, "correct horse") {
		t.Fatalf("HashPassword = %q; want a PHC argon2id string without the password", h)
	}
	h2, _ := auth.HashPassword("correct horse")
	if h == h2 {
		t.Error("two hashes of one password are equal; want distinct salts")
	}
	for _, tt := range []struct {
		hash, pw string
		want     bool
	}{
		{h, "correct horse", true},
		{h2, "correct horse", true},
		{h, "correct horsE", false},
		{h, "", false},
		{"", "", false},
		{"$argon2id$v=19$m=65536,t=3,p=4$AAAA$AAAA", "x", false},
		{"$argon2id$v=19$m=99999999,t=3,p=4$" + strings.Repeat("A", 22) + "$" + strings.Repeat("A", 43), "x", false},
		{"plain", "plain", false},
	} {
		if got := auth.CheckPassword(tt.hash, tt.pw); got != tt.want {
			t.Errorf("CheckPassword(%q, %q) = %v; want %v", tt.hash, tt.pw, got, tt.want)
		}
	}
	if _, err := auth.HashPassword(strings.Repeat("x", auth.MaxPasswordBytes+1)); err == nil {
		t.Error("HashPassword(too long) = nil error")
	}
}

func TestToken(t *testing.T) {
	s1, h1 := auth.NewToken()
	s2, _ := auth.NewToken()
	if s1 == s2 {
		t.Fatal("two tokens are equal")
	}
	if !auth.LooksLikeToken(s1) || auth.HashToken(s1) != h1 || len(h1) != 64 || strings.Contains(h1, s1) {
		t.Fatalf("NewToken = %q, %q; want a well-formed token and its hex SHA-256", s1, h1)
	}
	for _, bad := range []string{"", "wdr_", "wdr_short", s1 + "a", strings.ToUpper(s1), "Bearer " + s1, s1[:len(s1)-1] + "1", "eyJhbGciOi.x.y"} {
		if auth.LooksLikeToken(bad) {
			t.Errorf("LooksLikeToken(%q) = true", bad)
		}
	}
	if id := auth.NewID(); !strings.HasPrefix(id, "tok_") || len(id) != 20 {
		t.Errorf("NewID() = %q", id)
	}
}
