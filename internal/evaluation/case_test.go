package evaluation

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/wunder/wunder/eval"
)

// The starter set parses, with unique ids, and names its prerequisites.
func TestStarterCasesLoad(t *testing.T) {
	sets, err := Load(mustSub(t))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, s := range sets {
		names[s.Name] = len(s.Cases)
	}
	for _, want := range []string{"builtin", "mcp", "skills", "knowledge"} {
		if names[want] == 0 {
			t.Errorf("case set %q missing or empty: %v", want, names)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, bad := range []string{
		"cases: []",
		"cases: [{id: A, question: q, checks: [{type: contains, value: x}]}]",
		"cases: [{id: a, question: '', checks: [{type: contains, value: x}]}]",
		"cases: [{id: a, question: q}]",
		"cases: [{id: a, question: q, checks: [{type: nope}]}]",
		"cases: [{id: a, question: q, checks: [{type: regex, value: '('}]}]",
		"cases: [{id: a, question: q, files: [{path: ../x, content: y}], checks: [{type: contains, value: x}]}]",
		"cases: [{id: a, question: q, checks: [{type: file_exists, path: /etc/passwd}]}]",
		"cases: [{id: a, question: q, checks: [{type: json_path, query: 'a[x]'}]}]",
		"cases: [{id: a, question: q, unknown: 1, checks: [{type: contains, value: x}]}]",
	} {
		if _, err := Parse([]byte(bad), "t"); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
}

func TestChecks(t *testing.T) {
	files := map[string]string{"r.json": `{"sum": 42, "list": [{"n": "a"}]}`, "n.txt": "hello"}
	g := &grader{answer: "```json\n{\"city\": \"Paris\"}\n```", readFile: func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, context.Canceled
	}, judge: func(_ context.Context, _, rubric, _, answer string) (bool, string, error) {
		return strings.Contains(answer, "Paris"), "judged", nil
	}}
	for _, tc := range []struct {
		ch   Check
		pass bool
	}{
		{Check{Type: "contains", Value: "Paris"}, true},
		{Check{Type: "contains", Value: "paris"}, false},
		{Check{Type: "contains", Value: "paris", IgnoreCase: true}, true},
		{Check{Type: "regex", Value: `"city":\s*"P`}, true},
		{Check{Type: "file_exists", Path: "n.txt"}, true},
		{Check{Type: "file_exists", Path: "n.txt", Contains: "bye"}, false},
		{Check{Type: "file_exists", Path: "missing.txt"}, false},
		{Check{Type: "json_path", Query: "$.city", Equals: "Paris"}, true},
		{Check{Type: "json_path", Query: "$.city", Equals: "Lyon"}, false},
		{Check{Type: "json_path", Path: "r.json", Query: "$.sum", Equals: 42}, true},
		{Check{Type: "json_path", Path: "r.json", Query: "list[0].n", Equals: "a"}, true},
		{Check{Type: "json_path", Path: "r.json", Query: "list[1].n"}, false},
		{Check{Type: "json_path", Path: "n.txt", Query: "$.x"}, false},
		{Check{Type: "judge", Rubric: "r"}, true},
	} {
		if got := g.run(t.Context(), tc.ch); got.Passed != tc.pass || got.Detail == "" {
			t.Errorf("%+v: %+v, want passed=%v", tc.ch, got, tc.pass)
		}
	}
}

func mustSub(t *testing.T) fs.FS {
	t.Helper()
	sub, err := fs.Sub(eval.Cases, "cases")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
