// Package doc2mdtest builds small, real documents for tests of the
// attachment paths (gateway, a2a, mcpserver, connectapi, cmd/wunder): a
// PDF with one text line per page, a DOCX, an XLSX and a PPTX built with
// archive/zip, a PNG, and data URLs of them.
package doc2mdtest

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
)

// PDF returns a minimal PDF 1.4 with one page per text, each showing its
// text in Helvetica (ASCII without parentheses or backslashes).
func PDF(pages ...string) []byte {
	var objs []string
	n := len(pages)
	// 1: catalog, 2: pages, 3: font, then a page and its content per text.
	kids := make([]string, n)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i, text := range pages {
		stream := fmt.Sprintf("BT /F1 18 Tf 72 720 Td (%s) Tj ET", text)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Zip returns a ZIP archive of the files (name -> content).
func Zip(files map[string]string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			panic(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			panic(err)
		}
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return b.Bytes()
}

const wordNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

// DOCX returns a Word document: a Heading1 paragraph with heading, the
// paragraphs, and a table of rows when rows is not empty.
func DOCX(heading string, paragraphs []string, rows [][]string) []byte {
	var body strings.Builder
	fmt.Fprintf(&body, `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>%s</w:t></w:r></w:p>`, heading)
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>`, p)
	}
	if len(rows) > 0 {
		body.WriteString("<w:tbl>")
		for _, r := range rows {
			body.WriteString("<w:tr>")
			for _, c := range r {
				fmt.Fprintf(&body, `<w:tc><w:p><w:r><w:t>%s</w:t></w:r></w:p></w:tc>`, c)
			}
			body.WriteString("</w:tr>")
		}
		body.WriteString("</w:tbl>")
	}
	return Zip(map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"word/document.xml":   `<?xml version="1.0" encoding="UTF-8"?><w:document ` + wordNS + `><w:body>` + body.String() + `</w:body></w:document>`,
	})
}

// XLSX returns a workbook of one sheet, "Sheet1", whose cells are rows
// (inline strings; the first row the header); extra is more parts, path
// then content, such as a sharedStrings.xml.
func XLSX(rows [][]string, extra ...string) []byte {
	var data strings.Builder
	for r, row := range rows {
		fmt.Fprintf(&data, `<row r="%d">`, r+1)
		for c, v := range row {
			fmt.Fprintf(&data, `<c r="%s%d" t="inlineStr"><is><t>%s</t></is></c>`, string(rune('A'+c%26)), r+1, v)
		}
		data.WriteString("</row>")
	}
	return Workbook(`<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets>`,
		append([]string{"xl/worksheets/sheet1.xml", Sheet(data.String())}, extra...)...)
}

// Sheet is a worksheet part whose sheetData holds rows (<row> elements).
func Sheet(rows string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><worksheet ` + sheetNS + `><sheetData>` + rows + `</sheetData></worksheet>`
}

const sheetNS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
	`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`

// Workbook returns an XLSX whose workbook.xml holds body (its <sheets>,
// each sheet's r:id rIdN naming xl/worksheets/sheetN.xml) and the parts,
// path then content.
func Workbook(body string, parts ...string) []byte {
	files := map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"xl/workbook.xml":     `<?xml version="1.0" encoding="UTF-8"?><workbook ` + sheetNS + `>` + body + `</workbook>`,
	}
	var rels strings.Builder
	for n := 1; n <= strings.Count(body, "<sheet "); n++ {
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet%d.xml"/>`, n, n)
	}
	files["xl/_rels/workbook.xml.rels"] = `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels.String() + `</Relationships>`
	for i := 0; i+1 < len(parts); i += 2 {
		files[parts[i]] = parts[i+1]
	}
	return Zip(files)
}

// PPTX returns a presentation with one slide per text.
func PPTX(slides ...string) []byte {
	files := map[string]string{
		"[Content_Types].xml":  `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"ppt/presentation.xml": `<?xml version="1.0"?><p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"/>`,
	}
	for i, s := range slides {
		files[fmt.Sprintf("ppt/slides/slide%d.xml", i+1)] = `<?xml version="1.0"?><p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ` +
			`xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:sp><p:txBody>` +
			`<a:p><a:r><a:t>` + s + `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`
	}
	return Zip(files)
}

// PNG returns a 2x2 PNG.
func PNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// DataURL returns data as a base64 data URL of mimeType.
func DataURL(mimeType string, data []byte) string {
	return "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)
}
