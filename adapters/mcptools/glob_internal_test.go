package mcptools

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		want       bool
	}{
		{"file:///srv/docs/*", "file:///srv/docs/a/b.md", true},
		{"file:///srv/docs/*", "file:///srv/docsx", false},
		{"file:///srv/docs/*", "file:///etc/passwd", false},
		{"*.md", "notes/a.md", true},
		{"*.md", "a.mdx", false},
		{"a*b*c", "a-x-b-y-c", true},
		{"a*b*c", "a-c-b", false},
		{"ab*ab", "ab", false}, // the prefix and the suffix may not overlap
		{"exact://x", "exact://x", true},
		{"exact://x", "exact://xy", false},
		{"*", "", true},
	} {
		if got := globMatch(c.pattern, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}
