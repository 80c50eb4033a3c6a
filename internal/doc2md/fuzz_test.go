package doc2md_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// fuzzConverter has small limits, so that the fuzzer reaches them.
var fuzzConverter = doc2md.New(&doc2md.Options{MaxChars: 1000, MaxUnzipBytes: 1 << 20, PDFToText: "no-such-pdftotext",
	MaxRows: 50, MaxColumns: 20, MaxCells: 500, MaxXMLDepth: 32, MaxOutputBytes: 64 << 10})

// checkFuzzed fails unless err is nil or an *Error (wrapping
// ErrInvalidArgument), and md within MaxChars characters plus the note.
func checkFuzzed(t *testing.T, md string, err error) {
	t.Helper()
	if err != nil {
		var e *doc2md.Error
		if !errors.As(err, &e) || !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Fatalf("error %v is not a *doc2md.Error", err)
		}
		if e.Limit != "" && e.Max <= 0 {
			t.Fatalf("error %v names limit %s without its value", err, e.Limit)
		}
		return
	}
	if n := len([]rune(md)); n > 1000+200 {
		t.Fatalf("%d characters of Markdown, over MaxChars", n)
	}
}

// FuzzConvert feeds the converters untrusted bytes: they may refuse them,
// always with an *Error, never panic, and never answer more than
// MaxChars characters plus the clip note. (PDF goes to a pdftotext that is
// not there: the subprocess is not what is fuzzed.)
func FuzzConvert(f *testing.F) {
	for _, seed := range [][]byte{
		doc2mdtest.DOCX("H", []string{"p"}, [][]string{{"a", "b"}}), doc2mdtest.PPTX("s"), doc2mdtest.PNG(),
		doc2mdtest.XLSX([][]string{{"a", "b"}, {"1", "2"}}),
		doc2mdtest.PDF("x"), []byte("<p>hi <b>there</b></p>"), []byte("a,b\n1,2\n"), []byte(`{"k":1}`),
		doc2mdtest.Zip(map[string]string{"word/document.xml": "<w:p><w:t>unclosed"}),
	} {
		f.Add("f", seed)
	}
	f.Add("x.csv", []byte("a,\"b\n"))
	f.Add("x.html", []byte("<table><tr><td>1<table><tr><td>2"))
	f.Add("x.html", []byte("<ul><li>a<ol><li>b</ul><pre>c<code>d</pre><a href=x>e<a>f</div></td>"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		md, err := fuzzConverter.Convert(context.Background(), name, "", data)
		checkFuzzed(t, md, err)
	})
}

// FuzzOfficeParts feeds the XML decoders untrusted parts, which the
// fuzzer could not reach through a compressed archive: its bytes become
// one part of a DOCX, a PPTX or an XLSX (a sheet, the shared strings, the
// styles, the workbook).
func FuzzOfficeParts(f *testing.F) {
	sheet := `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="C1" s="1"><v>45000.5</v></c></row><row><c t="inlineStr"><is><t>x</t></is></c></row>`
	for which, part := range []string{
		`<w:body><w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>h</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:body>`,
		`<p:sld><a:p><a:r><a:t>slide</a:t></a:r></a:p></p:sld>`,
		doc2mdtest.Sheet(sheet),
		`<sst><si><t>s</t></si><si><r><t>r</t></r><rPh><t>p</t></rPh></si></sst>`,
		`<styleSheet><numFmts><numFmt numFmtId="164" formatCode="yyyy-mm-dd hh:mm"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs></styleSheet>`,
		`<workbook><workbookPr date1904="1"/><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
	} {
		f.Add(uint8(which), []byte(part))
	}
	f.Fuzz(func(t *testing.T, which uint8, part []byte) {
		sheets := `<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>`
		var doc []byte
		switch which % 6 {
		case 0:
			doc = doc2mdtest.Zip(map[string]string{"word/document.xml": string(part)})
		case 1:
			doc = doc2mdtest.Zip(map[string]string{"ppt/presentation.xml": "<p/>", "ppt/slides/slide1.xml": string(part)})
		case 2:
			doc = doc2mdtest.Workbook(sheets, "xl/worksheets/sheet1.xml", string(part))
		case 3:
			doc = doc2mdtest.Workbook(sheets, "xl/worksheets/sheet1.xml", doc2mdtest.Sheet(sheet), "xl/sharedStrings.xml", string(part))
		case 4:
			doc = doc2mdtest.Workbook(sheets, "xl/worksheets/sheet1.xml", doc2mdtest.Sheet(sheet), "xl/styles.xml", string(part))
		default:
			doc = doc2mdtest.Zip(map[string]string{"xl/workbook.xml": string(part), "xl/worksheets/sheet1.xml": doc2mdtest.Sheet(sheet)})
		}
		md, err := fuzzConverter.Convert(context.Background(), "f", "", doc)
		checkFuzzed(t, md, err)
	})
}
