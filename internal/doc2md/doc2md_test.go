package doc2md_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

func convert(t *testing.T, c *doc2md.Converter, name string, data []byte) string {
	t.Helper()
	md, err := c.Convert(context.Background(), name, "", data)
	if err != nil {
		t.Fatalf("Convert(%s): %v", name, err)
	}
	return md
}

func kindOf(err error) doc2md.Kind {
	var e *doc2md.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func wantContains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, got)
		}
	}
}

func TestPDF(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	md := convert(t, doc2md.New(nil), "r.pdf", doc2mdtest.PDF("Quarterly revenue grew", "Second page"))
	wantContains(t, md, "Quarterly revenue grew", "---", "Second page")

	// Only max_pdf_pages pages, and a note saying so.
	md = convert(t, doc2md.New(&doc2md.Options{MaxPDFPages: 1}), "r.pdf", doc2mdtest.PDF("First", "Hidden"))
	wantContains(t, md, "First", "only the first 1 pages")
	if strings.Contains(md, "Hidden") {
		t.Errorf("page 2 converted with max_pdf_pages 1:\n%s", md)
	}

	// A broken PDF is unreadable, with pdftotext's reason.
	_, err := doc2md.New(nil).Convert(context.Background(), "bad.pdf", "", []byte("%PDF-1.4\nnonsense"))
	if kindOf(err) != doc2md.Unreadable {
		t.Errorf("broken PDF: %v; want Unreadable", err)
	}
}

func TestPDFWithoutPDFToText(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{PDFToText: "no-such-pdftotext"})
	_, err := c.Convert(context.Background(), "r.pdf", "", doc2mdtest.PDF("x"))
	if kindOf(err) != doc2md.Unsupported || !strings.Contains(err.Error(), "pdftotext") {
		t.Errorf("err = %v; want Unsupported naming pdftotext", err)
	}
}

func TestPDFRunner(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed")
	}
	var gotArgs []string
	runner := doc2md.RunnerFunc(func(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
		gotArgs = args
		_, err := io.WriteString(stdout, "from the runner\f")
		return err
	})
	md := convert(t, doc2md.New(&doc2md.Options{Runner: runner, MaxPDFPages: 7}), "r.pdf", doc2mdtest.PDF("x"))
	if md != "from the runner" {
		t.Errorf("Markdown = %q; want the runner's output", md)
	}
	if want := "-layout -enc UTF-8 -l 7 in.pdf -"; len(gotArgs) == 0 || !strings.HasSuffix(gotArgs[0], "/pdftotext") || strings.Join(gotArgs[1:], " ") != want {
		t.Errorf("args = %q; want /.../pdftotext %s", gotArgs, want)
	}
}

func TestDOCX(t *testing.T) {
	t.Parallel()
	md := convert(t, doc2md.New(nil), "a.docx", doc2mdtest.DOCX("Plan", []string{"First paragraph."}, [][]string{{"k", "v"}, {"a|b", "1"}}))
	wantContains(t, md, "# Plan\n", "First paragraph.", "| k | v |\n| --- | --- |\n| a\\|b | 1 |")
}

func TestPPTX(t *testing.T) {
	t.Parallel()
	md := convert(t, doc2md.New(nil), "s.pptx", doc2mdtest.PPTX("Intro", "Results"))
	wantContains(t, md, "## Slide 1\n\nIntro", "## Slide 2\n\nResults")
}

