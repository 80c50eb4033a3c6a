package builtin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// The workspace API's search ([Set.Search]): name and content matches,
// the glob and regex options, what is skipped, and its bounds.

func searchFixture(t *testing.T) *Set {
	t.Helper()
	s := newTestSet(t, Options{DenyGlobs: testDeny, MaxFileBytes: 1 << 10})
	dir := workspaceDir(t, s)
	writeTree(t, dir, map[string]string{
		"main.go":          "package main\n\nfunc Needle() {}\n",
		"src/util.go":      "// needle in a comment\nvar x = 1\nvar NEEDLE = 2\n",
		"src/util_test.go": "needle\n",
		"src/notes.txt":    "a needle\r\nno match\r\n",
		"needle_dir/a.txt": "nothing here\n",
		"bin.dat":          "needle\x00binary",
		"huge.txt":         strings.Repeat("needle\n", 200), // 1400 bytes: over MaxFileBytes
		".env":             "needle=secret\n",
		"secrets/n.txt":    "needle\n",
	})
	symlink(t, "src/util.go", filepath.Join(dir, "link.go"))
	return s
}

func matchKeys(ms []ContentMatch) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s:%d", m.Path, m.Line)
	}
	slices.Sort(out)
	return out
}

func TestSetSearchContent(t *testing.T) {
	s := searchFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		o       SearchOptions
		want    []string
		skipped int
	}{
		{"case-sensitive literal", SearchOptions{Query: "needle"},
			[]string{"src/notes.txt:1", "src/util.go:1", "src/util_test.go:1"}, 2},
		{"ignore case", SearchOptions{Query: "needle", IgnoreCase: true},
			[]string{"main.go:3", "src/notes.txt:1", "src/util.go:1", "src/util.go:3", "src/util_test.go:1"}, 2},
		{"regex", SearchOptions{Query: `^var [A-Z]+ =`, Regex: true},
			[]string{"src/util.go:3"}, 2},
		// Without regex, the query's metacharacters are literal.
		{"literal metacharacters", SearchOptions{Query: "Needle()"},
			[]string{"main.go:3"}, 2},
		{"glob on the name", SearchOptions{Query: "needle", IgnoreCase: true, Glob: "*_test.go"},
			[]string{"src/util_test.go:1"}, 0},
		{"glob on the path", SearchOptions{Query: "needle", IgnoreCase: true, Glob: "src/*.go"},
			[]string{"src/util.go:1", "src/util.go:3", "src/util_test.go:1"}, 0},
		{"under a path", SearchOptions{Query: "needle", Path: "src"},
			[]string{"src/notes.txt:1", "src/util.go:1", "src/util_test.go:1"}, 0},
		{"a single file", SearchOptions{Query: "var", Path: "src/util.go"},
			[]string{"src/util.go:2", "src/util.go:3"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Content, o.MaxResults = true, 100
			res, err := s.Search(ctx, testUser, o)
			if err != nil {
				t.Fatal(err)
			}
			if got := matchKeys(res.Matches); !slices.Equal(got, tc.want) {
				t.Errorf("matches = %q; want %q", got, tc.want)
			}
			// bin.dat is binary and huge.txt over the read limit; .env,
			// secrets/ and the symlink are never opened.
			if res.SkippedFiles != tc.skipped {
				t.Errorf("SkippedFiles = %d; want %d", res.SkippedFiles, tc.skipped)
			}
			if res.Truncated || len(res.Names) != 0 {
				t.Errorf("Truncated %v, names %v; want neither", res.Truncated, res.Names)
			}
		})
	}
	res, err := s.Search(ctx, testUser, SearchOptions{Query: "a needle", Content: true, MaxResults: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || res.Matches[0].Text != "a needle" {
		t.Errorf("CRLF line = %+v; want its text without the \\r", res.Matches)
	}
}

func TestSetSearchNames(t *testing.T) {
	s := searchFixture(t)
	ctx := context.Background()
	res, err := s.Search(ctx, testUser, SearchOptions{Query: "needle", Files: true, Dirs: true, MaxResults: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Names {
		got = append(got, e.Path+":"+e.Type)
	}
	if want := []string{"needle_dir:dir"}; !slices.Equal(got, want) {
		t.Errorf("names = %q; want %q (denied paths never match)", got, want)
	}
	res, err = s.Search(ctx, testUser, SearchOptions{Query: `\.go$`, Regex: true, Files: true, MaxResults: 10})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, e := range res.Names {
		got = append(got, e.Path+":"+e.Type)
	}
	slices.Sort(got)
	// The symlink is found by name (as a symlink), not followed.
	if want := []string{"link.go:symlink", "main.go:file", "src/util.go:file", "src/util_test.go:file"}; !slices.Equal(got, want) {
		t.Errorf(".go names = %q; want %q", got, want)
	}
	// Names and content in one call, bounded each by MaxResults.
	res, err = s.Search(ctx, testUser, SearchOptions{Query: "go", Files: true, Content: true, IgnoreCase: true, MaxResults: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Names) != 2 || !res.Truncated {
		t.Errorf("names = %d, truncated %v; want 2 and truncated", len(res.Names), res.Truncated)
	}
}

func TestSetSearchBounds(t *testing.T) {
	s := searchFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		o   SearchOptions
		msg string
	}{
		{SearchOptions{Query: "", MaxResults: 1, Content: true}, "query is empty"},
		{SearchOptions{Query: "x", MaxResults: 0, Content: true}, "max_results must be between 1 and 1000"},
		{SearchOptions{Query: "x", MaxResults: maxSearchResults + 1, Content: true}, "max_results must be between 1 and 1000"},
		{SearchOptions{Query: "(", Regex: true, MaxResults: 1, Content: true}, "not a valid regular expression"},
		{SearchOptions{Query: "x", Glob: "[", MaxResults: 1, Content: true}, `glob "["`},
	} {
		_, err := s.Search(ctx, testUser, tc.o)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Search(%+v) = %v; want ErrInvalidArgument containing %q", tc.o, err, tc.msg)
		}
	}
	if _, err := s.Search(ctx, testUser, SearchOptions{Query: "x", Path: "gone", MaxResults: 1, Content: true}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("Search under a missing path = %v; want ErrNotFound", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Search(cctx, testUser, SearchOptions{Query: "x", MaxResults: 1, Files: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search on a cancelled context = %v; want context.Canceled", err)
	}
	// One file with more matching lines than MaxResults stops at the bound.
	writeTree(t, workspaceDir(t, s), map[string]string{"many.txt": strings.Repeat("hit\n", 50)})
	res, err := s.Search(ctx, testUser, SearchOptions{Query: "hit", Path: "many.txt", MaxResults: 7, Content: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 7 || !res.Truncated || res.Matches[6].Line != 7 {
		t.Errorf("matches = %d (last %+v), truncated %v; want the first 7 and truncated", len(res.Matches), res.Matches[len(res.Matches)-1], res.Truncated)
	}
}

func TestClipLine(t *testing.T) {
	long := strings.Repeat("ä", maxMatchLineChars+5)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short", "abc", "abc"},
		{"carriage return dropped", "abc\r", "abc"},
		{"exactly the bound", strings.Repeat("x", maxMatchLineChars), strings.Repeat("x", maxMatchLineChars)},
		{"one over", strings.Repeat("x", maxMatchLineChars+1), strings.Repeat("x", maxMatchLineChars) + " ..."},
		{"multibyte runes counted as one", long, strings.Repeat("ä", maxMatchLineChars) + " ..."},
	} {
		got := clipLine([]byte(tc.in))
		if got != tc.want {
			t.Errorf("%s: clipLine = %q (%d runes); want %q", tc.name, got, utf8.RuneCountInString(got), tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: clipLine cut a rune: %q", tc.name, got)
		}
	}
}
