package doc2md_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// rows returns n rows of cols cells each ("rRcC").
func rows(n, cols int) [][]string {
	out := make([][]string, n)
	for r := range out {
		for c := range cols {
			out[r] = append(out[r], fmt.Sprintf("r%dc%d", r, c))
		}
	}
	return out
}

// nested returns depth copies of open, then inner, then depth of close.
func nested(open, inner, close string, depth int) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

// docxBody is a Word document whose body is body.
func docxBody(body string) []byte {
	return doc2mdtest.Zip(map[string]string{"word/document.xml": `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		body + `</w:body></w:document>`})
}

// zipOfEntries is an archive of n small entries, one of them a DOCX's
// document.
func zipOfEntries(n int) []byte {
	files := map[string]string{"word/document.xml": "<w:document/>"}
	for i := range n - 1 {
		files[fmt.Sprintf("word/media/%d.txt", i)] = "x"
	}
	return doc2mdtest.Zip(files)
}

// Every limit refuses what is over it, with the kind its status comes
// from, the limit's configuration key and its value, and a message that
// names both; errors.Is finds ErrInvalidArgument.
func TestLimits(t *testing.T) {
	t.Parallel()
	small := doc2md.Options{MaxBytes: 4 << 20, MaxRows: 10, MaxColumns: 5, MaxCells: 30, MaxXMLDepth: 20,
		MaxOutputBytes: 4096, MaxZipEntries: 20, MaxUnzipBytes: 2 << 20}
	wideSheet := doc2mdtest.Workbook(`<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>`,
		"xl/worksheets/sheet1.xml", doc2mdtest.Sheet(`<row r="1"><c r="XFD1" t="inlineStr"><is><t>x</t></is></c></row>`))
	var sst strings.Builder
	for range 31 {
		sst.WriteString("<si><t>s</t></si>")
	}
	big := strings.Repeat("word ", 1000)
	for _, tc := range []struct {
		name  string
		data  []byte
		opts  *doc2md.Options
		kind  doc2md.Kind
		limit string
		max   int64
	}{
		{"wide.xlsx", wideSheet, nil, doc2md.TooLarge, "attachments.max_columns", 5},
		{"long.xlsx", doc2mdtest.XLSX(rows(11, 1)), nil, doc2md.TooLarge, "attachments.max_rows", 10},
		{"cells.xlsx", doc2mdtest.XLSX(rows(7, 5)), nil, doc2md.TooLarge, "attachments.max_cells", 30},
		{"strings.xlsx", doc2mdtest.XLSX(rows(1, 1), "xl/sharedStrings.xml", "<sst>"+sst.String()+"</sst>"), nil,
			doc2md.TooLarge, "attachments.max_cells", 30},
		{"deep.xlsx", doc2mdtest.Workbook(`<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets>`,
			"xl/worksheets/sheet1.xml", doc2mdtest.Sheet(nested("<x>", "", "</x>", 30))), nil, doc2md.TooComplex, "attachments.max_xml_depth", 20},
		{"deep.docx", docxBody(nested("<w:tbl><w:tr><w:tc>", "<w:p><w:r><w:t>x</w:t></w:r></w:p>", "</w:tc></w:tr></w:tbl>", 10)), nil,
			doc2md.TooComplex, "attachments.max_xml_depth", 20},
		{"long.docx", doc2mdtest.DOCX("H", nil, rows(11, 1)), nil, doc2md.TooLarge, "attachments.max_rows", 10},
		{"wide.docx", doc2mdtest.DOCX("H", nil, rows(1, 6)), nil, doc2md.TooLarge, "attachments.max_columns", 5},
		{"cells.docx", doc2mdtest.DOCX("H", nil, append(rows(6, 1), make([]string, 5))), nil, doc2md.TooLarge, "attachments.max_cells", 30},
		{"text.docx", doc2mdtest.DOCX("H", []string{big}, nil), nil, doc2md.TooLarge, "attachments.max_output_bytes", 4096},
		{"held.docx", doc2mdtest.DOCX("H", nil, [][]string{{big}}), nil, doc2md.TooLarge, "attachments.max_output_bytes", 4096},
		{"deep.pptx", doc2mdtest.PPTX(nested("<a:x>", "s", "</a:x>", 30)), nil, doc2md.TooComplex, "attachments.max_xml_depth", 20},
		{"deep.html", []byte(nested("<div>", "x", "</div>", 30)), nil, doc2md.TooComplex, "attachments.max_xml_depth", 20},
		{"italics.html", []byte("<p>" + strings.Repeat("<i>", 30)), nil, doc2md.TooComplex, "attachments.max_xml_depth", 20},
		{"wide.html", []byte("<table><tr>" + strings.Repeat("<td>x", 6) + "</table>"), nil, doc2md.TooLarge, "attachments.max_columns", 5},
		{"long.html", []byte("<table>" + strings.Repeat("<tr><td>x", 11) + "</table>"), nil, doc2md.TooLarge, "attachments.max_rows", 10},
		{"padded.html", []byte("<table><tr>" + strings.Repeat("<td>h", 5) + strings.Repeat("<tr><td>x", 6) + "</table>"), nil,
			doc2md.TooLarge, "attachments.max_cells", 30},
		{"text.html", []byte("<p>" + big + "</p>"), nil, doc2md.TooLarge, "attachments.max_output_bytes", 4096},
		{"wide.csv", []byte(strings.Repeat(",", 5) + "\n"), nil, doc2md.TooLarge, "attachments.max_columns", 5},
		{"long.csv", []byte(strings.Repeat("a\n", 11)), nil, doc2md.TooLarge, "attachments.max_rows", 10},
		{"padded.csv", []byte("a,b,c,d,e\n" + strings.Repeat("x\n", 6)), nil, doc2md.TooLarge, "attachments.max_cells", 30},
		{"big.json", []byte(`{"k":"` + big + `"}`), nil, doc2md.TooLarge, "attachments.max_output_bytes", 4096},
		{"big.txt", []byte(big), &doc2md.Options{MaxBytes: 1000}, doc2md.TooLarge, "attachments.max_bytes", 1000},
		{"bomb.docx", docxBody("<w:p><w:r><w:t>" + strings.Repeat(" ", 3<<20) + "</w:t></w:r></w:p>"), nil,
			doc2md.TooLarge, "attachments.max_unzip_bytes", 2 << 20},
		{"ratio.docx", docxBody("<w:p><w:r><w:t>" + strings.Repeat(" ", 2<<20) + "</w:t></w:r></w:p>"),
			&doc2md.Options{MaxUnzipRatio: 100}, doc2md.TooLarge, "attachments.max_unzip_ratio", 100},
		{"entries.docx", zipOfEntries(21), nil, doc2md.TooLarge, "attachments.max_zip_entries", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := small
			if tc.opts != nil {
				opts = *tc.opts
			}
			_, err := doc2md.New(&opts).Convert(context.Background(), tc.name, "", tc.data)
			var e *doc2md.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v; want a *doc2md.Error", err)
			}
			if e.Kind != tc.kind || e.Limit != tc.limit || e.Max != tc.max {
				t.Fatalf("err = %v (kind %d, limit %q = %d); want kind %d, limit %q = %d", err, e.Kind, e.Limit, e.Max, tc.kind, tc.limit, tc.max)
			}
			if !strings.Contains(err.Error(), tc.limit) || !strings.Contains(err.Error(), fmt.Sprint(tc.max)) || e.Name != tc.name {
				t.Errorf("%q does not name the attachment, the limit and its value", err)
			}
			if !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Errorf("%v does not wrap ErrInvalidArgument", err)
			}
		})
	}
}

// Within the limits the same shapes convert: a page of 100,000 <p>s is
// long, not deep, and a table exactly at the limits is accepted.
func TestAtTheLimits(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{MaxRows: 6, MaxColumns: 5, MaxCells: 30, MaxXMLDepth: 20})
	md := convert(t, c, "p.html", []byte(strings.Repeat("<p>para", 100000)))
	wantContains(t, md, "para\n\npara\n\npara")
	md = convert(t, c, "t.xlsx", doc2mdtest.XLSX(rows(6, 5)))
	wantContains(t, md, "| r0c0 | r0c1 | r0c2 | r0c3 | r0c4 |\n| --- |", "| r5c0 | r5c1 | r5c2 | r5c3 | r5c4 |")
	md = convert(t, c, "t.csv", []byte(strings.Repeat("a,b,c,d,e\n", 6)))
	wantContains(t, md, "| a | b | c | d | e |")
	md = convert(t, c, "n.docx", docxBody(nested("<w:tbl><w:tr><w:tc>", "<w:p><w:r><w:t>in</w:t></w:r></w:p>", "</w:tc></w:tr></w:tbl>", 4)))
	if !strings.Contains(md, "in") || strings.Count(md, "\n") != 1 {
		t.Errorf("nested tables: want one row holding the inner ones on one line:\n%s", md)
	}
}

// A conversion past Options.Timeout is TooComplex, naming timeout_s; one
// given up by its caller is a cancellation, not the document's fault.
func TestTimeLimit(t *testing.T) {
	t.Parallel()
	doc := doc2mdtest.DOCX("H", strings.Split(strings.Repeat("p,", 2000), ","), nil)
	_, err := doc2md.New(&doc2md.Options{Timeout: time.Nanosecond}).Convert(context.Background(), "slow.docx", "", doc)
	var e *doc2md.Error
	if !errors.As(err, &e) || e.Kind != doc2md.TooComplex || e.Limit != "attachments.timeout_s" {
		t.Errorf("past the timeout: %v; want TooComplex naming attachments.timeout_s", err)
	}

	// pdftotext that does not end before the timeout.
	waits := doc2md.RunnerFunc(func(ctx context.Context, _ string, _ []string, _, _ io.Writer) error {
		<-ctx.Done()
		return ctx.Err()
	})
	_, err = doc2md.New(&doc2md.Options{Timeout: 20 * time.Millisecond, Runner: waits, PDFToText: "true"}).
		Convert(context.Background(), "slow.pdf", "", doc2mdtest.PDF("x"))
	if !errors.As(err, &e) || e.Kind != doc2md.TooComplex || e.Limit != "attachments.timeout_s" {
		t.Errorf("pdftotext past the timeout: %v; want TooComplex naming attachments.timeout_s", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = doc2md.New(nil).Convert(ctx, "gone.docx", "", doc)
	if errors.As(err, &e) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled by the caller: %v; want context.Canceled, not a *doc2md.Error", err)
	}
}

// At most MaxConcurrent documents convert at once; one more waits up to
// Timeout for a turn, then is Busy: ErrUnavailable with a retry hint,
// naming attachments.max_concurrent.
func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	started, hold := make(chan struct{}), make(chan struct{})
	blocks := doc2md.RunnerFunc(func(_ context.Context, _ string, _ []string, stdout, _ io.Writer) error {
		close(started)
		<-hold // holds its slot whatever its context says
		_, err := io.WriteString(stdout, "done")
		return err
	})
	c := doc2md.New(&doc2md.Options{MaxConcurrent: 1, Timeout: 50 * time.Millisecond, Runner: blocks, PDFToText: "true"})
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = c.Convert(context.Background(), "first.pdf", "", doc2mdtest.PDF("x")) })
	<-started
	_, err := c.Convert(context.Background(), "second.docx", "", doc2mdtest.DOCX("H", nil, nil))
	var e *doc2md.Error
	if !errors.As(err, &e) || e.Kind != doc2md.Busy || e.Limit != "attachments.max_concurrent" || e.Max != 1 {
		t.Fatalf("a second conversion: %v; want Busy naming attachments.max_concurrent = 1", err)
	}
	if _, ok := orchestrator.RetryAfter(err); !errors.Is(err, orchestrator.ErrUnavailable) || errors.Is(err, orchestrator.ErrInvalidArgument) || !ok {
		t.Errorf("%v: want ErrUnavailable with a retry hint", err)
	}
	close(hold)
	wg.Wait()
	if _, err := c.Convert(context.Background(), "third.docx", "", doc2mdtest.DOCX("H", nil, nil)); err != nil {
		t.Errorf("after the first ended: %v", err)
	}
}

// Convert clips at MaxChars with a note giving the document's length,
// kept or not; ConvertAll gives it whole.
func TestClipAndConvertAll(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{MaxChars: 100})
	doc := doc2mdtest.DOCX("Title", strings.Split(strings.Repeat("paragraph é,", 3000), ","), nil)
	all, err := c.ConvertAll(context.Background(), "d.docx", "", doc)
	if err != nil {
		t.Fatal(err)
	}
	n := len([]rune(all))
	if n < 30000 || !strings.HasPrefix(all, "# Title\n\nparagraph é") || strings.Contains(all, "[clipped") {
		t.Fatalf("ConvertAll: %d characters: %.200q", n, all)
	}
	md := convert(t, c, "d.docx", doc)
	want := string([]rune(all)[:100]) + fmt.Sprintf("\n\n[clipped: the document has %d characters; the first 100 are shown]", n)
	if md != want {
		t.Errorf("Convert = %q;\nwant %q", md, want)
	}
}

// A ZIP64 end record that points past the file is no archive, not a
// panic; one that declares too many entries is refused before archive/zip
// reads them.
func TestZipEndRecords(t *testing.T) {
	t.Parallel()
	le64 := func(v uint64) string { b := make([]byte, 8); binary.LittleEndian.PutUint64(b, v); return string(b) }
	eocd := "PK\x05\x06" + strings.Repeat("\x00", 6) + "\xff\xff" + strings.Repeat("\x00", 10)
	short := "PK\x03\x04" + "PK\x06\x07" + "\x00\x00\x00\x00" + le64(100) + "\x01\x00\x00\x00" + eocd
	c := doc2md.New(&doc2md.Options{MaxZipEntries: 20})
	for _, data := range []string{short, short[:len(short)-22] + strings.Repeat("\x00", 30) + eocd} {
		_, err := c.Convert(context.Background(), "z.docx", "", []byte(data))
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != doc2md.TooLarge || e.Limit != "attachments.max_zip_entries" {
			t.Errorf("%q: %v; want max_zip_entries", data, err)
		}
	}
}

// An office file is read as a stream: the limits hold for a document
// built by another writer too (compression Store, entries in any order).
func TestStoredZip(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, `<w:document xmlns:w="x"><w:body><w:p><w:r><w:t>stored</w:t></w:r></w:p></w:body></w:document>`); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	wantContains(t, convert(t, doc2md.New(nil), "s.docx", b.Bytes()), "stored")
}
