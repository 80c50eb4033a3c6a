package knowledge

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxPointChars is how long a knowledge point may be, in characters
// (runes), before it is split further.
const DefaultMaxPointChars = 1200

// Point is one knowledge point: a section of a document, or a part of one.
type Point struct {
	// Title is the section's heading; for text before the first heading
	// and for files without headings, the file's name without extension.
	Title string
	// HeadingPath are the headings from the top of the document down to
	// the section, the section's own last; empty for text before the
	// first heading and for files without headings.
	HeadingPath []string
	// Content is the section's text without its own heading line (the
	// headings of its subsections stay in it).
	Content string
	// Source is the file's path in the base.
	Source string
}

// Split cuts one file of a base into knowledge points. A Markdown file
// (.md) is split at its top-level headings (the smallest heading level it
// uses, so a file of "##" sections splits at those; a single heading over
// the whole file is its title, and the file splits at the level below,
// under the title's path); a section longer than
// maxChars is split at its next heading level, and so on down, each part
// keeping its heading path; text that is still too long, and a file without
// headings (any .txt), is split at paragraphs, then at sentences, then
// hard. maxChars <= 0 means [DefaultMaxPointChars]. Headings are ATX
// headings ("# Title") outside fenced code blocks; a leading YAML
// frontmatter block is dropped.
func Split(source, text string, maxChars int) []Point {
	if maxChars <= 0 {
		maxChars = DefaultMaxPointChars
	}
	text = strings.TrimPrefix(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\ufeff")
	stem := strings.TrimSuffix(path.Base(source), path.Ext(source))
	sp := splitter{source: source, stem: stem, max: maxChars}
	if !isMarkdown(source) {
		sp.emit(nil, stem, text)
		return sp.out
	}
	root := parseSections(dropFrontmatter(text))
	// The preamble, then each top-level section, whatever their length.
	// A heading alone at the top level with sections under it is the
	// document's title: the sections are the top level then, under it.
	sp.emit(nil, stem, root.body)
	top, parent := root.children, []string(nil)
	if len(top) == 1 && len(top[0].children) > 0 {
		title := top[0]
		parent = []string{title.title}
		sp.emit(parent, title.title, title.body)
		top = title.children
	}
	for _, c := range top {
		sp.section(c, parent)
	}
	return sp.out
}

func isMarkdown(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// section is a heading and what follows it up to the next heading of the
// same or a higher level.
type section struct {
	level    int
	title    string
	heading  string // the heading line as written
	body     string // text before the first subsection
	children []*section
}

// text is the section's body and its subsections, headings included.
func (s *section) text() string {
	var b strings.Builder
	b.WriteString(s.body)
	for _, c := range s.children {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(c.heading)
		if t := c.text(); t != "" {
			b.WriteString("\n")
			b.WriteString(t)
		}
	}
	return strings.TrimSpace(b.String())
}

type splitter struct {
	source, stem string
	max          int
	out          []Point
}

// section emits s as one point when it fits, else its body and then each
// subsection on its own.
func (sp *splitter) section(s *section, parent []string) {
	hp := append(append([]string(nil), parent...), s.title)
	if all := s.text(); utf8.RuneCountInString(all) <= sp.max || len(s.children) == 0 {
		sp.emit(hp, s.title, all)
		return
	}
	sp.emit(hp, s.title, s.body)
	for _, c := range s.children {
		sp.section(c, hp)
	}
}

// emit adds text as one point, or as several when it is too long.
func (sp *splitter) emit(hp []string, title, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	if title == "" {
		title = sp.stem
	}
	for _, part := range splitLong(text, sp.max) {
		sp.out = append(sp.out, Point{Title: title, HeadingPath: hp, Content: part, Source: sp.source})
	}
}

// parseSections builds the heading tree of a Markdown text; the root
// (level 0) holds the text before the first heading.
func parseSections(text string) *section {
	root := &section{}
	stack := []*section{root}
	var body []string
	flush := func() {
		top := stack[len(stack)-1]
		top.body = strings.TrimSpace(strings.Join(body, "\n"))
		body = body[:0]
	}
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(strings.TrimSpace(line), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), fence[:1])) == "":
				fence = ""
			}
		}
		level, title := 0, ""
		if fence == "" {
			level, title = atxHeading(line)
		}
		if level == 0 {
			body = append(body, line)
			continue
		}
		flush()
		for len(stack) > 1 && stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		s := &section{level: level, title: title, heading: strings.TrimSpace(line)}
		parent := stack[len(stack)-1]
		parent.children = append(parent.children, s)
		stack = append(stack, s)
	}
	flush()
	return root
}

