package orchestrator_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// StoredText is what every store keeps: valid UTF-8 without NUL, each
// bad byte one U+FFFD, everything else as it is.
func TestStoredText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"tab\tnew\nline\x01", "tab\tnew\nline\x01"},
		{"中文", "中文"},
		{"a\x00b", "a\uFFFDb"},
		{"\x00\x00", "\uFFFD\uFFFD"},
		{"a\xffb", "a\uFFFDb"},
		{"\xe4\xb8", "\uFFFD\uFFFD"},           // a cut 3-byte rune: one mark per byte
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"}, // a surrogate is invalid
		{"ok\uFFFD", "ok\uFFFD"},
	}
	for _, c := range cases {
		got := orchestrator.StoredText(c.in)
		if got != c.want {
			t.Errorf("StoredText(%q) = %q; want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) || strings.IndexByte(got, 0) >= 0 {
			t.Errorf("StoredText(%q) = %q is not storable", c.in, got)
		}
		if again := orchestrator.StoredText(got); again != got {
			t.Errorf("StoredText is not idempotent on %q: %q", got, again)
		}
	}
	if got := orchestrator.StoredJSON(nil); got != nil {
		t.Errorf("StoredJSON(nil) = %q; want nil", got)
	}
	if got := string(orchestrator.StoredJSON([]byte(`{"a":"\u0000","b":"x` + "\x00" + `"}`))); got != `{"a":"\u0000","b":"x`+"\uFFFD"+`"}` {
		t.Errorf("StoredJSON keeps escapes and replaces raw NUL: got %q", got)
	}
}

// ClipText and CutText bound a quoted value in bytes on a rune boundary.
func TestClipAndCutText(t *testing.T) {
	cases := []struct {
		in        string
		n         int
		cut, clip string
	}{
		{"hello", 10, "hello", "hello"},
		{"hello", 5, "hello", "hello"},
		{"hello", 3, "hel", "hel…"},
		{"hello", 0, "", "…"},
		{"中文字", 4, "中", "中…"}, // 3-byte runes: 4 bytes hold one
		{"中文字", 6, "中文", "中文…"},
		{"中文字", 2, "", "…"},
		{"aé", 2, "a", "a…"},
	}
	for _, c := range cases {
		if got := orchestrator.CutText(c.in, c.n); got != c.cut {
			t.Errorf("CutText(%q, %d) = %q; want %q", c.in, c.n, got, c.cut)
		}
		if got := orchestrator.ClipText(c.in, c.n); got != c.clip {
			t.Errorf("ClipText(%q, %d) = %q; want %q", c.in, c.n, got, c.clip)
		}
		if got := orchestrator.CutText(c.in, c.n); len(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("CutText(%q, %d) = %q breaks its bound or a rune", c.in, c.n, got)
		}
	}
}
