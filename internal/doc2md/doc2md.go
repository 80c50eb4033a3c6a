package doc2md

import (
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
// codes (HTTP 413, 415, 400, 422, 503).
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
	// TooComplex: well-formed, but nested deeper or converting longer
	// than the limits allow (HTTP 422).
	TooComplex
	// Busy: the server converts as many documents as it may at once;
	// the client may retry (HTTP 503). It wraps
	// [orchestrator.ErrUnavailable], not ErrInvalidArgument.
	Busy
)

// Error is an attachment that cannot be used. It wraps
// [orchestrator.ErrInvalidArgument] (Busy: [orchestrator.ErrUnavailable],
// with a retry hint), so front-ends without a finer code report it as a
// bad request.
type Error struct {
	// Name is the attachment's name as the client sent it.
	Name string
	Kind Kind
	Msg  string
	// Limit is the configuration key of the limit the attachment is
	// over, such as "attachments.max_columns"; "" when the refusal is not
	// about a limit (an unsupported type, a malformed document).
	Limit string
	// Max is the value of that limit.
	Max int64
}

func (e *Error) Error() string { return fmt.Sprintf("attachment %q: %s", e.Name, e.Msg) }

// Unwrap makes errors.Is(err, orchestrator.ErrInvalidArgument) hold, or
// for Busy errors.Is(err, orchestrator.ErrUnavailable).
func (e *Error) Unwrap() error {
	if e.Kind == Busy {
		return orchestrator.WithRetryAfter(orchestrator.ErrUnavailable, time.Second)
	}
	return orchestrator.ErrInvalidArgument
}

