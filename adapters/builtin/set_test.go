package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func TestDefaults(t *testing.T) {
	o := defaults(nil)
	if o.Root != DefaultRoot || o.CommandTimeout != DefaultCommandTimeout ||
		o.MaxCommandTimeout != DefaultMaxCommandTimeout || o.MaxOutputBytes != DefaultMaxOutputBytes ||
		o.MaxFileBytes != DefaultMaxFileBytes || o.Python != DefaultPython {
		t.Errorf("defaults(nil) = %+v", o)
	}
	if len(o.AllowCommands) != 0 || len(o.Enabled) != 0 {
		t.Errorf("defaults(nil) allows or enables something: %+v", o)
	}
	o = defaults(&Options{CommandTimeout: time.Hour})
	if o.MaxCommandTimeout != time.Hour {
		t.Errorf("MaxCommandTimeout %v below CommandTimeout", o.MaxCommandTimeout)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for name, opts := range map[string]Options{
		"bad glob":        {DenyGlobs: []string{"a/[b"}},
		"absolute glob":   {DenyGlobs: []string{"/etc/**"}},
		"unknown tool":    {Enabled: []string{"read_file", "rm_rf"}},
		"command path":    {AllowCommands: []string{"/bin/sh"}},
		"relative python": {Python: "bin/python3"},
	} {
		if _, err := New(&opts); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, want ErrInvalidArgument", name, err)
		}
	}
}

func TestToolSpecs(t *testing.T) {
	s := newTestSet(t, Options{})
	tools, err := s.Tools(context.Background(), testUser)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		alias    string
		readOnly bool
		required []string
	}{
		"list_files":      {"列出文件", true, nil},
		"read_file":       {"读取文件", true, []string{"path"}},
		"search_content":  {"搜索内容", true, []string{"query"}},
		"write_file":      {"写入文件", false, []string{"path", "content"}},
		"replace_text":    {"替换文本", false, []string{"path", "old_text", "new_text"}},
		"edit_file":       {"编辑文件", false, []string{"path", "edits"}},
		"execute_command": {"执行命令", false, []string{"command"}},
		"ptc":             {"programmatic_tool_call", false, []string{"content"}},
		"artifact":        {"附件", true, nil},
		"a2ui":            {"界面", true, []string{"messages"}},
	}
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		spec := tool.Spec()
		w, ok := want[spec.Name]
		if !ok {
			t.Errorf("unexpected tool %q", spec.Name)
			continue
		}
		if !slices.Contains(spec.Aliases, w.alias) {
			t.Errorf("%s: aliases %v lack %q", spec.Name, spec.Aliases, w.alias)
		}
		if spec.ReadOnly != w.readOnly || spec.Source != "builtin" || spec.AlwaysOn {
			t.Errorf("%s: spec %+v", spec.Name, spec)
		}
		if len(spec.Description) < 40 {
			t.Errorf("%s: description too short: %q", spec.Name, spec.Description)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
			t.Errorf("%s: schema is not JSON: %v", spec.Name, err)
			continue
		}
		if schema.Type != "object" || !slices.Equal(schema.Required, w.required) {
			t.Errorf("%s: schema type %q required %v, want object %v", spec.Name, schema.Type, schema.Required, w.required)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", spec.Name, r)
			}
		}
	}
}

func TestEnabled(t *testing.T) {
	s := newTestSet(t, Options{Enabled: []string{"读取文件", "list_files"}})
	tools, err := s.Tools(context.Background(), testUser)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Spec().Name)
	}
	if want := []string{"list_files", "read_file"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if s.Name() != "builtin" {
		t.Errorf("Name() = %q", s.Name())
	}
}

