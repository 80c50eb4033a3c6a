package builtin

import "testing"

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{".env", ".env", true},
		{".env", "sub/.env", false},
		{".env", ".envrc", false},
		{"*.pem", "key.pem", true},
		{"*.pem", "a/key.pem", false},
		{"**/*.pem", "key.pem", true},
		{"**/*.pem", "a/b/c/key.pem", true},
		{"**/*.pem", "a/b/key.pem.txt", false},
		{".git/**", ".git", true},
		{".git/**", ".git/objects/ab/cd", true},
		{".git/**", ".github/x", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
		{"**", "anything/at/all", true},
		{"**/**/x", "x", true},
		{"src/*/main.go", "src/cmd/main.go", true},
		{"src/*/main.go", "src/cmd/sub/main.go", false},
		{"data?.csv", "data1.csv", true},
		{"data[0-9].csv", "datax.csv", false},
		{"./.env", ".env", true},
		{"[", "[", false}, // malformed matches nothing
	}
	for _, tt := range tests {
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestCheckGlob(t *testing.T) {
	for _, good := range []string{".env", "**/*.pem", ".git/**", "a/[bc]/d"} {
		if err := checkGlob(good); err != nil {
			t.Errorf("checkGlob(%q): %v", good, err)
		}
	}
	for _, bad := range []string{"", "/", "/etc/*", "a/[b", "x/\\"} {
		if err := checkGlob(bad); err == nil {
			t.Errorf("checkGlob(%q) = nil, want an error", bad)
		}
	}
}

func TestDeniedCoversParents(t *testing.T) {
	ws := &Workspace{deny: []string{"secrets", "build/*.o"}}
	for _, p := range []string{"secrets", "secrets/a", "secrets/a/b.txt", "build/x.o"} {
		if !ws.denied(p) {
			t.Errorf("denied(%q) = false", p)
		}
	}
	for _, p := range []string{".", "secretsx", "a/secrets", "build/x.c", "build"} {
		if ws.denied(p) {
			t.Errorf("denied(%q) = true", p)
		}
	}
}
