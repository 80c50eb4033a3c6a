package doc2md_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/internal/doc2md/doc2mdtest"
	"github.com/wunder/wunder/orchestrator"
)

// FuzzConvert feeds the converters untrusted bytes: they may refuse them,
// always with an *Error, never panic, and never answer more than
// MaxChars characters plus the clip note. (PDF goes to a pdftotext that is
// not there: the subprocess is not what is fuzzed.)
func FuzzConvert(f *testing.F) {
	for _, seed := range [][]byte{
		doc2mdtest.DOCX("H", []string{"p"}, [][]string{{"a", "b"}}), doc2mdtest.PPTX("s"), doc2mdtest.PNG(),
		doc2mdtest.PDF("x"), []byte("<p>hi <b>there</b></p>"), []byte("a,b\n1,2\n"), []byte(`{"k":1}`),
		doc2mdtest.Zip(map[string]string{"word/document.xml": "<w:p><w:t>unclosed"}),
	} {
		f.Add("f", seed)
	}
	f.Add("x.csv", []byte("a,\"b\n"))
	f.Add("x.html", []byte("<table><tr><td>1<table><tr><td>2"))
	c := doc2md.New(&doc2md.Options{MaxChars: 1000, MaxUnzipBytes: 1 << 20, PDFToText: "no-such-pdftotext"})
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		md, err := c.Convert(context.Background(), name, "", data)
		if err != nil {
			var e *doc2md.Error
			if !errors.As(err, &e) || !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("error %v is not a *doc2md.Error", err)
			}
			return
		}
		if n := len([]rune(md)); n > 1000+200 {
			t.Fatalf("%d characters of Markdown, over MaxChars", n)
		}
	})
}
