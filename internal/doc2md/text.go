package doc2md

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// csvToMarkdown renders a CSV (or tab-separated) file as a Markdown table,
// its first row the header.
func csvToMarkdown(name string, data []byte) (string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if first, _, _ := bytes.Cut(data, []byte("\n")); bytes.Count(first, []byte("\t")) > bytes.Count(first, []byte(",")) {
		r.Comma = '\t'
	}
	var rows [][]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", errorf(name, Unreadable, "malformed CSV: %v", err)
		}
		rows = append(rows, rec)
	}
	return markdownTable(rows), nil
}

// htmlToMarkdown walks an HTML document: headings, paragraphs, lists,
// links, emphasis, code and tables become Markdown; scripts, styles and
// the head are left out.
func htmlToMarkdown(name string, data []byte) (string, error) {
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return "", errorf(name, Unreadable, "malformed HTML: %v", err)
	}
	var w htmlWriter
	w.block(doc)
	return collapseBlankLines(w.sb.String()), nil
}

type htmlWriter struct {
	sb   strings.Builder
	list int
}

// block writes n's children as blocks.
func (w *htmlWriter) block(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *htmlWriter) node(n *html.Node) {
	if w.sb.Len() > maxOutputBytes {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.sb.WriteString(collapseSpace(n.Data))
		return
	case html.ElementNode:
	default:
		w.block(n)
		return
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Head, atom.Noscript, atom.Template, atom.Svg:
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		level := int(n.Data[1] - '0')
		w.sb.WriteString("\n\n" + strings.Repeat("#", level) + " " + strings.TrimSpace(inline(n)) + "\n\n")
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main, atom.Blockquote, atom.Nav, atom.Aside, atom.Form:
		w.sb.WriteString("\n\n")
		w.block(n)
		w.sb.WriteString("\n\n")
	case atom.Br:
		w.sb.WriteString("\n")
	case atom.Hr:
		w.sb.WriteString("\n\n---\n\n")
	case atom.Ul, atom.Ol:
		w.list++
		w.sb.WriteString("\n")
		i := 0
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.DataAtom != atom.Li {
				continue
			}
			i++
			marker := "- "
			if n.DataAtom == atom.Ol {
				marker = fmt.Sprintf("%d. ", i)
			}
			w.sb.WriteString("\n" + strings.Repeat("  ", w.list-1) + marker + strings.TrimSpace(inline(c)))
		}
		w.list--
		w.sb.WriteString("\n\n")
	case atom.Pre:
		w.sb.WriteString("\n\n```\n" + strings.Trim(text(n), "\n") + "\n```\n\n")
	case atom.Table:
		var rows [][]string
		var walk func(*html.Node)
		walk = func(m *html.Node) {
			for c := m.FirstChild; c != nil; c = c.NextSibling {
				switch c.DataAtom {
				case atom.Tr:
					var row []string
					for td := c.FirstChild; td != nil; td = td.NextSibling {
						if td.DataAtom == atom.Td || td.DataAtom == atom.Th {
							row = append(row, strings.TrimSpace(inline(td)))
						}
					}
					rows = append(rows, row)
				case atom.Thead, atom.Tbody, atom.Tfoot:
					walk(c)
				}
			}
		}
		walk(n)
		w.sb.WriteString("\n\n" + markdownTable(rows) + "\n")
	default:
		if hasBlock(n) {
			w.block(n) // html, body, span around a div, ...
		} else {
			inlineNode(&w.sb, n)
		}
	}
}

// blocks are the elements node writes as blocks.
var blocks = map[atom.Atom]bool{
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true,
	atom.Main: true, atom.Blockquote: true, atom.Ul: true, atom.Ol: true, atom.Pre: true, atom.Table: true,
	atom.Hr: true, atom.Head: true, atom.Body: true, atom.Nav: true, atom.Aside: true, atom.Form: true,
	atom.Script: true, atom.Style: true,
}

// hasBlock reports whether n has a block element below it.
func hasBlock(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (blocks[c.DataAtom] || hasBlock(c)) {
			return true
		}
	}
	return false
}

// inline renders n's content as one line of Markdown.
func inline(n *html.Node) string {
	var sb strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		inlineNode(&sb, c)
	}
	return sb.String()
}

// inlineNode writes c as inline Markdown.
func inlineNode(sb *strings.Builder, c *html.Node) {
	switch {
	case c.Type == html.TextNode:
		sb.WriteString(collapseSpace(c.Data))
	case c.Type != html.ElementNode:
	case c.DataAtom == atom.Script || c.DataAtom == atom.Style:
	case c.DataAtom == atom.A:
		label := strings.TrimSpace(inline(c))
		if href := attrOf(c, "href"); href != "" && !strings.HasPrefix(href, "javascript:") {
			sb.WriteString("[" + label + "](" + href + ")")
		} else {
			sb.WriteString(label)
		}
	case c.DataAtom == atom.Strong || c.DataAtom == atom.B:
		sb.WriteString("**" + strings.TrimSpace(inline(c)) + "**")
	case c.DataAtom == atom.Em || c.DataAtom == atom.I:
		sb.WriteString("*" + strings.TrimSpace(inline(c)) + "*")
	case c.DataAtom == atom.Code:
		sb.WriteString("`" + text(c) + "`")
	case c.DataAtom == atom.Br:
		sb.WriteString(" ")
	case c.DataAtom == atom.Img:
		if alt := attrOf(c, "alt"); alt != "" {
			sb.WriteString("[image: " + alt + "]")
		}
	default:
		sb.WriteString(inline(c))
	}
}

// text is n's text, unchanged.
func text(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(m *html.Node) {
		if m.Type == html.TextNode {
			sb.WriteString(m.Data)
		}
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// collapseSpace turns runs of white space into one space, as HTML shows
// them.
func collapseSpace(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		if s != "" {
			return " "
		}
		return ""
	}
	out := strings.Join(f, " ")
	if strings.TrimLeft(s[:1], " \t\r\n") == "" {
		out = " " + out
	}
	if strings.TrimRight(s[len(s)-1:], " \t\r\n") == "" {
		out += " "
	}
	return out
}

// collapseBlankLines trims each line's trailing space and keeps at most
// one blank line in a row.
func collapseBlankLines(s string) string {
	var out []string
	blank := true
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " \t")
		if strings.TrimSpace(line) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
