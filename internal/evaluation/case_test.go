package evaluation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

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

// A bad case file is refused with an error naming the case and the
// field, so its author can find the line.
func TestParseRejects(t *testing.T) {
	const ok = "checks: [{type: contains, value: x}]"
	for _, tc := range []struct{ yaml, want string }{
		{"cases: []", "cases: none"},
		{"case_set: s", "cases: none"},
		{"cases: [{id: A, question: q, " + ok + "}]", "cases[0] (A): id: must match"},
		{"cases: [{id: '-a', question: q, " + ok + "}]", "cases[0] (-a): id: must match"},
		{"cases: [{id: " + strings.Repeat("a", 65) + ", question: q, " + ok + "}]", "id: must match"},
		{"cases: [{id: a, question: q, " + ok + "}, {id: b, question: '  ', " + ok + "}]", "cases[1] (b): question: required"},
		{"cases: [{id: a, question: q}]", "cases[0] (a): checks: at least one"},
		{"cases: [{id: a, question: q, checks: [{type: nope}]}]", `checks[0]: type: must be one of contains, regex, file_exists, json_path, judge; got "nope"`},
		{"cases: [{id: a, question: q, checks: [{type: contains}]}]", "checks[0]: value: required"},
		{"cases: [{id: a, question: q, checks: [{type: regex, value: '('}]}]", "checks[0]: value: a regular expression is required"},
		{"cases: [{id: a, question: q, checks: [{type: regex}]}]", "checks[0]: value: a regular expression is required"},
		{"cases: [{id: a, question: q, checks: [{type: file_exists}]}]", "checks[0]: path: required"},
		{"cases: [{id: a, question: q, checks: [{type: judge, rubric: ' '}]}]", "checks[0]: rubric: required"},
		{"cases: [{id: a, question: q, checks: [{type: json_path, query: 'a[x]'}]}]", `checks[0]: query: bad index in "a[x]"`},
		{"cases: [{id: a, question: q, checks: [{type: json_path, query: 'a..b'}]}]", "checks[0]: query: empty step"},
		{"cases: [{id: a, question: q, checks: [{type: file_exists, path: /etc/passwd}]}]", `checks[0]: path: must be a relative path inside the workspace, got "/etc/passwd"`},
		{"cases: [{id: a, question: q, checks: [{type: contains, value: x, path: ../up}]}]", `checks[0]: path: must be a relative path`},
		{"cases: [{id: a, question: q, unknown: 1, " + ok + "}]", "field unknown not found"},
		{"cases: [{id: a, question: q, checks: [{type: contains, value: x, valeu: y}]}]", "field valeu not found"},
	} {
		_, err := Parse([]byte(tc.yaml), "t")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", tc.yaml, err, tc.want)
		}
	}
}

// Setup files and checked files must stay inside the case's workspace:
// no absolute path, no way up, no other spelling of a path.
func TestFilePathsStayInTheWorkspace(t *testing.T) {
	for path, valid := range map[string]bool{
		"a.txt": true, "dir/a.txt": true, ".hidden": true, "a..b": true,
		"": false, "/a": false, "../a": false, "..": false, ".": false, "a/../b": false,
		"./a": false, "a//b": false, "a/": false, `a\b`: false, "dir/../../etc": false,
	} {
		yaml := "cases: [{id: a, question: q, files: [{path: '" + path + "', content: x}], checks: [{type: contains, value: x}]}]"
		_, err := Parse([]byte(yaml), "t")
		if valid && err != nil {
			t.Errorf("setup file %q refused: %v", path, err)
		}
		if !valid && (err == nil || !strings.Contains(err.Error(), "files[0].path: must be a relative path inside the workspace")) {
			t.Errorf("setup file %q: %v, want it refused naming files[0].path", path, err)
		}
	}
}

