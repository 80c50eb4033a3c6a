package builtin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func ip(n int) *int           { return &n }
func sp(s string) *string     { return &s }
func lines(s string) []string { l, _ := splitLines(s); return l }

func TestApplyEdits(t *testing.T) {
	orig := lines("1\n2\n3\n4\n5\n")
	tests := []struct {
		name  string
		edits []edit
		want  string // joined with "\n"; "" with wantErr
		err   string
	}{
		{"replace one", []edit{{Action: "replace", Line: ip(2), Content: sp("two")}}, "1 two 3 4 5", ""},
		{"replace range with more", []edit{{Action: "replace", Line: ip(2), EndLine: ip(3), Content: sp("a\nb\nc\n")}}, "1 a b c 4 5", ""},
		{"replace with nothing", []edit{{Action: "replace", Line: ip(1), EndLine: ip(5), Content: sp("")}}, "", ""},
		{"delete", []edit{{Action: "delete", Line: ip(3)}}, "1 2 4 5", ""},
		{"delete range", []edit{{Action: "delete", Line: ip(1), EndLine: ip(4)}}, "5", ""},
		{"insert before first", []edit{{Action: "insert_before", Line: ip(1), Content: sp("0")}}, "0 1 2 3 4 5", ""},
		{"insert after last", []edit{{Action: "insert_after", Line: ip(5), Content: sp("6")}}, "1 2 3 4 5 6", ""},
		{"append via before n+1", []edit{{Action: "insert_before", Line: ip(6), Content: sp("6")}}, "1 2 3 4 5 6", ""},
		{"prepend via after 0", []edit{{Action: "insert_after", Line: ip(0), Content: sp("0")}}, "0 1 2 3 4 5", ""},
		{"empty line insert", []edit{{Action: "insert_after", Line: ip(1), Content: sp("\n")}}, "1  2 3 4 5", ""},
		{"original numbering", []edit{
			{Action: "delete", Line: ip(1)},
			{Action: "replace", Line: ip(4), Content: sp("four")},
			{Action: "insert_after", Line: ip(2), Content: sp("x\ny")},
		}, "2 x y 3 four 5", ""},
		{"inserts at one gap keep order", []edit{
			{Action: "insert_after", Line: ip(1), Content: sp("a")},
			{Action: "insert_before", Line: ip(2), Content: sp("b")},
		}, "1 a b 2 3 4 5", ""},
		{"insert around a range", []edit{
			{Action: "replace", Line: ip(2), EndLine: ip(3), Content: sp("R")},
			{Action: "insert_before", Line: ip(2), Content: sp("B")},
			{Action: "insert_after", Line: ip(3), Content: sp("A")},
		}, "1 B R A 4 5", ""},
		{"adjacent ranges", []edit{
			{Action: "delete", Line: ip(1), EndLine: ip(2)},
			{Action: "replace", Line: ip(3), Content: sp("c")},
		}, "c 4 5", ""},
		{"overlap", []edit{
			{Action: "delete", Line: ip(1), EndLine: ip(3)},
			{Action: "replace", Line: ip(3), Content: sp("c")},
		}, "", "edits 1 and 2 overlap"},
		{"insert inside range", []edit{
			{Action: "delete", Line: ip(2), EndLine: ip(4)},
			{Action: "insert_after", Line: ip(2), Content: sp("x")},
		}, "", "inserts inside lines 2-4"},
		{"line past end", []edit{{Action: "replace", Line: ip(6), Content: sp("x")}}, "", "not within 1-5"},
		{"end before line", []edit{{Action: "delete", Line: ip(3), EndLine: ip(2)}}, "", "not within"},
		{"line zero replace", []edit{{Action: "replace", Line: ip(0), Content: sp("x")}}, "", "not within"},
		{"insert past end", []edit{{Action: "insert_after", Line: ip(6), Content: sp("x")}}, "", "not within the file"},
		{"missing line", []edit{{Action: "delete"}}, "", "line is required"},
		{"missing content", []edit{{Action: "replace", Line: ip(1)}}, "", "content is required"},
		{"missing insert content", []edit{{Action: "insert_before", Line: ip(1)}}, "", "content is required"},
		{"unknown action", []edit{{Action: "append", Line: ip(1)}}, "", `unknown action "append"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyEdits(slices.Clone(orig), tt.edits)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("applyEdits = %v, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("applyEdits = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestEditFileTool(t *testing.T) {
	s, _, dir, outside := escapeFixture(t)
	writeTree(t, dir, map[string]string{"f.txt": "a\nb\nc\n", "crlf.txt": "a\r\nb\r\n", "noeol.txt": "a\nb", "empty.txt": ""})
	edits := []map[string]any{{"action": "replace", "line": 2, "content": "B"}, {"action": "insert_after", "line": 3, "content": "d"}}
	res := callTool(t, s, "edit_file", map[string]any{"path": "f.txt", "edits": edits})
	wantOK(t, res, "applied 2 edit(s) to f.txt; it now has 4 lines (was 3)")
	if got := readFile(t, filepath.Join(dir, "f.txt")); got != "a\nB\nc\nd\n" {
		t.Errorf("f.txt = %q", got)
	}
	wantOK(t, callTool(t, s, "编辑文件", map[string]any{"path": "crlf.txt", "edits": []map[string]any{{"action": "insert_before", "line": 2, "content": "x"}}}))
	if got := readFile(t, filepath.Join(dir, "crlf.txt")); got != "a\r\nx\r\nb\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	wantOK(t, callTool(t, s, "edit_file", map[string]any{"path": "noeol.txt", "edits": []map[string]any{{"action": "delete", "line": 1}}}))
	if got := readFile(t, filepath.Join(dir, "noeol.txt")); got != "b" {
		t.Errorf("noeol.txt = %q", got)
	}
	wantOK(t, callTool(t, s, "edit_file", map[string]any{"path": "empty.txt", "edits": []map[string]any{{"action": "insert_before", "line": 1, "content": "first"}}}))
	if got := readFile(t, filepath.Join(dir, "empty.txt")); got != "first\n" {
		t.Errorf("empty.txt = %q", got)
	}
	overlap := []map[string]any{{"action": "delete", "line": 1, "end_line": 2}, {"action": "delete", "line": 2}}
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "f.txt", "edits": overlap}), "overlap")
	if got := readFile(t, filepath.Join(dir, "f.txt")); got != "a\nB\nc\nd\n" {
		t.Errorf("failed edit changed the file: %q", got)
	}
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "f.txt", "edits": []any{}}), "edits is empty")
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "f.txt"}), `"edits" is required`)
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "f.txt", "edits": "delete 1"}), `field "edits"`)
	wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": "missing.txt", "edits": edits}), "no such file")
	for _, tc := range escapeCases {
		t.Run("escape "+tc.name, func(t *testing.T) {
			wantErr(t, callTool(t, s, "edit_file", map[string]any{"path": tc.path, "edits": []map[string]any{{"action": "insert_before", "line": 1, "content": "PWNED"}}}), tc.msg)
		})
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "TOP SECRET\n" {
		t.Errorf("outside file changed: %q", got)
	}
}

func TestReplaceText(t *testing.T) {
	s, _, dir, outside := escapeFixture(t)
	writeTree(t, dir, map[string]string{"f.txt": "foo bar foo\nbaz\n", "crlf.txt": "one\r\ntwo\r\n", "bin": "a\x00b"})
	tests := []struct {
		name string
		args map[string]any
		ok   bool
		msg  string
		want string // f.txt afterwards
	}{
		{"unique", map[string]any{"path": "f.txt", "old_text": "baz", "new_text": "qux"}, true, "replaced 1 occurrence(s)", "foo bar foo\nqux\n"},
		{"ambiguous", map[string]any{"path": "f.txt", "old_text": "foo", "new_text": "x"}, false, "occurs 2 times", "foo bar foo\nqux\n"},
		{"expected mismatch", map[string]any{"path": "f.txt", "old_text": "foo", "new_text": "x", "expected_replacements": 3}, false, "expected 3", "foo bar foo\nqux\n"},
		{"not found", map[string]any{"path": "f.txt", "old_text": "nope", "new_text": "x"}, false, "not found", "foo bar foo\nqux\n"},
		{"whitespace matters", map[string]any{"path": "f.txt", "old_text": "foo  bar", "new_text": "x"}, false, "not found", "foo bar foo\nqux\n"},
		{"expected ok", map[string]any{"path": "f.txt", "old_text": "foo", "new_text": "F", "expected_replacements": 2}, true, "replaced 2", "F bar F\nqux\n"},
		{"replace all", map[string]any{"path": "f.txt", "old_text": "F", "new_text": "", "replace_all": true}, true, "replaced 2", " bar \nqux\n"},
		{"empty old", map[string]any{"path": "f.txt", "old_text": "", "new_text": "x"}, false, "old_text is empty", " bar \nqux\n"},
		{"missing new", map[string]any{"path": "f.txt", "old_text": "bar"}, false, `"new_text" is required`, " bar \nqux\n"},
		{"binary", map[string]any{"path": "bin", "old_text": "a", "new_text": "b"}, false, "binary", " bar \nqux\n"},
	}
	for _, tt := range tests {
		res := callTool(t, s, "replace_text", tt.args)
		if tt.ok {
			wantOK(t, res, tt.msg)
		} else {
			wantErr(t, res, tt.msg)
		}
		if got := readFile(t, filepath.Join(dir, "f.txt")); got != tt.want {
			t.Errorf("%s: f.txt = %q, want %q", tt.name, got, tt.want)
		}
	}
	wantOK(t, callTool(t, s, "替换文本", map[string]any{"path": "crlf.txt", "old_text": "one\ntwo", "new_text": "1\n2"}))
	if got := readFile(t, filepath.Join(dir, "crlf.txt")); got != "1\r\n2\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}
	for _, tc := range escapeCases {
		t.Run("escape "+tc.name, func(t *testing.T) {
			wantErr(t, callTool(t, s, "replace_text", map[string]any{"path": tc.path, "old_text": "e", "new_text": "PWNED"}), tc.msg)
		})
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "TOP SECRET\n" {
		t.Errorf("outside file changed: %q", got)
	}
}
