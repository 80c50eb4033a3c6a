package doc2md

import "golang.org/x/net/html/atom"

// The HTML elements the converter knows, and the end tags HTML lets a
// document leave out, implied where a browser implies them.

var (
	// voidElems have no end tag and no content.
	voidElems = atomSet(atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Param, atom.Source, atom.Track, atom.Wbr)
	// skipElems' content is left out.
	skipElems = atomSet(atom.Script, atom.Style, atom.Title, atom.Noscript, atom.Template, atom.Svg, atom.Math,
		atom.Iframe, atom.Object, atom.Select, atom.Textarea)
	// blockElems are written as blocks.
	blockElems = atomSet(atom.P, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Main,
		atom.Blockquote, atom.Nav, atom.Aside, atom.Form, atom.Figure, atom.Figcaption, atom.Address, atom.Dl,
		atom.Dt, atom.Dd, atom.Details, atom.Summary, atom.Fieldset, atom.Center, atom.Body, atom.Html)
	// closesP are the start tags that end an open p.
	closesP = atomSet(atom.P, atom.Div, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Ul, atom.Ol,
		atom.Pre, atom.Table, atom.Blockquote, atom.Hr, atom.Section, atom.Article, atom.Header, atom.Footer,
		atom.Main, atom.Nav, atom.Aside, atom.Form, atom.Dl, atom.Figure, atom.Address, atom.Details, atom.Fieldset)
	// phrasing elements may stand between a p and a tag that ends it.
	phrasing = atomSet(atom.A, atom.B, atom.I, atom.Em, atom.Strong, atom.Span, atom.Code, atom.Font, atom.Small,
		atom.Big, atom.U, atom.S, atom.Sub, atom.Sup, atom.Label, atom.Abbr, atom.Cite, atom.Q, atom.Mark,
		atom.Time, atom.Tt, atom.Strike, atom.Kbd, atom.Samp, atom.Var, atom.Dfn, atom.Bdi, atom.Bdo, atom.Data)
	headings = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}
	emphasis = map[atom.Atom]string{atom.B: "**", atom.Strong: "**", atom.I: "*", atom.Em: "*"}
)

func atomSet(as ...atom.Atom) map[atom.Atom]bool {
	m := make(map[atom.Atom]bool, len(as))
	for _, a := range as {
		m[a] = true
	}
	return m
}

// implied are the open elements a start tag ends, by the tag: the
// elements ended, and the elements the search for them stops at.
var implied = map[atom.Atom]struct{ ends, stops map[atom.Atom]bool }{
	atom.Li:     {atomSet(atom.Li), atomSet(atom.Ul, atom.Ol, atom.Table)},
	atom.Dt:     {atomSet(atom.Dt, atom.Dd), atomSet(atom.Dl, atom.Table)},
	atom.Dd:     {atomSet(atom.Dt, atom.Dd), atomSet(atom.Dl, atom.Table)},
	atom.Td:     {atomSet(atom.Td, atom.Th), atomSet(atom.Tr, atom.Table)},
	atom.Th:     {atomSet(atom.Td, atom.Th), atomSet(atom.Tr, atom.Table)},
	atom.Tr:     {atomSet(atom.Tr), atomSet(atom.Table)},
	atom.Thead:  {atomSet(atom.Thead, atom.Tbody, atom.Tfoot), atomSet(atom.Table)},
	atom.Tbody:  {atomSet(atom.Thead, atom.Tbody, atom.Tfoot), atomSet(atom.Table)},
	atom.Tfoot:  {atomSet(atom.Thead, atom.Tbody, atom.Tfoot), atomSet(atom.Table)},
	atom.Option: {atomSet(atom.Option), atomSet(atom.Select)},
}

// end handles an end tag: it closes the element and all opened after it,
// if it is open (an end tag of a table's outside does not reach into a
// cell, and one that matches nothing is ignored, as browsers do).
func (h *htmlConv) end(a atom.Atom, name string) error {
	inTable := tableTags[a] || a == atom.Table
	for i := len(h.stack) - 1; i >= 0; i-- {
		e := h.stack[i]
		if e.a == a && (a != 0 || e.name == name) {
			return h.popTo(i)
		}
		if (!inTable && (e.a == atom.Td || e.a == atom.Th || e.a == atom.Table)) || (inTable && e.a == atom.Table) {
			return nil
		}
	}
	return nil
}

// tableTags are the tags of a table's parts.
var tableTags = atomSet(atom.Tr, atom.Td, atom.Th, atom.Thead, atom.Tbody, atom.Tfoot, atom.Caption, atom.Colgroup)

// implyEnds closes the open elements that a start tag of a ends.
func (h *htmlConv) implyEnds(a atom.Atom) error {
	if closesP[a] {
		for i := len(h.stack) - 1; i >= 0; i-- {
			if h.stack[i].a == atom.P {
				return h.popTo(i)
			}
			if !phrasing[h.stack[i].a] {
				break
			}
		}
	}
	rule, ok := implied[a]
	if !ok {
		return nil
	}
	for i := len(h.stack) - 1; i >= 0; i-- {
		if rule.ends[h.stack[i].a] {
			return h.popTo(i)
		}
		if rule.stops[h.stack[i].a] {
			return nil
		}
	}
	return nil
}