// Load reads every .yaml and .yml file of the top directory as a set
// (named by case_set, else the file), sorted by name; other files and
// directories are ignored, and a case id used by two files is an error
// naming both.
func TestLoad(t *testing.T) {
	c := func(id string) string { return "{id: " + id + ", question: q, checks: [{type: contains, value: x}]}" }
	sets, err := Load(fstest.MapFS{
		"zeta.yaml":      {Data: []byte("cases: [" + c("z1") + ", " + c("z2") + "]")},
		"b.yml":          {Data: []byte("case_set: alpha\ncases: [" + c("a1") + "]")},
		"README.md":      {Data: []byte("not a case file")},
		"notes.yaml.bak": {Data: []byte("{{{")},
		"sub/inner.yaml": {Data: []byte("cases: [" + c("inner") + "]")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sets {
		for _, cs := range s.Cases {
			got = append(got, s.Name+"/"+cs.ID+"@"+cs.Set)
		}
	}
	if want := "alpha/a1@alpha zeta/z1@zeta zeta/z2@zeta"; strings.Join(got, " ") != want {
		t.Errorf("loaded %q, want %q", strings.Join(got, " "), want)
	}

	_, err = Load(fstest.MapFS{
		"one.yaml": {Data: []byte("cases: [" + c("dup") + "]")},
		"two.yaml": {Data: []byte("cases: [" + c("dup") + "]")},
	})
	if err == nil || !strings.Contains(err.Error(), `two.yaml: case "dup" is also in one.yaml`) {
		t.Errorf("a duplicate id across files: %v", err)
	}
	_, err = Load(fstest.MapFS{"bad.yaml": {Data: []byte("cases: [{id: a}]")}})
	if err == nil || !strings.Contains(err.Error(), "evaluation cases: bad.yaml: cases[0] (a): question: required") {
		t.Errorf("a bad file: %v", err)
	}
}

// JSON paths: "$", the leading dot and bracket indices, nested.
func TestParsePath(t *testing.T) {
	for q, want := range map[string]string{
		"":            "",
		"$":           "",
		"$.a":         "a",
		"a":           "a",
		"$.a.b[0].c":  "a b [0] c",
		"a[0][12]":    "a [0] [12]",
		"$[1]":        "[1]",
		"$.a[0].b[2]": "a [0] b [2]",
	} {
		steps, err := parsePath(q)
		if err != nil {
			t.Errorf("parsePath(%q): %v", q, err)
			continue
		}
		var parts []string
		for _, s := range steps {
			if s.key != "" {
				parts = append(parts, s.key)
			} else {
				parts = append(parts, fmt.Sprintf("[%d]", s.index))
			}
		}
		if got := strings.Join(parts, " "); got != want {
			t.Errorf("parsePath(%q) = %q, want %q", q, got, want)
		}
	}
	for _, bad := range []string{"a..b", "a.", "a[-1]", "a[1", "a[1]x", "a[]", ".."} {
		if _, err := parsePath(bad); err == nil {
			t.Errorf("parsePath(%q) accepted", bad)
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

// Each check says what it looked at and why it failed, in its detail; the
// JSON of an answer may sit in a fence with text around it.
func TestCheckDetails(t *testing.T) {
	files := map[string]string{"r.json": `{"sum": 42, "ok": false, "list": [1, 2]}`, "n.txt": "hello"}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fmt.Errorf("open %s: no such file", p)
	}
	for _, tc := range []struct {
		answer string
		judge  Judge
		ch     Check
		pass   bool
		detail string
	}{
		{"Paris", nil, Check{Type: "contains", Value: "Rome"}, false, `the answer does not contain "Rome"`},
		{"Paris", nil, Check{Type: "contains", Value: "x", Path: "missing.txt"}, false, "missing.txt: open missing.txt: no such file"},
		{"", nil, Check{Type: "regex", Value: "^h", Path: "n.txt"}, true, "n.txt matches ^h"},
		{"", nil, Check{Type: "regex", Value: "^x"}, false, "the answer does not match ^x"},
		{"", nil, Check{Type: "file_exists", Path: "n.txt", Contains: "bye"}, false, `n.txt exists but does not contain "bye"`},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$.sum", Equals: 43}, false, "r.json at $.sum is 42, want 43"},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$.ok", Equals: false}, true, "r.json has $.ok"},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$.list", Equals: []any{1, 2}}, true, "r.json has $.list"},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$.list.a"}, false, "r.json has nothing at $.list.a"},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$[0]"}, false, "r.json has nothing at $[0]"},
		{"", nil, Check{Type: "json_path", Path: "r.json", Query: "$", Equals: map[string]any{"sum": 42, "ok": false, "list": []any{1, 2}}}, true, "r.json has $"},
		{"Here it is:\n```\n{\"a\": [{\"b\": \"c\"}]}\n```\nAnything else?", nil, Check{Type: "json_path", Query: "a[0].b", Equals: "c"}, true, "the answer has a[0].b"},
		{"Result: {\"a\": 1}", nil, Check{Type: "json_path", Query: "a"}, false, "the answer is not JSON"},
		{"x", nil, Check{Type: "judge", Rubric: "r"}, false, "no judge model is configured"},
		{"x", func(context.Context, string, string, string, string) (bool, string, error) {
			return false, "", errors.New("model down")
		},
			Check{Type: "judge", Rubric: "r"}, false, "judge: model down"},
		{"x", func(context.Context, string, string, string, string) (bool, string, error) {
			return true, "PASS: clear", nil
		},
			Check{Type: "judge", Rubric: "r"}, true, "PASS: clear"},
	} {
		g := &grader{answer: tc.answer, readFile: read, judge: tc.judge}
		got := g.run(t.Context(), tc.ch)
		if got.Passed != tc.pass || !strings.HasPrefix(got.Detail, tc.detail) || got.Type != tc.ch.Type {
			t.Errorf("%+v on %q: %+v, want passed=%v with detail %q", tc.ch, tc.answer, got, tc.pass, tc.detail)
		}
	}
}
