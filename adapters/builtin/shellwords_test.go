package builtin

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{in: "ls", want: []string{"ls"}},
		{in: "  go   test  ./...  ", want: []string{"go", "test", "./..."}},
		{in: `echo 'a b' "c d"`, want: []string{"echo", "a b", "c d"}},
		{in: `echo 'it''s'`, want: []string{"echo", "its"}},
		{in: `echo "it's" 'say "hi"'`, want: []string{"echo", "it's", `say "hi"`}},
		{in: `echo a\ b \"q\"`, want: []string{"echo", "a b", `"q"`}},
		{in: `echo "a\"b" "c\\d" "e\nf"`, want: []string{"echo", `a"b`, `c\d`, `e\nf`}},
		{in: `echo '' ""`, want: []string{"echo", "", ""}},
		{in: "echo a\\\nb", want: []string{"echo", "ab"}},
		{in: `python3 -c 'print(1); import sys'`, want: []string{"python3", "-c", "print(1); import sys"}},
		{in: `grep 'a|b' "x > y" '$HOME' '*.go'`, want: []string{"grep", "a|b", "x > y", "$HOME", "*.go"}},
		{in: `grep "foo$" "cost: $"`, want: []string{"grep", "foo$", "cost: $"}},
		{in: `find . -name x -exec ls {} \;`, want: []string{"find", ".", "-name", "x", "-exec", "ls", "{}", ";"}},
		{in: `echo \*.go a~b c#d`, want: []string{"echo", "*.go", "a~b", "c#d"}},
		{in: "echo 你好", want: []string{"echo", "你好"}},

		{in: "", err: "empty"},
		{in: "   ", err: "empty"},
		{in: "ls | wc", err: "unquoted |"},
		{in: "ls > out", err: "unquoted >"},
		{in: "cat < in", err: "unquoted <"},
		{in: "a; b", err: "unquoted ;"},
		{in: "a && b", err: "unquoted &"},
		{in: "sleep 9 &", err: "unquoted &"},
		{in: "(ls)", err: "unquoted ("},
		{in: "echo $HOME", err: "unquoted $"},
		{in: "echo $(id)", err: "unquoted $"},
		{in: "echo `id`", err: "unquoted `"},
		{in: `echo "$(id)"`, err: "expansion"},
		{in: `echo "${HOME}"`, err: "expansion"},
		{in: `echo "$HOME"`, err: "expansion"},
		{in: "echo \"`id`\"", err: "command substitution"},
		{in: "ls *.go", err: "unquoted *"},
		{in: "ls a?", err: "unquoted ?"},
		{in: "ls [ab]", err: "unquoted ["},
		{in: "echo {a,b}", err: "brace expansion"},
		{in: "ls ~/x", err: "unquoted ~"},
		{in: "ls # comment", err: "unquoted #"},
		{in: "ls\nrm x", err: "newline"},
		{in: `echo 'open`, err: "unterminated single quote"},
		{in: `echo "open`, err: "unterminated double quote"},
		{in: `echo \`, err: "lone backslash"},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("splitCommand(%q) = %q, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzSplitCommand checks that the parser never panics and that an accepted
// command has no unquoted shell operator left in a plain word.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{"ls -la", `echo "a b" 'c'`, "a|b", `"\`, `'`, "x\\\n", "{}", `"$"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		words, err := splitCommand(in)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatalf("splitCommand(%q) accepted no words", in)
		}
		if !strings.ContainsAny(in, `'"\`) && strings.ContainsAny(in, "|&;<>()$`*?[\n") {
			t.Fatalf("splitCommand(%q) = %q: an operator was accepted unquoted", in, words)
		}
	})
}
