package doc2md

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// html converts an HTML document as golang.org/x/net/html's tokenizer
// reads it, never building a tree: headings, paragraphs, lists, links,
// emphasis, code, preformatted blocks and tables become Markdown;
// scripts, styles and the title are left out. The elements open at once
// are bounded by MaxXMLDepth. The end tags HTML lets a document leave out
// (p, li, td, tr, ...) are implied where a browser implies them, so a
// page of a million <p>s is long, not deep.
func (j *job) html(data []byte) error {
	h := &htmlConv{j: j, fresh: true}
	z := html.NewTokenizer(bytes.NewReader(data))
	for {
		if err := j.tick(); err != nil {
			return err
		}
		var err error
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return errorf(j.name, Unreadable, "malformed HTML: %v", z.Err())
			}
			return h.popTo(0)
		case html.TextToken:
			err = h.text(string(z.Text()))
		case html.StartTagToken:
			err = h.start(z, false)
		case html.SelfClosingTagToken:
			err = h.start(z, true)
		case html.EndTagToken:
			name, _ := z.TagName()
			err = h.end(atom.Lookup(name), string(name))
		}
		if err != nil {
			return err
		}
	}
}

// htmlConv is the state of an HTML conversion.
type htmlConv struct {
	j *job
	// stack holds the open elements (MaxXMLDepth at most).
	stack  []htmlElem
	tables []*tableBuf
	// lists holds the open lists' item counters (-1 for ul).
	lists []int
	// skip counts the open elements whose content is left out; pre the
	// open pre elements; heading the open headings.
	skip, pre, heading int
	// space is a space pending before the next text; fresh means the
	// line, cell or marker just started, where a space is not written.
	space, fresh bool
}

type htmlElem struct {
	a    atom.Atom
	name string // for elements without an atom
	href string // a link's target: written at its end
}

// start handles a start tag: it ends what the tag implies, opens the
// element and writes what it starts.
func (h *htmlConv) start(z *html.Tokenizer, selfClosing bool) error {
	name, hasAttr := z.TagName()
	a := atom.Lookup(name)
	e := htmlElem{a: a}
	if a == 0 {
		e.name = string(name)
	}
	var alt string
	for hasAttr {
		var k, v []byte
		k, v, hasAttr = z.TagAttr()
		switch {
		case a == atom.A && string(k) == "href":
			e.href = strings.TrimSpace(string(v))
		case a == atom.Img && string(k) == "alt":
			alt = strings.TrimSpace(string(v))
		}
	}
	if err := h.implyEnds(a); err != nil {
		return err
	}
	if h.skip > 0 { // inside a skipped element: only its depth counts
		if voidElems[a] || selfClosing {
			return nil
		}
		if skipElems[a] {
			h.skip++ // its end takes one off again
		}
		return h.push(e)
	}
	switch {
	case a == atom.Br:
		if h.heading > 0 || h.inTable() {
			h.space = true
			return nil
		}
		return h.line()
	case a == atom.Hr:
		return h.writeBlock("---")
	case a == atom.Img:
		if alt != "" {
			return h.write("[image: "+alt+"]", false)
		}
		return nil
	case voidElems[a]:
		return nil
	}
	if selfClosing {
		return nil
	}
	if err := h.push(e); err != nil {
		return err
	}
	return h.open(e)
}

// open writes what an opened element starts.
func (h *htmlConv) open(e htmlElem) error {
	switch a := e.a; {
	case skipElems[a]:
		h.skip++
	case headings[a] > 0:
		h.heading++
		if err := h.block(); err != nil || h.inTable() { // in a cell: a space
			return err
		}
		return h.write(strings.Repeat("#", headings[a])+" ", true)
	case blockElems[a]:
		return h.block()
	case a == atom.Ul || a == atom.Ol:
		n := -1
		if a == atom.Ol {
			n = 0
		}
		h.lists = append(h.lists, n)
		return h.line()
	case a == atom.Li:
		if err := h.line(); err != nil {
			return err
		}
		marker := "- "
		if n := len(h.lists); n > 0 {
			if h.lists[n-1] >= 0 {
				h.lists[n-1]++
				marker = strconv.Itoa(h.lists[n-1]) + ". "
			}
			marker = strings.Repeat("  ", n-1) + marker
		}
		return h.write(marker, true)
	case a == atom.Pre:
		h.pre++
		if err := h.block(); err != nil || h.inTable() { // in a cell: a space
			return err
		}
		return h.write("```\n", true)
	case a == atom.Code && h.pre == 0, emphasis[a] != "":
		return h.write(map[bool]string{true: "`", false: emphasis[a]}[a == atom.Code], true)
	case a == atom.A && linkable(e.href):
		return h.write("[", true)
	case a == atom.Table:
		if err := h.block(); err != nil {
			return err
		}
		h.tables = append(h.tables, &tableBuf{})
	case a == atom.Tr:
		if n := len(h.tables); n > 0 {
			return h.j.startRow(h.tables[n-1])
		}
	case a == atom.Td || a == atom.Th:
		if n := len(h.tables); n > 0 {
			h.space, h.fresh = false, true
			return h.j.startCell(h.tables[n-1])
		}
	}
	return nil
}

