package edge

import (
	"archive/zip"
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The documents of the doc2md tests, hostile and normal, built here with
// archive/zip: no binary fixtures.

// zipOf returns a ZIP archive (deflated) of the files, in order: name,
// content, name, content, ...
func zipOf(t testing.TB, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	sheetNS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
		`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	wordNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`
)

// xlsxOf returns a workbook of one sheet, "Sheet1", whose sheetData holds
// rows (the <row> elements), as Excel lays it out.
func xlsxOf(t testing.TB, rows string) []byte {
	t.Helper()
	return zipOf(t,
		"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`+
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
			`<Default Extension="xml" ContentType="application/xml"/>`+
			`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`+
			`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`+
			`</Types>`,
		"_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>`+
			`</Relationships>`,
		"xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8"?><workbook `+sheetNS+`><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8"?>`+
			`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>`+
			`</Relationships>`,
		"xl/worksheets/sheet1.xml", `<?xml version="1.0" encoding="UTF-8"?><worksheet `+sheetNS+`><sheetData>`+rows+`</sheetData></worksheet>`,
	)
}

// docxOf returns a Word document whose body is body.
func docxOf(t testing.TB, body string) []byte {
	t.Helper()
	return zipOf(t,
		"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"word/document.xml", `<?xml version="1.0" encoding="UTF-8"?><w:document `+wordNS+`><w:body>`+body+`</w:body></w:document>`)
}

// wideRowsXLSX is issue 35's spreadsheet bomb: rows rows that each hold
// one cell, at column XFD (16384), the last Excel has. A converter that
// pads every row to the widest column makes rows × 16384 cells of it.
func wideRowsXLSX(t testing.TB, rows int) []byte {
	t.Helper()
	var b strings.Builder
	for r := 1; r <= rows; r++ {
		fmt.Fprintf(&b, `<row r="%d"><c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>`, r, r)
	}
	return xlsxOf(t, b.String())
}

// nestedTablesDOCX is issue 35's nesting bomb: a table whose one cell
// holds a table, depth levels deep. Each cell carries a random id, as
// Word's w14:paraId does, so the document does not compress far better
// than a real one (the bound on the expansion ratio is another test's).
func nestedTablesDOCX(t testing.TB, depth int) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.Grow(depth * 80)
	for range depth {
		fmt.Fprintf(&b, `<w:tbl><w:tr><w:tc w:id="%08x">`, rng.Uint32())
	}
	b.WriteString(`<w:p><w:r><w:t>deep</w:t></w:r></w:p>`)
	for range depth {
		b.WriteString(`</w:tc></w:tr></w:tbl>`)
	}
	return docxOf(t, b.String())
}

// zipBombDOCX is a Word document whose document.xml unpacks to size
// bytes of blanks.
func zipBombDOCX(t testing.TB, size int) []byte {
	t.Helper()
	return docxOf(t, `<w:p><w:r><w:t>`+strings.Repeat(" ", size)+`</w:t></w:r></w:p>`)
}

// tableXLSX is a normal spreadsheet: rows × cols cells of short text,
// the first row the header.
func tableXLSX(t testing.TB, rows, cols int) []byte {
	t.Helper()
	var b strings.Builder
	for r := range rows {
		fmt.Fprintf(&b, `<row r="%d">`, r+1)
		for c := range cols {
			fmt.Fprintf(&b, `<c r="%s%d" t="inlineStr"><is><t>r%dc%d</t></is></c>`, columnName(c), r+1, r, c)
		}
		b.WriteString(`</row>`)
	}
	return xlsxOf(t, b.String())
}

// tableDOCX is a normal Word table of rows × cols cells.
func tableDOCX(t testing.TB, rows, cols int) []byte {
	t.Helper()
	var b strings.Builder
	b.WriteString("<w:tbl>")
	for r := range rows {
		b.WriteString("<w:tr>")
		for c := range cols {
			fmt.Fprintf(&b, `<w:tc><w:p><w:r><w:t>r%dc%d</w:t></w:r></w:p></w:tc>`, r, c)
		}
		b.WriteString("</w:tr>")
	}
	b.WriteString("</w:tbl>")
	return docxOf(t, b.String())
}

// columnName is the spreadsheet name of the 0-based column c (A, ..., Z,
// AA, ...).
func columnName(c int) string {
	name := ""
	for c++; c > 0; c = (c - 1) / 26 {
		name = string(rune('A'+(c-1)%26)) + name
	}
	return name
}

// nestedHTML is an HTML page of depth nested <div>s around one word.
func nestedHTML(depth int) []byte {
	return []byte("<html><body>" + strings.Repeat("<div>", depth) + "deep" + strings.Repeat("</div>", depth) + "</body></html>")
}

// manyElementsHTML is an HTML page of n start tags of tag, each followed
// by text, none closed.
func manyElementsHTML(tag, text string, n int) []byte {
	return []byte("<html><body>" + strings.Repeat("<"+tag+">"+text, n) + "</body></html>")
}
