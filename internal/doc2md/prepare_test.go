package doc2md_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// pdfRunner stands in for pdftotext: it answers out (pages end with a
// form feed, as pdftotext's do).
func pdfRunner(out string) doc2md.Runner {
	return doc2md.RunnerFunc(func(_ context.Context, _ string, _ []string, stdout, _ io.Writer) error {
		_, err := io.WriteString(stdout, out)
		return err
	})
}

// The real type comes from the bytes; the name and mime_type (the
// attachment's, else the data URL's) only choose among text formats, and
// the MIME type reported is the one converted.
func TestSniffChoosesAmongTextFormats(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{Runner: pdfRunner("pdf words\f"), PDFToText: "true"})
	for _, tc := range []struct {
		what, name, mime, url string
		data                  []byte
		wantMime, wantMD      string
	}{
		{"CSV by the attachment's mime_type", "notes", "text/csv", "", []byte("a,b\n1,2"), "text/csv", "| a | b |\n| --- | --- |\n| 1 | 2 |"},
		{"CSV by the data URL's type", "notes", "", "text/csv", []byte("a,b\n1,2"), "text/csv", "| a | b |\n| --- | --- |\n| 1 | 2 |"},
		{"mime_type before the data URL's", "notes", "text/plain", "text/csv", []byte("a,b"), "text/plain", "a,b"},
		{"TSV by name", "t.TSV", "", "", []byte("a\tb\n1\t2"), "text/csv", "| a | b |\n| --- | --- |\n| 1 | 2 |"},
		{"HTML sniffed whatever the name", "page.txt", "", "", []byte("<html><body><p>hi <b>there</b>"), "text/html", "hi **there**"},
		{"JSON by mime_type", "d", "application/json; charset=utf-8", "", []byte(`{"k":1}`), "application/json", "```json\n{\"k\":1}\n```"},
		{"Markdown by name", "n.markdown", "", "", []byte("# T\n\nx"), "text/markdown", "# T\n\nx"},
		{"text named .pdf is text", "fake.pdf", "application/pdf", "", []byte("just words"), "text/plain", "just words"},
		{"a PDF named .bin is a PDF", "r.bin", "application/octet-stream", "", doc2mdtest.PDF("x"), "application/pdf", "pdf words"},
		{"a DOCX named .txt is a DOCX", "d.txt", "text/plain", "", doc2mdtest.DOCX("H", nil, nil),
			"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "# H"},
	} {
		out, err := c.Prepare(context.Background(), []orchestrator.Attachment{{Type: orchestrator.AttachmentFile, Name: tc.name,
			MimeType: tc.mime, Content: doc2mdtest.DataURL(tc.url, tc.data)}})
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		if out[0].MimeType != tc.wantMime || out[0].Content != tc.wantMD || out[0].Size != int64(len(tc.data)) {
			t.Errorf("%s: %s %q (%d bytes); want %s %q (%d)", tc.what, out[0].MimeType, out[0].Content, out[0].Size, tc.wantMime, tc.wantMD, len(tc.data))
		}
	}
}

// Text must be UTF-8; text in another encoding is refused saying so,
// not as a type wunder does not know.
func TestTextMustBeUTF8(t *testing.T) {
	t.Parallel()
	_, err := doc2md.New(nil).Convert(context.Background(), "latin1.txt", "", []byte("caf\xe9 cr\xe8me"))
	var e *doc2md.Error
	if !errors.As(err, &e) || e.Kind != doc2md.Unsupported || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("Latin-1 text: %v; want Unsupported saying it is not UTF-8", err)
	}
}

// Data URLs as clients write them: base64 in either case, padded or not,
// with line breaks; URL-safe base64; percent-encoded text. Malformed ones
// are Unreadable, and one too large is refused from its length, before
// it is decoded.
func TestDecodeDataURL(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{MaxBytes: 8})
	for _, tc := range []struct{ url, mime, data string }{
		{"data:text/plain,hi%20u", "text/plain", "hi u"},
		{"data:text/plain;charset=utf-8;BASE64,aGk=", "text/plain", "hi"},
		{"data:;base64,aGk", "", "hi"},
		{"  data:text/plain;base64,aG\r\n k=\n", "text/plain", "hi"},
		{"data:application/octet-stream;base64," + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff}), "application/octet-stream", "\xfb\xff"},
		{"data:text/plain;base64,MTIzNDU2Nzg=", "text/plain", "12345678"}, // exactly MaxBytes
	} {
		mime, data, err := c.DecodeDataURL("x", tc.url)
		if err != nil || mime != tc.mime || string(data) != tc.data {
			t.Errorf("%q: %q %q %v; want %q %q", tc.url, mime, data, err, tc.mime, tc.data)
		}
	}
	for _, tc := range []struct {
		url   string
		kind  doc2md.Kind
		limit string
		says  string
	}{
		{"https://e.x/a.png", doc2md.Unreadable, "", "must be a data URL"},
		{"data:text/plain", doc2md.Unreadable, "", "without a comma"},
		{"data:text/plain;base64,a$b=", doc2md.Unreadable, "", "base64 is malformed"},
		{"data:text/plain,100%", doc2md.Unreadable, "", "text is malformed"},
		{"data:text/plain;base64,MTIzNDU2Nzg5", doc2md.TooLarge, "attachments.max_bytes", "9 bytes"},
		{"data:text/plain;base64," + strings.Repeat("%", 100), doc2md.TooLarge, "attachments.max_bytes", "about 75 bytes"},
		{"data:text/plain," + strings.Repeat("a", 25), doc2md.TooLarge, "attachments.max_bytes", ""},
	} {
		_, _, err := c.DecodeDataURL("x", tc.url)
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || e.Limit != tc.limit || !strings.Contains(err.Error(), tc.says) || e.Name != "x" {
			t.Errorf("%.40q: %v; want kind %d, limit %q, saying %q", tc.url, err, tc.kind, tc.limit, tc.says)
		}
	}
}