// close writes what a closed element ends.
func (h *htmlConv) close(e htmlElem) error {
	switch a := e.a; {
	case skipElems[a]:
		h.skip--
	case h.skip > 0:
	case headings[a] > 0:
		h.heading--
		return h.block()
	case blockElems[a]:
		return h.block()
	case a == atom.Ul || a == atom.Ol:
		if n := len(h.lists); n > 0 {
			h.lists = h.lists[:n-1]
		}
		if len(h.lists) > 0 { // the end of an inner list: its outer list goes on
			return h.line()
		}
		return h.block()
	case a == atom.Pre:
		h.pre--
		if h.inTable() {
			return h.block()
		}
		if err := h.line(); err != nil {
			return err
		}
		if err := h.j.out.write("```"); err != nil {
			return err
		}
		return h.block()
	case a == atom.Code && h.pre == 0, emphasis[a] != "":
		return h.write(map[bool]string{true: "`", false: emphasis[a]}[a == atom.Code], false)
	case a == atom.A && linkable(e.href):
		return h.write("]("+e.href+")", false)
	case a == atom.Td || a == atom.Th:
		if n := len(h.tables); n > 0 {
			h.j.endCell(h.tables[n-1])
		}
	case a == atom.Table:
		return h.endTable()
	}
	return nil
}

// endTable renders the innermost open table: into its outer table's
// cell, or onto the Markdown as a block.
func (h *htmlConv) endTable() error {
	n := len(h.tables)
	if n == 0 {
		return nil
	}
	t := h.tables[n-1]
	h.tables = h.tables[:n-1]
	if n > 1 {
		line, err := h.j.nestedTable(t)
		if err != nil {
			return err
		}
		h.space = true
		return h.write(line, false)
	}
	if err := h.j.renderTable(&h.j.out, t); err != nil {
		return err
	}
	h.space, h.fresh = false, true
	return h.block()
}

func linkable(href string) bool {
	return href != "" && !strings.HasPrefix(strings.ToLower(href), "javascript:")
}

// push opens an element, within MaxXMLDepth.
func (h *htmlConv) push(e htmlElem) error {
	if len(h.stack) >= h.j.o.MaxXMLDepth {
		return overLimit(h.j.name, TooComplex, "attachments.max_xml_depth", int64(h.j.o.MaxXMLDepth),
			"HTML elements nested %d deep", len(h.stack)+1)
	}
	h.stack = append(h.stack, e)
	return nil
}

// popTo closes the open elements from the innermost down to stack[i].
func (h *htmlConv) popTo(i int) error {
	for len(h.stack) > i {
		e := h.stack[len(h.stack)-1]
		h.stack = h.stack[:len(h.stack)-1]
		if err := h.close(e); err != nil {
			return err
		}
	}
	return nil
}

// inTable reports whether what is written goes into a table's cell.
func (h *htmlConv) inTable() bool { return len(h.tables) > 0 }

// text writes a text token: as it is in a pre, else with its runs of
// white space made one space, as browsers show it.
func (h *htmlConv) text(s string) error {
	if h.skip > 0 || s == "" {
		return nil
	}
	if h.pre > 0 {
		return h.write(s, false)
	}
	fields := strings.Fields(s)
	if isSpace(s[0]) {
		h.space = true
	}
	if len(fields) > 0 {
		if err := h.write(strings.Join(fields, " "), false); err != nil {
			return err
		}
		h.space = isSpace(s[len(s)-1])
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// write writes s where text goes now (the open cell, or the Markdown),
// after the pending space unless a line, cell or marker just started.
// opens says s starts something (a marker) after which a space is not
// written.
func (h *htmlConv) write(s string, opens bool) error {
	if h.space && !h.fresh {
		s = " " + s
	}
	h.space, h.fresh = false, opens
	if n := len(h.tables); n > 0 {
		return h.j.cellWrite(h.tables[n-1], s)
	}
	return h.j.out.write(s)
}

// block ends the paragraph: a blank line (a space in a cell).
func (h *htmlConv) block() error { return h.breakLine(2) }

// line ends the line (a space in a cell).
func (h *htmlConv) line() error { return h.breakLine(1) }

func (h *htmlConv) breakLine(n int) error {
	if h.inTable() {
		h.space = true
		return nil
	}
	h.space, h.fresh = false, true
	if h.j.out.empty() {
		return nil
	}
	return h.j.out.write(strings.Repeat("\n", max(n-h.j.out.nl, 0)))
}

// writeBlock writes s as a block of its own.
func (h *htmlConv) writeBlock(s string) error {
	if h.inTable() { // in a cell: a word of its own
		h.space = true
		err := h.write(s, false)
		h.space = true
		return err
	}
	if err := h.block(); err != nil {
		return err
	}
	if err := h.j.out.write(s); err != nil {
		return err
	}
	return h.block()
}
