package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeCase is one attempt to reach outside the workspace or a denied path.
type escapeCase struct {
	name, path, msg string
}

// escapeCases are the attempts every path-taking tool must refuse; the
// fixture is escapeFixture's.
var escapeCases = []escapeCase{
	{"dotdot", "../x", "escapes the workspace"},
	{"nested dotdot", "a/../../x", "escapes the workspace"},
	{"absolute", "/etc/passwd", "is absolute"},
	{"NUL", "a.txt\x00", "NUL"},
	{"symlink to /etc", "etc_link", "outside the workspace"},
	{"through symlink to /etc", "etc_link/passwd", "outside the workspace"},
	{"symlink to a file outside", "passwd_link", "outside the workspace"},
	{"symlinked dir outside", "out_dir", "outside the workspace"},
	{"through symlinked dir outside", "out_dir/secret.txt", "outside the workspace"},
	{"deny .env", ".env", "denied"},
	{"deny via symlink", "env_link", "denied"},
	{"deny **/*.pem", "keys/id.pem", "denied"},
	{"deny .git/**", ".git/config", "denied"},
	{"deny dir", "secrets/s.txt", "denied"},
	{"dangling symlink", "dangling", "points to nothing"},
}

func TestListFiles(t *testing.T) {
	s, _, dir, _ := escapeFixture(t)
	res := callTool(t, s, "list_files", `{}`)
	wantOK(t, res, "a.txt (6 B)\n", "sub/\n", "etc_link@\n", "out_dir@\n", "docs/\n")
	for _, hidden := range []string{".env\n", ".git", "secrets/", "id.pem", "b.txt", "secret.txt", "passwd\n"} {
		if strings.Contains(res.Content, hidden) {
			t.Errorf("list_files shows %q:\n%s", hidden, res.Content)
		}
	}

	res = callTool(t, s, "列出文件", map[string]any{"recursive": true})
	wantOK(t, res, "sub/b.txt (6 B)", "docs/readme.md", "keys/\n")
	for _, hidden := range []string{"id.pem", ".git", "secrets", "TOP SECRET", "secret.txt", "hosts"} {
		if strings.Contains(res.Content, hidden) {
			t.Errorf("recursive list_files shows %q:\n%s", hidden, res.Content)
		}
	}

	wantOK(t, callTool(t, s, "list_files", map[string]any{"path": "in_link"}), "sub/b.txt")
	wantOK(t, callTool(t, s, "list_files", map[string]any{"path": "sub"}), "sub/b.txt (6 B)")
	wantErr(t, callTool(t, s, "list_files", map[string]any{"path": "a.txt"}), "not a directory")
	wantErr(t, callTool(t, s, "list_files", map[string]any{"path": "nope"}), "no such file")

	writeTree(t, dir, map[string]string{"d1/d2/d3/f.txt": "x"})
	res = callTool(t, s, "list_files", map[string]any{"path": "d1", "max_depth": 2})
	wantOK(t, res, "d1/d2/\n", "d1/d2/d3/\n")
	if strings.Contains(res.Content, "f.txt") {
		t.Errorf("max_depth 2 went deeper:\n%s", res.Content)
	}
	res = callTool(t, s, "list_files", map[string]any{"limit": 2})
	wantOK(t, res, "[stopped at 2 entries")
	if n := strings.Count(res.Content, "\n"); n != 3 {
		t.Errorf("limit 2 gave %d lines:\n%s", n, res.Content)
	}
	wantErr(t, callTool(t, s, "list_files", map[string]any{"limit": "5"}), `field "limit"`)
	wantErr(t, callTool(t, s, "list_files", `{"path":`), "malformed JSON")

	for _, tc := range escapeCases {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, callTool(t, s, "list_files", map[string]any{"path": tc.path}), tc.msg)
		})
	}
}