// Prepare names what has no name by its place, gives text a MIME type
// and clips it at MaxChars, passes every picture type a model takes as an
// image of its sniffed type, and refuses one it does not.
func TestPrepareShapes(t *testing.T) {
	t.Parallel()
	c := doc2md.New(&doc2md.Options{MaxChars: 5})
	if out, err := c.Prepare(context.Background(), nil); out != nil || err != nil {
		t.Errorf("no attachments: %v %v; want nil, nil", out, err)
	}
	var jpg, gf bytes.Buffer
	img := image.NewPaletted(image.Rect(0, 0, 2, 2), []color.Color{color.Black, color.White})
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&gf, img, nil); err != nil {
		t.Fatal(err)
	}
	out, err := c.Prepare(context.Background(), []orchestrator.Attachment{
		{Type: orchestrator.AttachmentText, Content: "abcdefgh"},
		{Type: orchestrator.AttachmentImage, Name: " ", Content: doc2mdtest.DataURL("image/png", jpg.Bytes())},
		{Type: orchestrator.AttachmentFile, Name: "g", Content: doc2mdtest.DataURL("application/octet-stream", gf.Bytes())},
		{Type: orchestrator.AttachmentText, Name: "md", MimeType: "text/markdown", Content: "# T"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []orchestrator.Attachment{
		{Type: "text", Name: "attachment 1", MimeType: "text/plain", Size: 8,
			Content: "abcde\n\n[clipped: the document has 8 characters; the first 5 are shown]"},
		{Type: "image", Name: "attachment 2", MimeType: "image/jpeg", Size: int64(jpg.Len()), Content: doc2mdtest.DataURL("image/jpeg", jpg.Bytes())},
		{Type: "image", Name: "g", MimeType: "image/gif", Size: int64(gf.Len()), Content: doc2mdtest.DataURL("image/gif", gf.Bytes())},
		{Type: "text", Name: "md", MimeType: "text/markdown", Size: 3, Content: "# T"},
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("attachment %d = %+v;\nwant %+v", i, out[i], want[i])
		}
	}
	bmp := append([]byte("BM"), make([]byte, 60)...)
	for _, tc := range []struct {
		a    orchestrator.Attachment
		name string
		says string
	}{
		{orchestrator.Attachment{Type: "image", Content: doc2mdtest.DataURL("", bmp)}, "attachment 1", "must be PNG, JPEG, GIF or WebP, got image/bmp"},
		{orchestrator.Attachment{Type: "image", Name: "d.docx", Content: doc2mdtest.DataURL("", doc2mdtest.DOCX("h", nil, nil))}, "d.docx", "the content is a ZIP archive"},
		{orchestrator.Attachment{Type: "image", Name: "p", Content: doc2mdtest.DataURL("", doc2mdtest.PDF("x"))}, "p", "the content is application/pdf"},
	} {
		_, err := c.Prepare(context.Background(), []orchestrator.Attachment{tc.a})
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != doc2md.Unsupported || e.Name != tc.name || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want Unsupported naming %q and saying %q", tc.name, err, tc.name, tc.says)
		}
	}
}

