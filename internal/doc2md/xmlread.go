package doc2md

import (
	"encoding/xml"
	"io"
	"iter"
)

// xmlReader reads one XML part token by token, never as a tree: its
// elements may nest at most MaxXMLDepth deep, and it gives up when the
// conversion's time is up. encoding/xml expands no entities but its five
// own, so there is no entity bomb to defuse.
type xmlReader struct {
	j     *job
	dec   *xml.Decoder
	depth int
}

func (j *job) newXMLReader(r io.Reader) *xmlReader {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	return &xmlReader{j: j, dec: dec}
}

// next returns the next token, io.EOF after the last; the CharData it
// returns is valid until the next call.
func (x *xmlReader) next() (xml.Token, error) {
	if err := x.j.tick(); err != nil {
		return nil, err
	}
	tok, err := x.dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok.(type) {
	case xml.StartElement:
		if x.depth++; x.depth > x.j.o.MaxXMLDepth {
			return nil, overLimit(x.j.name, TooComplex, "attachments.max_xml_depth", int64(x.j.o.MaxXMLDepth),
				"XML elements nested %d deep", x.depth)
		}
	case xml.EndElement:
		x.depth = max(x.depth-1, 0)
	}
	return tok, nil
}

// tokens yields x's tokens, as next returns them, up to the end: io.EOF
// ends it quietly, any other error is yielded once, last.
func (x *xmlReader) tokens() iter.Seq2[xml.Token, error] {
	return func(yield func(xml.Token, error) bool) {
		for {
			tok, err := x.next()
			if err == io.EOF {
				return
			}
			if !yield(tok, err) || err != nil {
				return
			}
		}
	}
}

// attr is the value of e's attribute of that local name, "" if none.
func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