func TestXLSX(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	for cell, v := range map[string]any{"A1": "name", "B1": "qty", "A2": "apple", "B2": 3} {
		if err := f.SetCellValue("Sheet1", cell, v); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	md := convert(t, doc2md.New(nil), "t.xlsx", b.Bytes())
	wantContains(t, md, "## Sheet1", "| name | qty |", "| apple | 3 |")
}

func TestHTMLCSVText(t *testing.T) {
	t.Parallel()
	c := doc2md.New(nil)
	md := convert(t, c, "p.html", []byte(`<html><head><title>x</title><script>alert(1)</script></head><body>
<h2>Title</h2><p>Some <b>bold</b> and <a href="https://e.x/">a link</a>.</p><ul><li>one</li><li>two</li></ul>
<table><tr><th>h</th></tr><tr><td>c</td></tr></table></body></html>`))
	wantContains(t, md, "## Title", "**bold**", "[a link](https://e.x/)", "- one\n- two", "| h |\n| --- |\n| c |")
	if strings.Contains(md, "alert") {
		t.Errorf("script kept:\n%s", md)
	}
	md = convert(t, c, "d.csv", []byte("a,b\n1,\"x,y\"\n"))
	wantContains(t, md, "| a | b |\n| --- | --- |\n| 1 | x,y |")
	md = convert(t, c, "d.json", []byte(`{"k":1}`))
	wantContains(t, md, "```json\n{\"k\":1}\n```")
	if md := convert(t, c, "n.md", []byte("# Notes\n\ntext")); md != "# Notes\n\ntext" {
		t.Errorf("Markdown changed: %q", md)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := doc2md.New(&doc2md.Options{MaxBytes: 1000, MaxUnzipBytes: 10000})
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 64)...)
	for _, tc := range []struct {
		name string
		data []byte
		want doc2md.Kind
	}{
		{"prog", elf, doc2md.Unsupported},
		{"big.txt", bytes.Repeat([]byte("a"), 1001), doc2md.TooLarge},
		{"bomb.docx", doc2mdtest.Zip(map[string]string{"word/document.xml": strings.Repeat("<w:p/>", 5000)}), doc2md.TooLarge},
		{"other.zip", doc2mdtest.Zip(map[string]string{"a.txt": "x"}), doc2md.Unsupported},
		{"pic.png", doc2mdtest.PNG(), doc2md.Unsupported},
	} {
		_, err := c.Convert(ctx, tc.name, "", tc.data)
		if got := kindOf(err); got != tc.want {
			t.Errorf("%s: err = %v (kind %d); want kind %d", tc.name, err, got, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: error %q does not name the attachment", tc.name, err)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	md := convert(t, doc2md.New(&doc2md.Options{MaxChars: 100}), "long.txt", []byte(strings.Repeat("é", 150)))
	if !strings.HasPrefix(md, strings.Repeat("é", 100)+"\n\n[clipped: the document has 150 characters; the first 100 are shown]") {
		t.Errorf("clipped = %q", md)
	}
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := doc2md.New(&doc2md.Options{MaxBytes: 1 << 20, MaxCount: 3, MaxTotalBytes: 1<<20 + 10})
	in := []orchestrator.Attachment{
		{Type: "text", Name: "note", Content: "plain words"},
		{Type: "file", Name: "a.docx", Content: doc2mdtest.DataURL("application/octet-stream", doc2mdtest.DOCX("H", []string{"body"}, nil))},
		{Type: "file", Name: "pic", Content: doc2mdtest.DataURL("application/octet-stream", doc2mdtest.PNG())},
	}
	out, err := c.Prepare(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Content != "plain words" || out[0].Type != "text" {
		t.Errorf("text: %+v", out[0])
	}
	if out[1].Type != "file" || !strings.Contains(out[1].Content, "# H") || !strings.Contains(out[1].MimeType, "wordprocessingml") {
		t.Errorf("docx: %+v", out[1])
	}
	if out[2].Type != "image" || !strings.HasPrefix(out[2].Content, "data:image/png;base64,") || out[2].MimeType != "image/png" {
		t.Errorf("a file that is a picture: %+v", out[2])
	}

	for _, tc := range []struct {
		what string
		in   []orchestrator.Attachment
		want doc2md.Kind
		name string
	}{
		{"bad base64", []orchestrator.Attachment{{Type: "file", Name: "x.pdf", Content: "data:application/pdf;base64,%%%"}}, doc2md.Unreadable, "x.pdf"},
		{"not a data URL", []orchestrator.Attachment{{Type: "image", Name: "i", Content: "https://e.x/i.png"}}, doc2md.Unreadable, "i"},
		{"image that is text", []orchestrator.Attachment{{Type: "image", Name: "t.png", Content: doc2mdtest.DataURL("image/png", []byte("hello"))}}, doc2md.Unsupported, "t.png"},
		{"unknown type", []orchestrator.Attachment{{Type: "video", Name: "v"}}, doc2md.Unreadable, "v"},
		{"too many", make([]orchestrator.Attachment, 4), doc2md.TooLarge, ""},
		{"too large", []orchestrator.Attachment{{Type: "file", Name: "big", Content: doc2mdtest.DataURL("text/plain", bytes.Repeat([]byte("a"), 1<<20+1))}}, doc2md.TooLarge, "big"},
		{"total", []orchestrator.Attachment{{Type: "text", Name: "a", Content: strings.Repeat("a", 1<<20)}, {Type: "text", Name: "b", Content: strings.Repeat("b", 11)}}, doc2md.TooLarge, "b"},
	} {
		_, err := c.Prepare(ctx, tc.in)
		if got := kindOf(err); got != tc.want {
			t.Errorf("%s: err = %v; want kind %d", tc.what, err, tc.want)
			continue
		}
		if !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("%s: %v does not wrap ErrInvalidArgument", tc.what, err)
		}
		var e *doc2md.Error
		if errors.As(err, &e) && tc.name != "" && e.Name != tc.name {
			t.Errorf("%s: names %q; want %q", tc.what, e.Name, tc.name)
		}
	}
}

// The padding bombs of before: a CSV whose first row is very wide and the
// rest short, and many HTML tables padding a wide header row over short
// rows. The default limits refuse them before any row is padded.
func TestDefaultsRefusePaddingBombs(t *testing.T) {
	t.Parallel()
	c := doc2md.New(nil)
	wide := strings.Repeat(",", 200000) + "\n" + strings.Repeat("a\n", 500_000)
	tbl := "<table><tr>" + strings.Repeat("<td>h</td>", 1000) + "</tr>" + strings.Repeat("<tr><td>a</td></tr>", 2000) + "</table>"
	for _, tc := range []struct {
		name, data, limit string
	}{
		{"w.csv", wide, "attachments.max_columns"},
		{"t.html", strings.Repeat(tbl, 100), "attachments.max_cells"},
	} {
		_, err := c.Convert(context.Background(), tc.name, "", []byte(tc.data))
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != doc2md.TooLarge || e.Limit != tc.limit {
			t.Errorf("%s: %v; want TooLarge naming %s", tc.name, err, tc.limit)
		}
	}
}
