package doc2md_test

import (
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
)

// HTML read as a stream, with the end tags a page may leave out implied
// as a browser implies them.
func TestHTMLStream(t *testing.T) {
	t.Parallel()
	c := doc2md.New(nil)
	for _, tc := range []struct{ name, html, want string }{
		{"implied ends", `<p>one<p>two<ul><li>a<li>b</ul>`, "one\n\ntwo\n\n- a\n- b"},
		{"nested lists", `<ol><li>first<ul><li>inner</ul><li>second</ol>`, "1. first\n  - inner\n2. second"},
		{"inline", `<p>Some <b>bold</b>, <em>soft</em> and <code>x &lt; y</code> <a href="/p">link</a><img alt="cat"></p>`,
			"Some **bold**, *soft* and `x < y` [link](/p)[image: cat]"},
		{"pre", "<pre>a  b\n  c</pre><p>after", "```\na  b\n  c\n```\n\nafter"},
		{"skipped", `<head><title>T</title><style>p{}</style></head><script>alert(1)</script><p>body<svg><text>no</text></svg>`, "body"},
		{"javascript link", `<a href="javascript:alert(1)">click</a>`, "click"},
		{"implied cells", `<table><tr><th>h1<th>h2<tr><td>a<td>b|c</table>after`, "| h1 | h2 |\n| --- | --- |\n| a | b\\|c |\n\nafter"},
		{"nested table", `<table><tr><td>out<table><tr><td>in</table></td></tr></table>`, "| out \\| in \\| \\| --- \\| |\n| --- |"},
		{"stray end tags", `<div><table><tr><td>a</div>b</td></tr></table></div>c`, "| ab |\n| --- |\n\nc"},
		{"headings", "<h1>One</h1>text<h3>Three <i>it</i></h3>", "# One\n\ntext\n\n### Three *it*"},
		{"br", "line<br>next", "line\nnext"},
		{"skipped inside skipped", "<svg><svg></svg>hidden</svg>shown<noscript><style>x</style>no</noscript>", "shown"},
	} {
		md := convert(t, c, tc.name+".html", []byte(tc.html))
		if md != tc.want {
			t.Errorf("%s: Markdown %q; want %q", tc.name, md, tc.want)
		}
	}
}

// A block inside a table cell (a heading, preformatted text, a rule)
// keeps its words apart from the cell's other text: the cell is one
// line, but "T" and "body" stay two words.
func TestHTMLBlocksInCells(t *testing.T) {
	t.Parallel()
	c := doc2md.New(nil)
	for _, tc := range []struct{ name, html, want string }{
		{"heading", `<table><tr><td>before<h2>T</h2>body</td></tr></table>`, "| before T body |\n| --- |"},
		{"pre", `<table><tr><td>x<pre>code</pre>after</td></tr></table>`, "| x code after |\n| --- |"},
		{"rule", `<table><tr><td>a<hr>b</td></tr></table>`, "| a --- b |\n| --- |"},
		{"paragraphs and lists", `<table><tr><td>a<p>b</p>c</td><td><ul><li>x<li>y</ul></td></tr></table>`, "| a b c | - x - y |\n| --- | --- |"},
		{"table after a list", `<ul><li>x</ul>after<table><tr><td>1</table>`, "- x\n\nafter\n\n| 1 |\n| --- |"},
		{"entities and rules", `<p>x&amp;y &lt;z&gt;&nbsp;q</p><hr><ol><li>a<li>b</ol><ol><li>c</ol>`, "x&y <z> q\n\n---\n\n1. a\n2. b\n\n1. c"},
	} {
		if md := convert(t, c, tc.name+".html", []byte(tc.html)); md != tc.want {
			t.Errorf("%s: Markdown %q; want %q", tc.name, md, tc.want)
		}
	}
}
