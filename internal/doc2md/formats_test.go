package doc2md_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// wp is a Word paragraph of text, with pPr (a style or numPr) when set.
func wp(pPr, text string) string {
	if pPr != "" {
		pPr = "<w:pPr>" + pPr + "</w:pPr>"
	}
	return "<w:p>" + pPr + `<w:r><w:t xml:space="preserve">` + text + "</w:t></w:r></w:p>"
}

func style(name string) string { return `<w:pStyle w:val="` + name + `"/>` }

// A DOCX reads as docs/attachments.md says: Title and HeadingN styles are
// headings (a level past 6 is 6), numbered paragraphs are list items, a
// tab stays and a line break is a space, a cell's paragraphs share its
// line, and a list ends before what follows it, so the next paragraph or
// table is not read as part of its last item.
func TestDOCXStructure(t *testing.T) {
	t.Parallel()
	body := wp(style("Title"), "Plan") + wp(style("Heading2"), "Scope") + wp(style("Heading 9"), "Deep") +
		wp(`<w:numPr/>`, "one") + wp(`<w:numPr/>`, "two") +
		`<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t></w:r></w:p>` +
		wp(style("Normal"), "") + // an empty paragraph writes nothing
		wp(`<w:numPr/>`, "three") +
		`<w:tbl><w:tr><w:tc>` + wp("", "x") + wp("", "y") + `</w:tc><w:tc>` + wp("", "z|w") + `</w:tc></w:tr></w:tbl>`
	md := convert(t, doc2md.New(nil), "plan.docx", docxBody(body))
	want := "# Plan\n\n## Scope\n\n###### Deep\n\n- one\n- two\n\na\tb c\n\n- three\n\n| x y | z\\|w |\n| --- | --- |"
	if md != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", md, want)
	}
}

// Slides come in their number's order (slide10 after slide9, whatever
// the archive's order), each under "## Slide N"; the other parts under
// ppt/slides (relationships, layouts elsewhere) are not slides.
func TestPPTXSlideOrder(t *testing.T) {
	t.Parallel()
	texts := make([]string, 11)
	for i := range texts {
		texts[i] = fmt.Sprintf("text of %d", i+1)
	}
	md := convert(t, doc2md.New(nil), "s.pptx", doc2mdtest.PPTX(texts...))
	var want []string
	for i, s := range texts {
		want = append(want, fmt.Sprintf("## Slide %d\n\n%s", i+1, s))
	}
	if got := strings.Split(md, "\n\n## "); len(got) != len(texts) {
		t.Fatalf("%d slides in:\n%s", len(got), md)
	}
	if md != strings.Join(want, "\n\n") {
		t.Errorf("Markdown:\n%q\nwant:\n%q", md, strings.Join(want, "\n\n"))
	}

	files := map[string]string{"ppt/presentation.xml": "<p:presentation/>"}
	files["ppt/slides/slide2.xml"] = `<p:sld><a:p><a:r><a:t>second</a:t></a:r></a:p></p:sld>`
	files["ppt/slides/slideX.xml"] = `<p:sld><a:p><a:r><a:t>not a slide</a:t></a:r></a:p></p:sld>`
	files["ppt/slides/_rels/slide2.xml.rels"] = `<Relationships/>`
	files["ppt/slideLayouts/slide1.xml"] = `<p:sld><a:p><a:r><a:t>layout</a:t></a:r></a:p></p:sld>`
	if md := convert(t, doc2md.New(nil), "p.pptx", doc2mdtest.Zip(files)); md != "## Slide 2\n\nsecond" {
		t.Errorf("Markdown %q; want slide 2 alone", md)
	}
}

