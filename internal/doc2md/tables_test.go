package doc2md_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"html"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
)

// tableIn writes rows (plain text, "\n" a line break inside a cell) as a
// table of each format doc2md reads tables from.
func tableIn(rows [][]string) map[string][]byte {
	var c bytes.Buffer
	w := csv.NewWriter(&c)
	_ = w.WriteAll(rows)

	var h, d strings.Builder
	h.WriteString("<table>")
	d.WriteString("<w:tbl>")
	for _, r := range rows {
		h.WriteString("<tr>")
		d.WriteString("<w:tr>")
		for _, cell := range r {
			lines := strings.Split(cell, "\n")
			for i := range lines {
				lines[i] = html.EscapeString(lines[i])
			}
			h.WriteString("<td>" + strings.Join(lines, "<br>") + "</td>")
			d.WriteString(`<w:tc><w:p><w:r><w:t xml:space="preserve">` + strings.Join(lines, `</w:t><w:br/><w:t xml:space="preserve">`) + `</w:t></w:r></w:p></w:tc>`)
		}
		h.WriteString("</tr>")
		d.WriteString("</w:tr>")
	}
	h.WriteString("</table>")
	d.WriteString("</w:tbl>")

	escaped := make([][]string, len(rows))
	for i, r := range rows {
		for _, cell := range r {
			escaped[i] = append(escaped[i], html.EscapeString(cell))
		}
	}
	return map[string][]byte{
		"t.csv":  c.Bytes(),
		"t.html": []byte(h.String()),
		"t.docx": docxBody(d.String()),
		"t.xlsx": doc2mdtest.XLSX(escaped),
	}
}

// The same table reads as the same Markdown whichever format holds it:
// ragged rows padded to the widest, pipes escaped, a cell's line breaks
// and surrounding space flattened, markup characters kept as text.
func TestTablesAgreeAcrossFormats(t *testing.T) {
	t.Parallel()
	c := doc2md.New(nil)
	for _, tc := range []struct {
		name string
		rows [][]string
		want string
	}{
		{"ragged", [][]string{{"h1", "h2", "h3"}, {"a"}, {"b", "", "d"}},
			"| h1 | h2 | h3 |\n| --- | --- | --- |\n| a |  |  |\n| b |  | d |"},
		{"a wider body than header", [][]string{{"h"}, {"a", "b"}},
			"| h |  |\n| --- | --- |\n| a | b |"},
		{"pipes and markup", [][]string{{"k", "v"}, {"a|b", "<tag> & x"}},
			"| k | v |\n| --- | --- |\n| a\\|b | <tag> & x |"},
		{"space and line breaks", [][]string{{"k", "v"}, {"  padded  ", "line 1\nline 2"}},
			"| k | v |\n| --- | --- |\n| padded | line 1 line 2 |"},
		{"unicode", [][]string{{"名前", "😀"}, {"é", "ß"}},
			"| 名前 | 😀 |\n| --- | --- |\n| é | ß |"},
		{"a header alone", [][]string{{"only", "header"}},
			"| only | header |\n| --- | --- |"},
	} {
		for name, data := range tableIn(tc.rows) {
			md := convert(t, c, name, data)
			if name == "t.xlsx" {
				md = strings.TrimPrefix(md, "## Sheet1\n\n")
			}
			if md != tc.want {
				t.Errorf("%s in %s:\n%s\nwant\n%s", tc.name, name, md, tc.want)
			}
		}
	}
}

// Each table format is bounded by the same limits: one row over
// MaxRows, or a row one cell over MaxColumns, is refused with the key in
// every format.
func TestTableLimitsAgreeAcrossFormats(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{MaxRows: 3, MaxColumns: 3})
	for _, tc := range []struct {
		name, key string
		rows      [][]string
	}{
		{"rows", "attachments.max_rows", [][]string{{"h"}, {"1"}, {"2"}, {"3"}}},
		{"columns", "attachments.max_columns", [][]string{{"a", "b", "c"}, {"1", "2", "3", "4"}}},
	} {
		for name, data := range tableIn(tc.rows) {
			_, err := c.Convert(context.Background(), name, "", data)
			var e *doc2md.Error
			if !errors.As(err, &e) || e.Kind != doc2md.TooLarge || e.Limit != tc.key || e.Max != 3 {
				t.Errorf("%s over the limit in %s: %v; want TooLarge naming %s = 3", tc.name, name, err, tc.key)
			}
		}
		// One fewer fits.
		fits := tc.rows[:len(tc.rows)-1]
		if tc.name == "columns" {
			fits = [][]string{{"a", "b", "c"}, {"1", "2", "3"}}
		}
		for name, data := range tableIn(fits) {
			if _, err := c.Convert(context.Background(), name, "", data); err != nil {
				t.Errorf("%s at the limit in %s: %v", tc.name, name, err)
			}
		}
	}
}

// A document part whose bytes do not match its checksum is Unreadable,
// naming the part: the damage is reported, not converted.
func TestDamagedZipEntry(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	text := "the quick brown fox jumps over the lazy dog"
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		wp("", text) + `</w:body></w:document>`)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	i := bytes.Index(data, []byte("quick"))
	if i < 0 {
		t.Fatal("stored text not found")
	}
	data[i] = 'Q' // same length, wrong checksum
	_, err = doc2md.New(nil).Convert(context.Background(), "damaged.docx", "", data)
	var e *doc2md.Error
	if !errors.As(err, &e) || e.Kind != doc2md.Unreadable || !strings.Contains(err.Error(), "word/document.xml") {
		t.Errorf("a damaged entry: %v; want Unreadable naming word/document.xml", err)
	}
}
