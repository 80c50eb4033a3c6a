package lsptools

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/lsp"
)

func TestRenderHover(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"contents":{"kind":"markdown","value":"func f()"}}`: "func f()",
		`{"contents":"plain"}`:                                "plain",
		`{"contents":[{"language":"go","value":"a"},"b"]}`:    "a\n\nb",
		`{"contents":null}`:                                   "no hover information",
		`null`:                                                "no hover information",
		`{"contents":{"kind":"plaintext","value":"  "}}`:      "no hover information",
	} {
		if got := renderHover(json.RawMessage(in)); got != want {
			t.Errorf("renderHover(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeLocations(t *testing.T) {
	t.Parallel()
	for in, n := range map[string]int{
		`{"uri":"file:///a.go","range":{"start":{"line":1,"character":2},"end":{"line":1,"character":3}}}`: 1,
		`[{"uri":"file:///a.go"},{"uri":"file:///b.go"}]`:                                                  2,
		`[{"targetUri":"file:///a.go","targetSelectionRange":{"start":{"line":4,"character":0}}}]`:         1,
		`null`: 0,
		`[]`:   0,
		`"x"`:  0,
	} {
		if got := decodeLocations(json.RawMessage(in)); len(got) != n {
			t.Errorf("decodeLocations(%s) = %+v, want %d", in, got, n)
		}
	}
}

func TestRenderDiagnostics(t *testing.T) {
	t.Parallel()
	tg := &target{wsDir: "/ws", abs: "/ws/a.go", rel: "a.go", srv: lsp.ServerConfig{ID: "s"}, text: "x\nyé😀z\n"}
	diags := []lsp.Diagnostic{
		{Severity: lsp.SeverityWarning, Message: "w", Range: lsp.Range{Start: lsp.Position{Line: 0}}},
		{Severity: lsp.SeverityError, Message: "e2\nmore", Range: lsp.Range{Start: lsp.Position{Line: 1, Character: 4}}, Source: "compiler"},
		{Message: "no severity is an error", Range: lsp.Range{Start: lsp.Position{Line: 0}}},
	}
	got := renderDiagnostics(tg, diags, true, time.Second, 2)
	want := "LSP (s) on a.go: 2 errors, 1 warning\n" +
		"  a.go:1:1 error: no severity is an error\n" +
		"  a.go:2:4 error: e2 more (compiler)\n" +
		"  ... and 1 more"
	if got != want {
		t.Errorf("renderDiagnostics =\n%s\nwant\n%s", got, want)
	}
	if got := renderDiagnostics(tg, nil, false, time.Second, 2); got != "LSP (s) on a.go: no diagnostics within 1s" {
		t.Errorf("no diagnostics = %q", got)
	}
}

func TestCapText(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("中文行\n", 1000)
	got := capText(s, 100)
	if !utf8.ValidString(got) || !strings.Contains(got, "truncated") || len(got) > 200 {
		t.Errorf("capText = %q", got)
	}
	if capText("short", 100) != "short" {
		t.Error("short text changed")
	}
}

func TestPosition(t *testing.T) {
	t.Parallel()
	text := "package a\n\tx := \"😀\"; y\n"
	p, err := position(text, 2, 12) // the y, after an astral character
	if err != nil || p != (lsp.Position{Line: 1, Character: 12}) {
		t.Errorf("position = %+v, %v; want 1:12 (UTF-16)", p, err)
	}
	if _, err := position(text, 9, 1); err == nil {
		t.Error("a line past the end was accepted")
	}
}

// Messages are cut on a character boundary: a tool result stays UTF-8.
func TestLongMessagesStayUTF8(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 199) + "é\nsecond line"
	if got := shortErr(errors.New(long)); !utf8.ValidString(got) || strings.Contains(got, "\n") || !strings.HasSuffix(got, "a...") {
		t.Errorf("shortErr = %q, want one valid line cut before the é", got)
	}
	tg := &target{abs: "/ws/a.go", rel: "a.go", wsDir: "/ws", srv: lsp.ServerConfig{ID: "s"}}
	got := renderDiagnostics(tg, []lsp.Diagnostic{{Severity: lsp.SeverityError, Message: long}}, true, time.Second, 10)
	if !utf8.ValidString(got) || !strings.Contains(got, "a...") {
		t.Errorf("renderDiagnostics = %q, want a valid message cut before the é", got)
	}
}
