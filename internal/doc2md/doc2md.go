package doc2md

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// Kind says why an attachment cannot be used; front-ends map it to their
// codes (HTTP 413, 415, 400).
type Kind int

// Kinds of [Error].
const (
	// TooLarge: over a size or count limit (HTTP 413).
	TooLarge Kind = iota + 1
	// Unsupported: a type wunder does not convert (HTTP 415).
	Unsupported
	// Unreadable: malformed (bad data URL or base64, a broken document;
	// HTTP 400).
	Unreadable
)

// Error is an attachment that cannot be used. It wraps
// [orchestrator.ErrInvalidArgument], so front-ends without a finer code
// report it as a bad request.
type Error struct {
	// Name is the attachment's name as the client sent it.
	Name string
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("attachment %q: %s", e.Name, e.Msg) }

// Unwrap makes errors.Is(err, orchestrator.ErrInvalidArgument) hold.
func (e *Error) Unwrap() error { return orchestrator.ErrInvalidArgument }

func errorf(name string, k Kind, format string, args ...any) *Error {
	return &Error{Name: name, Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Options bound the conversion. Zero values mean the defaults stated; nil
// *Options passed to [New] means all of them.
type Options struct {
	// MaxBytes bounds one attachment, decoded. Default 10 MiB.
	MaxBytes int64
	// MaxCount bounds the attachments of one request. Default 10.
	MaxCount int
	// MaxTotalBytes bounds the attachments of one request. Default 20 MiB.
	MaxTotalBytes int64
	// MaxPDFPages: pages of a PDF converted. Default 100.
	MaxPDFPages int
	// MaxChars bounds the Markdown of one attachment (clipped with a
	// note). Default 200000.
	MaxChars int
	// MaxUnzipBytes bounds what is read from an office file's ZIP, all
	// entries together. Default 64 MiB.
	MaxUnzipBytes int64
	// Timeout bounds one pdftotext run. Default 30s.
	Timeout time.Duration
	// Runner runs pdftotext; nil = directly, as a child of this process.
	Runner Runner
	// PDFToText is the pdftotext executable, a name on PATH or a path.
	// Default "pdftotext".
	PDFToText string
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 10 << 20
	}
	if o.MaxCount <= 0 {
		o.MaxCount = 10
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = 20 << 20
	}
	if o.MaxPDFPages <= 0 {
		o.MaxPDFPages = 100
	}
	if o.MaxChars <= 0 {
		o.MaxChars = 200000
	}
	if o.MaxUnzipBytes <= 0 {
		o.MaxUnzipBytes = 64 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Runner == nil {
		o.Runner = execRunner{}
	}
	if o.PDFToText == "" {
		o.PDFToText = "pdftotext"
	}
	return o
}

// Converter converts attachments. It is safe for concurrent use.
type Converter struct {
	opts Options
}

// New returns a converter bounded by opts (nil = defaults).
func New(opts *Options) *Converter {
	var o Options
	if opts != nil {
		o = *opts
	}
	return &Converter{opts: o.withDefaults()}
}

// MaxBytes is the limit of one attachment, for front-ends that read a
// file from a multipart body.
func (c *Converter) MaxBytes() int64 { return c.opts.MaxBytes }

// formats the converter recognises.
const (
	fmtPDF   = "pdf"
	fmtDOCX  = "docx"
	fmtXLSX  = "xlsx"
	fmtPPTX  = "pptx"
	fmtHTML  = "html"
	fmtCSV   = "csv"
	fmtJSON  = "json"
	fmtText  = "text"
	fmtImage = "image"
)

// mimeOf maps formats to the MIME type reported for them.
var mimeOf = map[string]string{
	fmtPDF:  "application/pdf",
	fmtDOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	fmtXLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	fmtPPTX: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	fmtHTML: "text/html",
	fmtCSV:  "text/csv",
	fmtJSON: "application/json",
	fmtText: "text/plain",
}

// imageTypes are the pictures passed on to models (what the OpenAI API
// takes).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// sniff tells the format of data from its bytes; name and the client's
// mime type only choose among text formats. It returns the format and the
// MIME type, or an *Error (unsupported).
func sniff(name, mimeHint string, data []byte) (format, mimeType string, err error) {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return fmtPDF, mimeOf[fmtPDF], nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return "", "", errorf(name, Unreadable, "a broken ZIP archive: %v", err)
		}
		for _, f := range zr.File {
			switch f.Name {
			case "word/document.xml":
				return fmtDOCX, mimeOf[fmtDOCX], nil
			case "xl/workbook.xml":
				return fmtXLSX, mimeOf[fmtXLSX], nil
			case "ppt/presentation.xml":
				return fmtPPTX, mimeOf[fmtPPTX], nil
			}
		}
		return "", "", errorf(name, Unsupported, "a ZIP archive that is not a DOCX, XLSX or PPTX document")
	}
	detected, _, _ := strings.Cut(http.DetectContentType(data), ";")
	switch {
	case imageTypes[detected]:
		return fmtImage, detected, nil
	case strings.HasPrefix(detected, "image/"):
		return "", "", errorf(name, Unsupported, "images must be PNG, JPEG, GIF or WebP, got %s", detected)
	case detected == "text/html":
		return fmtHTML, mimeOf[fmtHTML], nil
	case strings.HasPrefix(detected, "text/") && utf8.Valid(data):
	default:
		return "", "", errorf(name, Unsupported, "%s is not a supported type (PDF, DOCX, XLSX, PPTX, HTML, CSV, text, Markdown, JSON, PNG, JPEG, GIF, WebP)", detected)
	}
	hint, _, _ := strings.Cut(strings.ToLower(mimeHint), ";")
	switch ext := strings.ToLower(path.Ext(name)); {
	case ext == ".csv" || ext == ".tsv" || hint == "text/csv" || hint == "text/tab-separated-values":
		return fmtCSV, mimeOf[fmtCSV], nil
	case ext == ".html" || ext == ".htm" || hint == "text/html":
		return fmtHTML, mimeOf[fmtHTML], nil
	case ext == ".json" || hint == "application/json":
		return fmtJSON, mimeOf[fmtJSON], nil
	case ext == ".md" || ext == ".markdown" || hint == "text/markdown":
		return fmtText, "text/markdown", nil
	}
	return fmtText, mimeOf[fmtText], nil
}