// fenceOf returns the fence a line opens or closes (``` or ~~~, at least
// three), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, c) {
			n := len(t) - len(strings.TrimLeft(t, c[:1]))
			return strings.Repeat(c[:1], n)
		}
	}
	return ""
}

// atxHeading parses "## Title ##" (up to three leading spaces, 1-6 '#',
// then a space or the end of the line); level 0 when line is no heading.
func atxHeading(line string) (int, string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, "#") {
		return 0, ""
	}
	n := len(t) - len(strings.TrimLeft(t, "#"))
	rest := t[n:]
	if n > 6 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return 0, ""
	}
	title := strings.TrimSpace(rest)
	if trimmed := strings.TrimRight(title, "#"); trimmed != title && (trimmed == "" || strings.HasSuffix(trimmed, " ")) {
		title = strings.TrimSpace(trimmed)
	}
	if title == "" {
		return 0, ""
	}
	return n, title
}

// dropFrontmatter removes a leading "---" YAML block.
func dropFrontmatter(text string) string {
	if !strings.HasPrefix(text, "---\n") {
		return text
	}
	if i := strings.Index(text[4:], "\n---"); i >= 0 {
		rest := text[4+i+4:]
		if rest == "" || rest[0] == '\n' {
			return rest
		}
	}
	return text
}

// splitLong cuts text into parts of at most max runes: at blank lines
// (paragraphs) where it can, inside a paragraph at sentence ends, else at
// max runes.
func splitLong(text string, max int) []string {
	if utf8.RuneCountInString(text) <= max {
		return []string{text}
	}
	var out []string
	var cur strings.Builder
	curLen := 0
	push := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
		curLen = 0
	}
	add := func(piece, sep string) {
		n := utf8.RuneCountInString(piece)
		if curLen > 0 && curLen+utf8.RuneCountInString(sep)+n > max {
			push()
		}
		if curLen > 0 {
			cur.WriteString(sep)
			curLen += utf8.RuneCountInString(sep)
		}
		cur.WriteString(piece)
		curLen += n
	}
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if utf8.RuneCountInString(para) <= max {
			add(para, "\n\n")
			continue
		}
		push()
		for _, sent := range sentences(para) {
			for _, piece := range hardCut(sent, max) {
				add(piece, "")
			}
		}
		push()
	}
	push()
	return out
}

// sentences splits after sentence-ending punctuation (Latin and CJK) and
// line breaks, keeping the punctuation and the space after it.
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i, r := range rs {
		end := false
		switch r {
		case '。', '！', '？', '；', '\n':
			end = true
		case '.', '!', '?', ';':
			end = i+1 == len(rs) || unicode.IsSpace(rs[i+1])
		}
		if end {
			j := i + 1
			for j < len(rs) && rs[j] == ' ' {
				j++
			}
			out = append(out, string(rs[start:j]))
			start = j
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// hardCut cuts s into pieces of at most max runes.
func hardCut(s string, max int) []string {
	rs := []rune(s)
	var out []string
	for len(rs) > max {
		out = append(out, string(rs[:max]))
		rs = rs[max:]
	}
	if len(rs) > 0 {
		out = append(out, string(rs))
	}
	return out
}
