package a2a

import (
	"slices"
	"testing"
)

func TestPreloadOf(t *testing.T) {
	for _, c := range []struct {
		metas []map[string]any
		want  []string
	}{
		{[]map[string]any{{"preload_skills": []any{"a", " b ", 3, ""}}}, []string{"a", "b"}},
		{[]map[string]any{{"preload_skills": "a, alice@b,,"}}, []string{"a", "alice@b"}},
		{[]map[string]any{nil, {"preload_skills": []any{"req"}}}, []string{"req"}},
		{[]map[string]any{{"preload_skills": []any{"msg"}}, {"preload_skills": []any{"req"}}}, []string{"msg"}},
		{[]map[string]any{{"preload_skills": 7}}, nil},
	} {
		if got := preloadOf(c.metas...); !slices.Equal(got, c.want) {
			t.Errorf("preloadOf(%v) = %q, want %q", c.metas, got, c.want)
		}
	}
}