func TestSummary(t *testing.T) {
	ctx := context.Background()
	s := newTestSet(t, Options{DenyGlobs: []string{".env"}})
	got, err := s.Summary(ctx, testUser)
	if err != nil || got != "The workspace is empty." {
		t.Fatalf("Summary of a new user = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(s.opts.Root, testUser)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Summary created the workspace: %v", err)
	}
	dir := workspaceDir(t, s)
	if got, _ := s.Summary(ctx, testUser); got != "The workspace is empty." {
		t.Errorf("Summary of an empty workspace = %q", got)
	}
	writeTree(t, dir, map[string]string{"a.txt": "hello world!", "src/main.go": "package main", ".env": "SECRET=1"})
	symlink(t, "a.txt", filepath.Join(dir, "link"))
	got, err = s.Summary(ctx, testUser)
	if err != nil {
		t.Fatal(err)
	}
	if want := "3 entries: a.txt (12 B), link@, src/"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	for i := range 30 {
		writeTree(t, dir, map[string]string{filepath.Join("many", "f"+string(rune('a'+i%26))+string(rune('a'+i/26))): "x"})
		writeTree(t, dir, map[string]string{"f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".txt": "x"})
	}
	got, _ = s.Summary(ctx, testUser)
	if !strings.HasPrefix(got, "34 entries: ") || !strings.HasSuffix(got, ", ... and 14 more") {
		t.Errorf("capped Summary = %q", got)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Line  *int   `json:"line"`
		Flag  bool   `json:"flag"`
		Edits []edit `json:"edits"`
	}
	tests := []struct {
		raw  string
		want string // error substring; "" means success
	}{
		{`{"path":"a","extra":1}`, ""},
		{`"{\"path\":\"a\"}"`, ""},
		{``, `"path" is required`},
		{`null`, `"path" is required`},
		{`{"path":null}`, `"path" is required`},
		{`{"path":"a","line":"3"}`, `field "line": want an integer, got JSON string`},
		{`{"path":"a","line":1.5}`, `field "line": want an integer`},
		{`{"path":7}`, `field "path": want a string, got JSON number`},
		{`{"path":"a","flag":"yes"}`, `field "flag": want a boolean`},
		{`{"path":"a","edits":{}}`, `field "edits": want an array`},
		{`{"path":"a","edits":[{"line":"x"}]}`, `field "edits.line": want an integer`},
		{`{"path":`, `malformed JSON`},
		{`[1,2]`, `want a JSON object`},
	}
	for _, tt := range tests {
		var a args
		err := decodeArgs(json.RawMessage(tt.raw), &a, "path")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("decodeArgs(%s): %v", tt.raw, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("decodeArgs(%s) = %v, want %q", tt.raw, err, tt.want)
		}
	}
}

// A workspace's summary is kept while its listing and its files' sizes are
// unchanged, and read again when either changes or changed too recently.
func TestSummaryKept(t *testing.T) {
	ctx := context.Background()
	s := newTestSet(t, Options{})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{"a.txt": "hello world!", "src/main.go": "package main"})
	settle := func() time.Time { // the listing last changed an hour ago
		t.Helper()
		old := time.Now().Add(-time.Hour).Truncate(time.Second)
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
		return old
	}
	want := func(what, text string, kept bool) {
		t.Helper()
		got, err := s.Summary(ctx, testUser)
		if err != nil || got != text {
			t.Fatalf("%s: Summary = %q, %v; want %q", what, got, err, text)
		}
		s.summaries.mu.Lock()
		_, ok := s.summaries.m[dir]
		s.summaries.mu.Unlock()
		if ok != kept {
			t.Fatalf("%s: summary kept = %v, want %v", what, ok, kept)
		}
	}
	want("a listing changed just now", "2 entries: a.txt (12 B), src/", false)
	old := settle()
	want("a settled listing", "2 entries: a.txt (12 B), src/", true)

	// The kept summary is what is answered: a listing whose time is set
	// back by hand is taken at its word (the one way to fool it).
	writeTree(t, dir, map[string]string{"hidden.txt": "x"})
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
	want("a listing with its time set back", "2 entries: a.txt (12 B), src/", true)
	if err := os.Remove(filepath.Join(dir, "hidden.txt")); err != nil {
		t.Fatal(err)
	}
	settle()

	// A named file's new size is seen: writing a file's content does not
	// change its directory's time.
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	want("a file grown", "2 entries: a.txt (2.0 KiB), src/", true)
	// A new entry changes the listing's time: read again, and not kept
	// while the change is recent (two changes can share a time).
	writeTree(t, dir, map[string]string{"b.txt": "b"})
	want("an entry added", "3 entries: a.txt (2.0 KiB), b.txt (1 B), src/", false)
	writeTree(t, dir, map[string]string{"c.txt": "c"})
	want("another, within the same second", "4 entries: a.txt (2.0 KiB), b.txt (1 B), c.txt (1 B), src/", false)
	// A file that becomes a directory of the same name.
	settle()
	want("settled again", "4 entries: a.txt (2.0 KiB), b.txt (1 B), c.txt (1 B), src/", true)
	if err := os.Remove(filepath.Join(dir, "c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "c.txt"), 0o700); err != nil {
		t.Fatal(err)
	}
	want("a file replaced by a directory", "4 entries: a.txt (2.0 KiB), b.txt (1 B), c.txt/, src/", false)
}

func TestSummariesBounded(t *testing.T) {
	var c summaries
	old := time.Now().Add(-time.Hour)
	for i := range maxSummaries + 10 {
		c.put(fmt.Sprintf("/ws/u%d", i), &summary{dirTime: old, text: "x"})
	}
	if len(c.m) != maxSummaries {
		t.Fatalf("%d summaries kept; want at most %d", len(c.m), maxSummaries)
	}
}