// A workbook's sheets are found through its relationships (a relative
// target, an absolute one, none: sheetN.xml by position) and a sheet
// whose part is missing is "(empty)"; values are shown as Excel shows
// them, custom formats included, and what cannot be shown as a date
// stays a number.
func TestXLSXRelationshipsAndValues(t *testing.T) {
	t.Parallel()
	row := `<row>` +
		`<c t="s"><v>7</v></c>` + // a shared string that is not there: empty
		`<c t="b"><v>0</v></c><c t="str"><v>=A1</v></c><c t="d"><v>2024-01-02</v></c>` +
		`<c><v>1e20</v></c><c s="1"><v>0.5</v></c><c s="2"><v>59</v></c><c s="2"><v>61</v></c>` +
		`<c s="2"><v>-1</v></c><c s="2"><v>3000000</v></c><c s="3"><v>0.25</v></c><c s="4"><v>2.5</v></c>` +
		`</row>`
	files := map[string]string{
		"xl/workbook.xml": `<workbook xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>` +
			`<sheet name="Abs" sheetId="1" r:id="rA"/><sheet name="Positional" sheetId="9" r:id="rNone"/>` +
			`<sheet name="Gone" sheetId="3" r:id="rG"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships><Relationship Id="rA" Target="/xl/worksheets/abs.xml"/>` +
			`<Relationship Id="rG" Target="worksheets/gone.xml"/></Relationships>`,
		"xl/worksheets/abs.xml":    doc2mdtest.Sheet(row),
		"xl/worksheets/sheet2.xml": doc2mdtest.Sheet(`<row r="1"><c r="B1" t="inlineStr"><is><t>by position</t></is></c></row>`),
		"xl/styles.xml": `<styleSheet><numFmts><numFmt numFmtId="164" formatCode="h:mm:ss"/>` +
			`<numFmt numFmtId="165" formatCode="0.0%"/><numFmt numFmtId="166" formatCode="&quot;days&quot; 0.0"/></numFmts>` +
			`<cellXfs><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="14"/><xf numFmtId="165"/><xf numFmtId="166"/></cellXfs></styleSheet>`,
	}
	md := convert(t, doc2md.New(nil), "w.xlsx", doc2mdtest.Zip(files))
	want := "## Abs\n\n" +
		"|  | FALSE | =A1 | 2024-01-02 | 1e+20 | 12:00:00 | 1900-02-28 | 1900-03-01 | -1 | 3000000 | 25% | 2.5 |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n\n" +
		"## Positional\n\n|  | by position |\n| --- | --- |\n\n" +
		"## Gone\n\n(empty)"
	if md != want {
		t.Errorf("Markdown:\n%q\nwant:\n%q", md, want)
	}
}

// A broken document is Unreadable and says what is broken: the archive,
// the part (by its name), the cell. An archive with none of the three
// main parts is no office document.
func TestBrokenDocuments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		data []byte
		kind doc2md.Kind
		says string
	}{
		{"notzip.docx", []byte("PK\x03\x04 and then garbage"), doc2md.Unreadable, "broken ZIP archive"},
		{"cut.docx", doc2mdtest.Zip(map[string]string{"word/document.xml": "<w:document><w:body><w:p><w:r><w:t>unclosed"}),
			doc2md.Unreadable, "word/document.xml"},
		{"cut.pptx", doc2mdtest.Zip(map[string]string{"ppt/presentation.xml": "<p/>", "ppt/slides/slide1.xml": "<p:sld><a:t>x"}),
			doc2md.Unreadable, "ppt/slides/slide1.xml"},
		{"ref.xlsx", doc2mdtest.XLSX(nil, "xl/worksheets/sheet1.xml", doc2mdtest.Sheet(`<row><c r="12"><v>1</v></c></row>`)),
			doc2md.Unreadable, `cell "12"`},
		{"far.xlsx", doc2mdtest.XLSX(nil, "xl/worksheets/sheet1.xml", doc2mdtest.Sheet(`<row><c r="ZZZZZZ1"><v>1</v></c></row>`)),
			doc2md.Unreadable, "column out of range"},
		{"media.zip", doc2mdtest.Zip(map[string]string{"word/media/a.png": "x", "xl/sharedStrings.xml": "<sst/>"}),
			doc2md.Unsupported, "not a DOCX, XLSX or PPTX"},
	} {
		_, err := doc2md.New(nil).Convert(context.Background(), tc.name, "", tc.data)
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || !strings.Contains(err.Error(), tc.says) || e.Name != tc.name {
			t.Errorf("%s: %v; want kind %d saying %q", tc.name, err, tc.kind, tc.says)
		}
	}
}
