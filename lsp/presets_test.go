package lsp

import (
	"errors"
	"slices"
	"testing"
)

func TestResolvePresets(t *testing.T) {
	t.Parallel()
	onPath := func(name string) (string, error) {
		if name == "gopls" || name == "pyright-langserver" {
			return "/usr/bin/" + name, nil
		}
		return "", errors.New("not found")
	}
	got := Resolve([]Configured{
		{ServerConfig: ServerConfig{ID: "gopls", Env: map[string]string{"GOFLAGS": "-mod=mod"}}}, // override
		{ServerConfig: ServerConfig{ID: "pyright"}, Disabled: true},                              // off
		{ServerConfig: ServerConfig{ID: "bash-language-server"}},                                 // named: kept though not on PATH
		{ServerConfig: ServerConfig{ID: "rust", Command: []string{"rust-analyzer"}, Extensions: []string{".rs"}}},
		{ServerConfig: ServerConfig{ID: "incomplete", Command: []string{"x"}}}, // no extensions: dropped
	}, onPath)
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID)
	}
	if want := []string{"gopls", "bash-language-server", "rust"}; !slices.Equal(ids, want) {
		t.Fatalf("Resolve = %q, want %q", ids, want)
	}
	if g := got[0]; g.Command[0] != "gopls" || !slices.Equal(g.Extensions, []string{".go"}) || g.Env["GOFLAGS"] != "-mod=mod" {
		t.Errorf("gopls override = %+v", g)
	}
	// Nothing configured: only the presets on PATH.
	ids = nil
	for _, s := range Resolve(nil, onPath) {
		ids = append(ids, s.ID)
	}
	if want := []string{"gopls", "pyright"}; !slices.Equal(ids, want) {
		t.Errorf("Resolve(nil) = %q, want %q", ids, want)
	}
	if s := got[0]; !s.Handles("/a/B.GO") || s.Handles("/a/b.gox") {
		t.Error("Handles by extension is wrong")
	}
}
