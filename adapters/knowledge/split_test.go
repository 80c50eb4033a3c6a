package knowledge_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/adapters/knowledge"
)

// brief renders points as "title | path | content" for comparison.
func brief(ps []knowledge.Point) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Title + " | " + strings.Join(p.HeadingPath, " > ") + " | " + p.Content
	}
	return out
}

func TestSplitMarkdown(t *testing.T) {
	cases := []struct {
		name, file, text string
		max              int
		want             []string
	}{
		{
			name: "top-level headings, preamble, sub-headings kept inside a short section",
			file: "guide.md",
			text: "Intro text.\n\n# Install\n\nRun make.\n\n## On Linux\n\napt install.\n\n# Use\n\nRun wunder serve.\n",
			want: []string{
				"guide |  | Intro text.",
				"Install | Install | Run make.\n\n## On Linux\napt install.",
				"Use | Use | Run wunder serve.",
			},
		},
		{
			name: "a lone title: the file splits at the level below, under the title",
			file: "vpn.md",
			text: "# VPN\n\nAbout the VPN.\n\n## Install\n\nDownload it.\n\n## Connect\n\nPick a gateway.\n",
			want: []string{
				"VPN | VPN | About the VPN.",
				"Install | VPN > Install | Download it.",
				"Connect | VPN > Connect | Pick a gateway.",
			},
		},
		{
			name: "the smallest level used is the top level",
			file: "a.md",
			text: "## One\n\nfirst\n\n## Two\n\nsecond\n",
			want: []string{"One | One | first", "Two | Two | second"},
		},
		{
			name: "a long section splits at its sub-headings, keeping the path",
			file: "long.md",
			text: "# A\n\nshort body\n\n## B\n\n" + strings.Repeat("b", 30) + "\n\n## C\n\nsee\n\n# D\n\nd\n",
			max:  40,
			want: []string{
				"A | A | short body",
				"B | A > B | " + strings.Repeat("b", 30),
				"C | A > C | see",
				"D | D | d",
			},
		},
		{
			name: "no headings: one point titled after the file",
			file: "notes/faq.md",
			text: "Just text.\n\nMore text.",
			want: []string{"faq |  | Just text.\n\nMore text."},
		},
		{
			name: "headings inside fenced code are code; frontmatter is dropped; closing #s go",
			file: "code.md",
			text: "---\ntitle: x\n---\n# Shell ##\n\n```sh\n# not a heading\necho hi\n```\n\n#hashtag is text\n",
			want: []string{"Shell | Shell | ```sh\n# not a heading\necho hi\n```\n\n#hashtag is text"},
		},
		{
			name: "Chinese headings",
			file: "制度.md",
			text: "# 年假\n\n每年十五天。\n\n# 病假\n\n需要证明。\n",
			want: []string{"年假 | 年假 | 每年十五天。", "病假 | 病假 | 需要证明。"},
		},
		{
			name: "CRLF line ends and a BOM",
			file: "win.md",
			text: "\ufeff# Title\r\n\r\nbody\r\n",
			want: []string{"Title | Title | body"},
		},
		{
			name: "an empty section gives no point",
			file: "e.md",
			text: "# Empty\n\n# Full\n\ntext\n",
			want: []string{"Full | Full | text"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := brief(knowledge.Split(c.file, c.text, c.max))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
			for _, p := range knowledge.Split(c.file, c.text, c.max) {
				if p.Source != c.file {
					t.Errorf("source %q, want %q", p.Source, c.file)
				}
			}
		})
	}
}

// A file without headings (and any .txt) is one point, split by length
// when long: at paragraphs, then sentences (Latin and CJK), then hard; no
// part is longer than the limit and nothing is lost.
func TestSplitByLength(t *testing.T) {
	para := func(s string, n int) string { return strings.TrimSpace(strings.Repeat(s, n)) }
	cases := map[string]string{
		"paragraphs.txt": para("alpha beta. ", 8) + "\n\n" + para("gamma delta. ", 8) + "\n\n" + para("epsilon. ", 4),
		"sentences.txt":  para("One sentence here. ", 30),
		"chinese.txt":    para("这是一个句子。", 40),
		"hard.txt":       strings.Repeat("x", 500),
		"heading.md":     "# Big\n\n" + para("Words and more words. ", 40),
	}
	for file, text := range cases {
		t.Run(file, func(t *testing.T) {
			const max = 120
			ps := knowledge.Split(file, text, max)
			if len(ps) < 2 {
				t.Fatalf("%d points, want the text split", len(ps))
			}
			var all strings.Builder
			for _, p := range ps {
				if n := utf8.RuneCountInString(p.Content); n > max {
					t.Errorf("point of %d characters, over %d: %q", n, max, p.Content)
				}
				if p.Title != ps[0].Title || len(p.HeadingPath) != len(ps[0].HeadingPath) {
					t.Errorf("parts disagree on title or path: %+v vs %+v", p, ps[0])
				}
				all.WriteString(p.Content)
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			body := text
			if strings.HasSuffix(file, ".md") {
				body = strings.TrimPrefix(text, "# Big\n\n")
			}
			if squash(all.String()) != squash(body) {
				t.Errorf("text lost or changed in splitting")
			}
		})
	}
	if ps := knowledge.Split("plain.txt", "# not a heading in a text file\nbody", 0); len(ps) != 1 || ps[0].Title != "plain" || ps[0].HeadingPath != nil {
		t.Errorf(".txt: %+v, want one point titled plain with no heading path", ps)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("a.md", "# T\n\nbody\n## S\n```\n# x\n```\n")
	f.Add("b.txt", "这是。一个句子！long text. more")
	f.Fuzz(func(t *testing.T, name, text string) {
		for _, p := range knowledge.Split(name, text, 50) {
			if utf8.RuneCountInString(p.Content) > 50 {
				t.Fatalf("point over the limit: %q", p.Content)
			}
			if strings.TrimSpace(p.Content) == "" {
				t.Fatalf("empty point from %q", text)
			}
		}
	})
}