func errorf(name string, k Kind, format string, args ...any) *Error {
	return &Error{Name: name, Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// overLimit is the error of a value over the limit named by key: "<what>,
// over the limit of <max> (<key>)".
func overLimit(name string, k Kind, key string, max int64, format string, args ...any) *Error {
	return &Error{Name: name, Kind: k, Limit: key, Max: max,
		Msg: fmt.Sprintf(format, args...) + fmt.Sprintf(", over the limit of %d (%s)", max, key)}
}

// Options bound the conversion. Zero values mean the defaults stated; nil
// *Options passed to [New] means all of them. Each limit is named in the
// errors by its configuration key (docs/attachments.md).
type Options struct {
	// MaxBytes bounds one attachment, decoded (attachments.max_bytes).
	// Default 10 MiB.
	MaxBytes int64
	// MaxCount bounds the attachments of one request
	// (attachments.max_count). Default 10.
	MaxCount int
	// MaxTotalBytes bounds the attachments of one request
	// (attachments.max_total_bytes). Default 20 MiB.
	MaxTotalBytes int64
	// MaxPDFPages: pages of a PDF converted (attachments.max_pdf_pages).
	// Default 100.
	MaxPDFPages int
	// MaxChars bounds the Markdown of one attachment, clipped with a note
	// (attachments.max_chars). Default 200000.
	MaxChars int
	// MaxUnzipBytes bounds what an office file's ZIP entries unpack to,
	// all together (attachments.max_unzip_bytes). Default 64 MiB.
	MaxUnzipBytes int64
	// MaxUnzipRatio bounds what an office file unpacks to against its own
	// size, once it unpacks to more than 1 MiB
	// (attachments.max_unzip_ratio). Default 100.
	MaxUnzipRatio int
	// MaxZipEntries bounds the entries of an office file's ZIP
	// (attachments.max_zip_entries). Default 10000.
	MaxZipEntries int
	// MaxXMLDepth bounds the nesting of XML elements (DOCX, XLSX, PPTX)
	// and HTML elements (attachments.max_xml_depth). Default 256.
	MaxXMLDepth int
	// MaxRows bounds the rows of one table: a sheet, a CSV, a table of a
	// document (attachments.max_rows). Default 200000.
	MaxRows int
	// MaxColumns bounds the columns of one table
	// (attachments.max_columns). Default 1024.
	MaxColumns int
	// MaxCells bounds the cells of all the tables of one document, the
	// empty ones that pad a row to its table's width included, and the
	// strings of a workbook's shared-strings table (attachments.max_cells).
	// Default 2000000.
	MaxCells int64
	// MaxOutputBytes bounds the Markdown of one document before it is
	// clipped, and the text a conversion holds to build it
	// (attachments.max_output_bytes). Default 16 MiB.
	MaxOutputBytes int64
	// MaxConcurrent bounds the documents this converter converts at once;
	// a conversion waits up to Timeout for its turn
	// (attachments.max_concurrent). Default 4.
	MaxConcurrent int
	// Timeout bounds one conversion, pdftotext included
	// (attachments.timeout_s). Default 30s.
	Timeout time.Duration
	// Runner runs pdftotext; nil = directly, as a child of this process.
	Runner Runner
	// PDFToText is the pdftotext executable, a name on PATH or a path.
	// Default "pdftotext".
	PDFToText string
}

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() Options {
	setDefault(&o.MaxBytes, 10<<20)
	setDefault(&o.MaxCount, 10)
	setDefault(&o.MaxTotalBytes, 20<<20)
	setDefault(&o.MaxPDFPages, 100)
	setDefault(&o.MaxChars, 200000)
	setDefault(&o.MaxUnzipBytes, 64<<20)
	setDefault(&o.MaxUnzipRatio, 100)
	setDefault(&o.MaxZipEntries, 10000)
	setDefault(&o.MaxXMLDepth, 256)
	setDefault(&o.MaxRows, 200000)
	setDefault(&o.MaxColumns, 1024)
	setDefault(&o.MaxCells, 2000000)
	setDefault(&o.MaxOutputBytes, 16<<20)
	setDefault(&o.MaxConcurrent, 4)
	setDefault(&o.Timeout, 30*time.Second)
	if o.Runner == nil {
		o.Runner = execRunner{}
	}
	if o.PDFToText == "" {
		o.PDFToText = "pdftotext"
	}
	return o
}

func setDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Converter converts attachments. It is safe for concurrent use: at most
// Options.MaxConcurrent documents convert at once.
type Converter struct {
	opts Options
	// slots holds a token per conversion running.
	slots chan struct{}
}

// New returns a converter bounded by opts (nil = defaults).
func New(opts *Options) *Converter {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return &Converter{opts: o, slots: make(chan struct{}, o.MaxConcurrent)}
}

// MaxBytes is the limit of one attachment, for front-ends that read a
// file from a multipart body.
func (c *Converter) MaxBytes() int64 { return c.opts.MaxBytes }

// MaxCount is the limit of attachments of one request, and MaxTotalBytes
// of their bytes together, for front-ends that gather files before
// [Converter.Prepare] sees them (A2A file parts fetched by URL).
func (c *Converter) MaxCount() int { return c.opts.MaxCount }

// MaxTotalBytes: see [Converter.MaxCount].
func (c *Converter) MaxTotalBytes() int64 { return c.opts.MaxTotalBytes }

// formats the converter recognises.
const (
	fmtPDF   = "pdf"
	fmtZip   = "zip" // an office file (DOCX, XLSX, PPTX) or another ZIP: told apart inside the archive
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
// mime type only choose among text formats. A ZIP is fmtZip: which office
// format it is is read from its entries when it is converted, within the
// bounds of a conversion. It returns the format and the MIME type (""
// for fmtZip), or an *Error (unsupported).
func sniff(name, mimeHint string, data []byte) (format, mimeType string, err error) {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return fmtPDF, mimeOf[fmtPDF], nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return fmtZip, "", nil
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
	case strings.HasPrefix(detected, "text/"):
		return "", "", errorf(name, Unsupported, "text that is not UTF-8: save it as UTF-8 and attach it again")
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

// Convert returns the Markdown of a document (the convert routes),
// clipped at MaxChars characters with a note. An image is refused as
// unsupported: it has no Markdown.
func (c *Converter) Convert(ctx context.Context, name, mimeHint string, data []byte) (string, error) {
	md, _, err := c.convertData(ctx, name, mimeHint, data, true)
	return md, err
}

// ConvertAll returns the whole Markdown of a document, not clipped: what
// is stored (a knowledge base's file) rather than shown to a model once.
// It is bounded as Convert is, the Markdown by MaxOutputBytes.
func (c *Converter) ConvertAll(ctx context.Context, name, mimeHint string, data []byte) (string, error) {
	md, _, err := c.convertData(ctx, name, mimeHint, data, false)
	return md, err
}

// convertData checks, sniffs and converts a document; it returns the
// Markdown and the document's MIME type.
func (c *Converter) convertData(ctx context.Context, name, mimeHint string, data []byte, clip bool) (md, mimeType string, err error) {
	if int64(len(data)) > c.opts.MaxBytes {
		return "", "", overLimit(name, TooLarge, "attachments.max_bytes", c.opts.MaxBytes, "%d bytes", len(data))
	}
	format, mt, err := sniff(name, mimeHint, data)
	if err != nil {
		return "", "", err
	}
	if format == fmtImage {
		return "", "", errorf(name, Unsupported, "an image has no Markdown; attach it as type image")
	}
	return c.convert(ctx, name, format, mt, data, clip)
}

// convert runs the converter of format, in a slot of its own and within
// the time limit, and returns the Markdown (clipped at MaxChars when clip
// is set) and the document's MIME type.
func (c *Converter) convert(ctx context.Context, name, format, mimeType string, data []byte, clip bool) (string, string, error) {
	if format == fmtText {
		j := c.newJob(ctx, name, clip)
		if err := j.out.write(string(data)); err != nil {
			return "", "", err
		}
		return j.markdown(), mimeType, nil
	}
	release, err := c.acquire(ctx, name)
	if err != nil {
		return "", "", err
	}
	defer release()
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.Timeout, errTimeout)
	defer cancel()
	j := c.newJob(ctx, name, clip)
	switch format {
	case fmtPDF:
		err = j.pdf(data)
	case fmtZip:
		format, err = j.office(data)
		mimeType = mimeOf[format]
	case fmtHTML:
		err = j.html(data)
	case fmtCSV:
		err = j.csv(data)
	case fmtJSON:
		err = j.out.write("```json\n" + strings.TrimRight(string(data), "\n") + "\n```")
	}
	if err != nil {
		return "", "", j.fail(err)
	}
	return j.markdown(), mimeType, nil
}

// acquire waits for a conversion slot, at most Timeout; release gives it
// back.
func (c *Converter) acquire(ctx context.Context, name string) (release func(), err error) {
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	default:
	}
	t := time.NewTimer(c.opts.Timeout)
	defer t.Stop()
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", errCanceled, ctx.Err())
	case <-t.C:
		return nil, &Error{Name: name, Kind: Busy, Limit: "attachments.max_concurrent", Max: int64(c.opts.MaxConcurrent),
			Msg: fmt.Sprintf("the server is converting %d documents already and none finished within %v, the limit (attachments.max_concurrent); retry later",
				c.opts.MaxConcurrent, c.opts.Timeout)}
	}
}

// clip bounds md at MaxChars characters, with a note saying so.
func (c *Converter) clip(md string) string {
	n := utf8.RuneCountInString(md)
	if n <= c.opts.MaxChars {
		return md
	}
	return clipAt(md, c.opts.MaxChars, int64(n))
}

// clipAt is the first max characters of md and a note that the document
// has total.
func clipAt(md string, max int, total int64) string {
	cut, count := len(md), 0
	for i := range md {
		if count == max {
			cut = i
			break
		}
		count++
	}
	return md[:cut] + fmt.Sprintf("\n\n[clipped: the document has %d characters; the first %d are shown]", total, max)
}

var (
	// errCanceled reports a conversion given up with its context.
	errCanceled = errors.New("conversion canceled")
	// errTimeout is the cause of a conversion's context past Timeout.
	errTimeout = errors.New("conversion timed out")
)