func TestReadFile(t *testing.T) {
	s, _, dir, _ := escapeFixture(t)
	writeTree(t, dir, map[string]string{
		"lines.txt": "one\ntwo\nthree\nfour\n",
		"crlf.txt":  "a\r\nb\r\n",
		"empty.txt": "",
		"bin.dat":   "PK\x03\x04\x00\x00binary",
		"noeol.txt": "x\ny",
		"中文/说明.txt": "你好\n",
	})
	tests := []struct {
		name string
		args any
		ok   bool
		want []string
	}{
		{"whole", map[string]any{"path": "lines.txt"}, true, []string{"lines.txt: lines 1-4 of 4\n", "     1\tone\n", "     4\tfour\n"}},
		{"alias", map[string]any{"path": "a.txt"}, true, []string{"     1\talpha\n"}},
		{"range", map[string]any{"path": "lines.txt", "start_line": 2, "end_line": 3}, true, []string{"lines 2-3 of 4\n     2\ttwo\n     3\tthree\n"}},
		{"open end", map[string]any{"path": "lines.txt", "start_line": 4}, true, []string{"lines 4-4 of 4"}},
		{"end past eof", map[string]any{"path": "lines.txt", "end_line": 99}, true, []string{"lines 1-4 of 4"}},
		{"crlf", map[string]any{"path": "crlf.txt"}, true, []string{"     1\ta\n     2\tb\n"}},
		{"no final eol", map[string]any{"path": "noeol.txt"}, true, []string{"     2\ty\n"}},
		{"empty", map[string]any{"path": "empty.txt"}, true, []string{"empty file"}},
		{"unicode path", map[string]any{"path": "中文/说明.txt"}, true, []string{"你好"}},
		{"inside symlink", map[string]any{"path": "in_link/b.txt"}, true, []string{"bravo"}},
		{"start past eof", map[string]any{"path": "lines.txt", "start_line": 9}, false, []string{"past the end"}},
		{"end before start", map[string]any{"path": "lines.txt", "start_line": 3, "end_line": 2}, false, []string{"before start_line"}},
		{"zero start", map[string]any{"path": "lines.txt", "start_line": 0}, false, []string{"1 or more"}},
		{"binary", map[string]any{"path": "bin.dat"}, false, []string{"binary file"}},
		{"directory", map[string]any{"path": "sub"}, false, []string{"is a directory"}},
		{"missing", map[string]any{"path": "nope.txt"}, false, []string{"no such file"}},
		{"no path", map[string]any{}, false, []string{`"path" is required`}},
		{"wrong type", map[string]any{"path": "a.txt", "start_line": "2"}, false, []string{`field "start_line"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, s, "read_file", tt.args)
			if tt.ok {
				wantOK(t, res, tt.want...)
			} else {
				wantErr(t, res, tt.want...)
			}
		})
	}
	for _, tc := range escapeCases {
		t.Run("escape "+tc.name, func(t *testing.T) {
			res := callTool(t, s, "read_file", map[string]any{"path": tc.path})
			wantErr(t, res, tc.msg)
			for _, leak := range []string{"root:", "TOP SECRET", "TOKEN", "PEM", "[core]", "hidden"} {
				if strings.Contains(res.Content, leak) {
					t.Errorf("read_file(%q) leaked %q: %s", tc.path, leak, res.Content)
				}
			}
		})
	}
}

func TestReadFileCap(t *testing.T) {
	s := newTestSet(t, Options{MaxFileBytes: 100})
	dir := workspaceDir(t, s)
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	writeTree(t, dir, map[string]string{"big.txt": b.String(), "long.txt": strings.Repeat("x", 500) + "\nend\n"})
	res := callTool(t, s, "read_file", map[string]any{"path": "big.txt"})
	wantOK(t, res, "big.txt: lines 1-6 (file is 400 B; more lines follow)", "line 06", "[output capped at 100 B; continue with start_line=7]")
	if strings.Contains(res.Content, "line 07") {
		t.Errorf("cap exceeded:\n%s", res.Content)
	}
	wantOK(t, callTool(t, s, "read_file", map[string]any{"path": "big.txt", "start_line": 48}), "line 48", "line 50")
	res = callTool(t, s, "read_file", map[string]any{"path": "long.txt"})
	if res.IsError || len(res.Content) > 300 {
		t.Errorf("long line not capped: %d bytes, %v", len(res.Content), res.IsError)
	}
}

func TestWriteFile(t *testing.T) {
	s, _, dir, outside := escapeFixture(t)
	res := callTool(t, s, "write_file", map[string]any{"path": "new/deep/f.txt", "content": "hello\n"})
	wantOK(t, res, "created new/deep/f.txt (6 bytes)")
	if got := readFile(t, filepath.Join(dir, "new/deep/f.txt")); got != "hello\n" {
		t.Errorf("content %q", got)
	}
	res = callTool(t, s, "写入文件", map[string]any{"path": "a.txt", "content": ""})
	wantOK(t, res, "overwrote a.txt (0 bytes)")
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "" {
		t.Errorf("content %q", got)
	}
	// Through an inside symlink: the target changes, the link stays.
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "in_link/b.txt", "content": "B"}))
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "abs_in_link", "content": "BB"}))
	if got := readFile(t, filepath.Join(dir, "sub/b.txt")); got != "BB" {
		t.Errorf("sub/b.txt = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "abs_in_link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("abs_in_link is no longer a symlink: %v", err)
	}
	// No temporary files left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("leftover %s", e.Name())
		}
	}
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "sub", "content": "x"}), "is a directory")
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": ".", "content": "x"}), "workspace itself")
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "x.txt"}), `"content" is required`)
	wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "x.txt", "content": 5}), `field "content"`)

	small := newTestSet(t, Options{MaxFileBytes: 4})
	wantErr(t, callTool(t, small, "write_file", map[string]any{"path": "x", "content": "12345"}), "over the 4 B limit")

	for _, tc := range append(escapeCases, escapeCase{"new file through outside dir", "out_dir/new.txt", "outside"}) {
		t.Run("escape "+tc.name, func(t *testing.T) {
			wantErr(t, callTool(t, s, "write_file", map[string]any{"path": tc.path, "content": "PWNED"}), tc.msg)
		})
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "TOP SECRET\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, ".env")); got != "TOKEN=x\n" {
		t.Errorf("denied file changed: %q", got)
	}
}

func TestSearchContent(t *testing.T) {
	s, _, dir, outside := escapeFixture(t)
	writeTree(t, outside, map[string]string{"needle.txt": "needle outside\n"})
	writeTree(t, dir, map[string]string{
		"src/main.go":  "package main\n\nfunc main() { needle() }\n",
		"src/util.go":  "package main\n\nfunc Needle() {}\n",
		"notes.md":     "a needle in notes\n",
		"blob.bin":     "needle\x00binary",
		".env":         "needle=secret\n",
		"keys/k.pem":   "needle pem\n",
		"secrets/n.md": "needle hidden\n",
	})
	tests := []struct {
		name    string
		args    map[string]any
		want    []string
		notWant []string
	}{
		{"literal", map[string]any{"query": "needle"}, []string{"src/main.go:3: func main() { needle() }", "notes.md:1: a needle in notes", "[skipped 1 binary"},
			[]string{"Needle()", ".env", "k.pem", "secrets", "outside", "blob.bin:"}},
		{"ignore case", map[string]any{"query": "NEEDLE", "ignore_case": true}, []string{"src/util.go:3: func Needle() {}", "src/main.go:3"}, nil},
		{"regex", map[string]any{"query": `func \w+\(\)`, "regex": true}, []string{"src/main.go:3", "src/util.go:3"}, []string{"notes.md"}},
		{"literal is not regex", map[string]any{"query": "main()"}, []string{"src/main.go:3"}, []string{"src/util.go"}},
		{"glob name", map[string]any{"query": "needle", "glob": "*.md"}, []string{"notes.md:1"}, []string{"main.go"}},
		{"glob path", map[string]any{"query": "package", "glob": "src/**/*.go"}, []string{"src/main.go:1", "src/util.go:1"}, nil},
		{"path", map[string]any{"query": "package", "path": "src/util.go"}, []string{"src/util.go:1"}, []string{"main.go"}},
		{"through inside symlink", map[string]any{"query": "bravo", "path": "in_link"}, []string{"sub/b.txt:1: bravo"}, nil},
		{"max results", map[string]any{"query": "package", "max_results": 1}, []string{"[stopped at 1 matches"}, nil},
		{"none", map[string]any{"query": "zzz"}, []string{`no matches for "zzz"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, s, "search_content", tt.args)
			wantOK(t, res, tt.want...)
			for _, nw := range tt.notWant {
				if strings.Contains(res.Content, nw) {
					t.Errorf("result has %q:\n%s", nw, res.Content)
				}
			}
		})
	}
	wantErr(t, callTool(t, s, "搜索内容", map[string]any{"query": "(", "regex": true}), "not a valid regular expression")
	wantErr(t, callTool(t, s, "search_content", map[string]any{"query": ""}), "query is empty")
	wantErr(t, callTool(t, s, "search_content", map[string]any{"query": "x", "glob": "[z"}), "glob")
	wantErr(t, callTool(t, s, "search_content", map[string]any{"query": "x", "regex": "yes"}), `field "regex"`)

	// The root search never follows etc_link or out_dir.
	res := callTool(t, s, "search_content", map[string]any{"query": "root:"})
	wantOK(t, res, "no matches")
	for _, tc := range escapeCases {
		t.Run("escape "+tc.name, func(t *testing.T) {
			wantErr(t, callTool(t, s, "search_content", map[string]any{"query": "e", "path": tc.path}), tc.msg)
		})
	}
}

func TestSearchSkipsLargeFiles(t *testing.T) {
	s := newTestSet(t, Options{MaxFileBytes: 10})
	writeTree(t, workspaceDir(t, s), map[string]string{"big.txt": "needle needle needle", "small.txt": "needle"})
	wantOK(t, callTool(t, s, "search_content", map[string]any{"query": "needle"}), "small.txt:1: needle", "[skipped 1 ")
}