// What pdftotext writes becomes the Markdown: pages apart by a rule, a
// note when there may be more pages than converted, its first error line
// when it fails, a refusal when the PDF has no text; its output counts
// against max_output_bytes beyond what is kept. It reads the PDF from a
// file of its own directory, removed afterwards.
func TestPDFOutput(t *testing.T) {
	t.Parallel()
	pdf := doc2mdtest.PDF("x")
	run := func(opts doc2md.Options, r doc2md.Runner) (string, error) {
		opts.Runner, opts.PDFToText = r, "true"
		return doc2md.New(&opts).Convert(context.Background(), "r.pdf", "", pdf)
	}
	if md, err := run(doc2md.Options{}, pdfRunner("\none\n\fpage two\n\f\f")); err != nil || md != "one\n\n---\n\npage two" {
		t.Errorf("two pages: %q %v", md, err)
	}
	if md, err := run(doc2md.Options{MaxPDFPages: 2}, pdfRunner("a\fb\f")); err != nil ||
		md != "a\n\n---\n\nb\n\n[only the first 2 pages are converted (attachments.max_pdf_pages)]" {
		t.Errorf("at max_pdf_pages: %q %v", md, err)
	}
	failing := doc2md.RunnerFunc(func(_ context.Context, _ string, _ []string, _, stderr io.Writer) error {
		_, _ = io.WriteString(stderr, "Syntax Error: Couldn't read xref table\nmore\n")
		return errors.New("exit status 1")
	})
	quiet := doc2md.RunnerFunc(func(context.Context, string, []string, io.Writer, io.Writer) error {
		return errors.New("exit status 2")
	})
	huge := pdfRunner(strings.Repeat("words ", 2000))
	for _, tc := range []struct {
		what  string
		opts  doc2md.Options
		r     doc2md.Runner
		kind  doc2md.Kind
		limit string
		says  string
	}{
		{"its error", doc2md.Options{}, failing, doc2md.Unreadable, "", "pdftotext cannot read it: Syntax Error: Couldn't read xref table"},
		{"no error text", doc2md.Options{}, quiet, doc2md.Unreadable, "", "exit status 2"},
		{"no text", doc2md.Options{}, pdfRunner("\n\f \n\f"), doc2md.Unreadable, "", "no text (a scanned document?"},
		{"past max_output_bytes", doc2md.Options{MaxChars: 10, MaxOutputBytes: 5000}, huge, doc2md.TooLarge, "attachments.max_output_bytes", "12000 bytes"},
	} {
		_, err := run(tc.opts, tc.r)
		var e *doc2md.Error
		if !errors.As(err, &e) || e.Kind != tc.kind || e.Limit != tc.limit || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want kind %d, limit %q, saying %q", tc.what, err, tc.kind, tc.limit, tc.says)
		}
	}
	var dir string
	var seen []byte
	look := doc2md.RunnerFunc(func(_ context.Context, d string, args []string, stdout, _ io.Writer) error {
		dir = d
		var err error
		seen, err = os.ReadFile(filepath.Join(d, args[len(args)-2]))
		_, _ = io.WriteString(stdout, "ok")
		return err
	})
	if _, err := run(doc2md.Options{}, look); err != nil || !bytes.Equal(seen, pdf) {
		t.Fatalf("pdftotext read %d bytes (%v); want the PDF's %d", len(seen), err, len(pdf))
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pdftotext's directory %s is left behind: %v", dir, err)
	}
}

// Plain text needs no conversion slot: it is not held up by documents
// converting; a document that waits for one is given up with its caller.
func TestSlotsAndText(t *testing.T) {
	t.Parallel()
	started, hold := make(chan struct{}), make(chan struct{})
	blocks := doc2md.RunnerFunc(func(_ context.Context, _ string, _ []string, stdout, _ io.Writer) error {
		close(started)
		<-hold
		_, err := io.WriteString(stdout, "done")
		return err
	})
	c := doc2md.New(&doc2md.Options{MaxConcurrent: 1, Runner: blocks, PDFToText: "true"})
	done := make(chan error, 1)
	go func() {
		_, err := c.Convert(context.Background(), "a.pdf", "", doc2mdtest.PDF("x"))
		done <- err
	}()
	<-started
	if md, err := c.Convert(context.Background(), "n.md", "", []byte("# note")); err != nil || md != "# note" {
		t.Errorf("text while the slot is taken: %q %v", md, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Convert(ctx, "b.html", "", []byte("<p>x"))
	var e *doc2md.Error
	if errors.As(err, &e) || !errors.Is(err, context.Canceled) {
		t.Errorf("waiting for a slot, given up: %v; want context.Canceled, not a refusal", err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An Error names the attachment first; each kind unwraps to the sentinel
// its front-ends map (Busy to unavailable, the others to invalid
// argument).
func TestErrorShape(t *testing.T) {
	t.Parallel()
	for _, k := range []doc2md.Kind{doc2md.TooLarge, doc2md.Unsupported, doc2md.Unreadable, doc2md.TooComplex, doc2md.Busy} {
		e := &doc2md.Error{Name: "a b", Kind: k, Msg: "why"}
		if e.Error() != `attachment "a b": why` {
			t.Errorf("Error() = %q", e.Error())
		}
		if got := errors.Is(e, orchestrator.ErrUnavailable); got != (k == doc2md.Busy) || errors.Is(e, orchestrator.ErrInvalidArgument) == got {
			t.Errorf("kind %d: unavailable %v, invalid argument %v", k, got, errors.Is(e, orchestrator.ErrInvalidArgument))
		}
	}
	if got := doc2md.New(nil).MaxBytes(); got != 10<<20 {
		t.Errorf("default MaxBytes %d; want 10 MiB", got)
	}
}
