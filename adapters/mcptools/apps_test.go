package mcptools_test

import (
	"testing"

	"github.com/wunder/wunder/adapters/mcptools"
)

// A tool is app-only when its _meta.ui.visibility lists no "model"; no
// list is the extension's default, both.
func TestAppOnly(t *testing.T) {
	for _, tc := range []struct {
		meta map[string]any
		want bool
	}{
		{nil, false},
		{map[string]any{"ui": map[string]any{"resourceUri": "ui://a/b"}}, false},
		{map[string]any{"ui": map[string]any{"visibility": []any{"model", "app"}}}, false},
		{map[string]any{"ui": map[string]any{"visibility": []any{"model"}}}, false},
		{map[string]any{"ui": map[string]any{"visibility": []any{"app"}}}, true},
		{map[string]any{"ui": map[string]any{"visibility": []any{}}}, true},
		{map[string]any{"ui": "not an object"}, false},
	} {
		if got := mcptools.AppOnly(tc.meta); got != tc.want {
			t.Errorf("AppOnly(%v) = %v, want %v", tc.meta, got, tc.want)
		}
	}
}
