package doc2md_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// A workbook as Excel's writers make it (excelize: shared strings,
// styles, several sheets) reads as they show it: sheets in order, dates
// and times in ISO form, percentages, booleans, rows without a value left
// out, a cell far right padded from column A.
func TestXLSXAsShown(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	set := func(sheet, cell string, v any) {
		t.Helper()
		if err := f.SetCellValue(sheet, cell, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.NewSheet("Second"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewSheet("Blank"); err != nil {
		t.Fatal(err)
	}
	pct, err := f.NewStyle(&excelize.Style{NumFmt: 10})
	if err != nil {
		t.Fatal(err)
	}
	day, err := f.NewStyle(&excelize.Style{CustomNumFmt: ptr("yyyy-mm-dd")})
	if err != nil {
		t.Fatal(err)
	}
	set("Sheet1", "A1", "item")
	set("Sheet1", "B1", "when")
	set("Sheet1", "C1", "share")
	set("Sheet1", "D1", "ok")
	set("Sheet1", "A2", "apple|pear")
	set("Sheet1", "B2", time.Date(2024, 3, 5, 14, 30, 0, 0, time.UTC))
	set("Sheet1", "C2", 0.125)
	set("Sheet1", "D2", true)
	set("Sheet1", "A4", 0.1+0.2)
	set("Sheet1", "B4", 45000)
	set("Second", "B1", "right")
	for cell, style := range map[string]int{"C2": pct, "B4": day} {
		if err := f.SetCellStyle("Sheet1", cell, cell, style); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	md := convert(t, doc2md.New(nil), "book.xlsx", b.Bytes())
	want := "## Sheet1\n\n" +
		"| item | when | share | ok |\n| --- | --- | --- | --- |\n" +
		"| apple\\|pear | 2024-03-05 14:30:00 | 12.5% | TRUE |\n" +
		"| 0.3 | 2023-03-15 |  |  |\n\n" +
		"## Second\n\n|  | right |\n| --- | --- |\n\n" +
		"## Blank\n\n(empty)"
	if md != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", md, want)
	}
}

func ptr[T any](v T) *T { return &v }

// The parts excelize does not write: a 1904 workbook, inline rich text, a
// phonetic run left out of a shared string, a cell without a reference.
func TestXLSXParts(t *testing.T) {
	t.Parallel()
	book := doc2mdtest.Workbook(`<workbookPr date1904="1"/><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>`,
		"xl/worksheets/sheet1.xml", doc2mdtest.Sheet(`<row r="1"><c t="s"><v>0</v></c><c t="inlineStr"><is><r><t>in</t></r><r><t>line</t></r></is></c>`+
			`<c s="1"><v>0</v></c><c t="e"><v>#DIV/0!</v></c></row>`),
		"xl/sharedStrings.xml", `<sst><si><r><t>東京</t></r><rPh><t>トウキョウ</t></rPh></si></sst>`,
		"xl/styles.xml", `<styleSheet><cellStyleXfs><xf numFmtId="14"/></cellStyleXfs><cellXfs><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs></styleSheet>`)
	md := convert(t, doc2md.New(nil), "p.xlsx", book)
	if want := "## S\n\n| 東京 | inline | 1904-01-01 | #DIV/0! |\n| --- | --- | --- | --- |"; md != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", md, want)
	}
	if strings.Contains(md, "トウキョウ") {
		t.Error("the phonetic run was kept")
	}
}
