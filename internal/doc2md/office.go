package doc2md

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// officeZip reads the entries of an office file, all of them together
// bounded by a budget (a ZIP bomb runs out of it).
type officeZip struct {
	name   string
	zr     *zip.Reader
	budget int64
	limit  int64
}

func (c *Converter) openZip(name string, data []byte) (*officeZip, error) {
	if err := c.checkUnzipSize(name, data); err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, errorf(name, Unreadable, "a broken ZIP archive: %v", err)
	}
	return &officeZip{name: name, zr: zr, budget: c.opts.MaxUnzipBytes, limit: c.opts.MaxUnzipBytes}, nil
}

// read returns an entry's bytes; a missing entry is nil without error.
func (z *officeZip) read(entry string) ([]byte, error) {
	for _, f := range z.zr.File {
		if f.Name != entry {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, errorf(z.name, Unreadable, "entry %s: %v", entry, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, z.budget+1))
		if int64(len(b)) > z.budget {
			return nil, errorf(z.name, TooLarge, "it unpacks to more than %d bytes (a ZIP bomb?)", z.limit)
		}
		if err != nil {
			return nil, errorf(z.name, Unreadable, "entry %s: %v", entry, err)
		}
		z.budget -= int64(len(b))
		return b, nil
	}
	return nil, nil
}

// docx converts word/document.xml: headings (Heading1-6, Title styles),
// paragraphs, list items and tables.
func (c *Converter) docx(name string, data []byte) (string, error) {
	z, err := c.openZip(name, data)
	if err != nil {
		return "", err
	}
	doc, err := z.read("word/document.xml")
	if err != nil {
		return "", err
	}
	if doc == nil {
		return "", errorf(name, Unreadable, "a DOCX without word/document.xml")
	}
	md, err := wordML(doc)
	if err != nil {
		return "", errorf(name, Unreadable, "word/document.xml: %v", err)
	}
	return md, nil
}

// pptx converts ppt/slides/slideN.xml in slide order, each under a
// "## Slide N" heading.
func (c *Converter) pptx(name string, data []byte) (string, error) {
	z, err := c.openZip(name, data)
	if err != nil {
		return "", err
	}
	var nums []int
	for _, f := range z.zr.File {
		if s, ok := strings.CutPrefix(f.Name, "ppt/slides/slide"); ok {
			if n, err := strconv.Atoi(strings.TrimSuffix(s, ".xml")); err == nil && strings.HasSuffix(s, ".xml") {
				nums = append(nums, n)
			}
		}
	}
	sort.Ints(nums)
	var sb strings.Builder
	for _, n := range nums {
		if sb.Len() > maxOutputBytes {
			break
		}
		b, err := z.read(fmt.Sprintf("ppt/slides/slide%d.xml", n))
		if err != nil {
			return "", err
		}
		md, err := wordML(b)
		if err != nil {
			return "", errorf(name, Unreadable, "slide %d: %v", n, err)
		}
		fmt.Fprintf(&sb, "## Slide %d\n\n%s\n\n", n, md)
	}
	return sb.String(), nil
}

// wordML converts the paragraphs and tables of a WordprocessingML (prefix
// w: p, r, t, tbl, tr, tc) or DrawingML (a: the same names) part. Tables
// become Markdown tables; a paragraph's style (pStyle HeadingN or Title)
// makes a heading, numPr a list item.
func wordML(data []byte) (string, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false
	var (
		out     strings.Builder
		para    strings.Builder
		heading int
		list    bool
		tables  [][][]string // nested tables: rows of cells
		inText  bool
	)
	// Names are matched by their local part: the WordprocessingML and
	// DrawingML elements read here share them (p, r, t, tbl, tr, tc).
	local := func(n xml.Name) string { return n.Local }
	endPara := func() {
		text := strings.TrimSpace(para.String())
		para.Reset()
		if len(tables) > 0 {
			t := tables[len(tables)-1]
			if len(t) > 0 && len(t[len(t)-1]) > 0 {
				row := t[len(t)-1]
				cell := &row[len(row)-1]
				if *cell != "" && text != "" {
					*cell += " "
				}
				*cell += text
			}
			return
		}
		if text == "" {
			return
		}
		switch {
		case heading > 0:
			out.WriteString(strings.Repeat("#", heading) + " " + text + "\n\n")
		case list:
			out.WriteString("- " + text + "\n")
		default:
			out.WriteString(text + "\n\n")
		}
		heading, list = 0, false
	}
	for out.Len() <= maxOutputBytes {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch local(t.Name) {
			case "p":
				para.Reset()
				heading, list = 0, false
			case "pStyle":
				heading = headingLevel(attr(t, "val"))
			case "numPr":
				list = true
			case "t":
				inText = true
			case "tab":
				para.WriteString("\t")
			case "br":
				para.WriteString(" ")
			case "tbl":
				tables = append(tables, nil)
			case "tr":
				if len(tables) > 0 {
					tables[len(tables)-1] = append(tables[len(tables)-1], nil)
				}
			case "tc":
				if n := len(tables); n > 0 && len(tables[n-1]) > 0 {
					rows := tables[n-1]
					rows[len(rows)-1] = append(rows[len(rows)-1], "")
				}
			}
		case xml.EndElement:
			switch local(t.Name) {
			case "t":
				inText = false
			case "p":
				endPara()
			case "tbl":
				if n := len(tables); n > 0 {
					t := tables[n-1]
					tables = tables[:n-1]
					md := markdownTable(t)
					if len(tables) > 0 {
						para.WriteString(strings.ReplaceAll(md, "\n", " "))
						endPara()
					} else {
						out.WriteString(md + "\n")
					}
				}
			}
		case xml.CharData:
			if inText {
				para.Write(t)
			}
		}
	}
	return strings.TrimSpace(out.String()), nil
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// headingLevel reads a paragraph style: Title is 1, HeadingN is N (1-6).
func headingLevel(style string) int {
	s := strings.ToLower(strings.ReplaceAll(style, " ", ""))
	if s == "title" {
		return 1
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "heading")); err == nil && strings.HasPrefix(s, "heading") {
		return min(max(n, 1), 6)
	}
	return 0
}

// maxTableBytes bounds one rendered table: short rows padded to the
// widest one could otherwise multiply a small input many times over (the
// Markdown is clipped at MaxChars afterwards anyway).
const maxTableBytes = 4 << 20

// maxOutputBytes bounds the Markdown of one document before it is clipped
// at MaxChars: a converter stops adding to it once it is over.
const maxOutputBytes = 16 << 20

// cellEscaper escapes a table cell's pipes and flattens its line breaks.
var cellEscaper = strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ")

// markdownTable renders rows (the first is the header) as a Markdown
// table; cells have their pipes escaped and line breaks flattened. A
// table over maxTableBytes ends with a row saying it was cut.
func markdownTable(rows [][]string) string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r))
	}
	if width == 0 {
		return ""
	}
	var sb strings.Builder
	line := func(r []string) {
		sb.WriteString("|")
		for i := range width {
			cell := ""
			if i < len(r) {
				cell = r[i]
			}
			cell = cellEscaper.Replace(strings.TrimSpace(cell))
			sb.WriteString(" " + cell + " |")
		}
		sb.WriteString("\n")
	}
	line(rows[0])
	sb.WriteString("|" + strings.Repeat(" --- |", width) + "\n")
	for i, r := range rows[1:] {
		if sb.Len() > maxTableBytes {
			fmt.Fprintf(&sb, "| [table cut: %d more rows] |\n", len(rows)-1-i)
			break
		}
		line(r)
	}
	return sb.String()
}