// Convert returns the Markdown of a document (the convert routes). An
// image is refused as unsupported: it has no Markdown.
func (c *Converter) Convert(ctx context.Context, name, mimeHint string, data []byte) (string, error) {
	if int64(len(data)) > c.opts.MaxBytes {
		return "", errorf(name, TooLarge, "%d bytes, over the %d-byte limit (attachments.max_bytes)", len(data), c.opts.MaxBytes)
	}
	format, _, err := sniff(name, mimeHint, data)
	if err != nil {
		return "", err
	}
	if format == fmtImage {
		return "", errorf(name, Unsupported, "an image has no Markdown; attach it as type image")
	}
	return c.convert(ctx, name, format, data)
}

// convert runs the converter of format and clips the result.
func (c *Converter) convert(ctx context.Context, name, format string, data []byte) (string, error) {
	var md string
	var err error
	switch format {
	case fmtPDF:
		md, err = c.pdf(ctx, name, data)
	case fmtDOCX:
		md, err = c.docx(name, data)
	case fmtPPTX:
		md, err = c.pptx(name, data)
	case fmtXLSX:
		md, err = c.xlsx(name, data)
	case fmtHTML:
		md, err = htmlToMarkdown(name, data)
	case fmtCSV:
		md, err = csvToMarkdown(name, data)
	case fmtJSON:
		md = "```json\n" + strings.TrimRight(string(data), "\n") + "\n```"
	default:
		md = string(data)
	}
	if err != nil {
		return "", err
	}
	return c.clip(strings.TrimSpace(md)), nil
}

// clip bounds md at MaxChars characters, with a note saying so.
func (c *Converter) clip(md string) string {
	n := utf8.RuneCountInString(md)
	if n <= c.opts.MaxChars {
		return md
	}
	i, count := 0, 0
	for i = range md {
		if count == c.opts.MaxChars {
			break
		}
		count++
	}
	return md[:i] + fmt.Sprintf("\n\n[clipped: the document has %d characters; the first %d are shown]", n, c.opts.MaxChars)
}

// errCanceled reports a conversion given up with its context.
var errCanceled = errors.New("conversion canceled")
