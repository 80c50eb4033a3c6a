package config

import "time"

// Attachments bounds the attachments of a question, the document
// conversion routes and the documents uploaded to a knowledge base
// (docs/attachments.md). Sizes are of the decoded file, except
// MaxRequestBytes, which is of the request body (base64 makes a file a
// third larger).
type Attachments struct {
	// MaxBytes bounds one attachment, decoded. Default 10 MiB.
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxCount bounds the attachments of one request. Default 10.
	MaxCount int `yaml:"max_count"`
	// MaxTotalBytes bounds all the attachments of one request, decoded.
	// Default 20 MiB.
	MaxTotalBytes int64 `yaml:"max_total_bytes"`
	// MaxRequestBytes is the body limit of the routes that carry
	// attachments (POST /wunder, /wunder/runs, the convert routes, the
	// knowledge uploads, /a2a, /wunder/mcp and the Connect Run), instead
	// of server.max_body_bytes; the larger of the two applies
	// ([Config.AttachmentBodyBytes]). Default 32 MiB.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxPDFPages: pages of a PDF converted; the rest is left out with a
	// note. Default 100.
	MaxPDFPages int `yaml:"max_pdf_pages"`
	// MaxChars bounds the Markdown of one converted attachment; longer
	// Markdown is clipped with a note. Default 200000.
	MaxChars int `yaml:"max_chars"`
	// TimeoutSeconds (timeout_s) bounds one conversion, pdftotext
	// included, and the wait for a turn under MaxConcurrent. Default 30.
	TimeoutSeconds int `yaml:"timeout_s"`
	// MaxUnzipBytes bounds what an office file (DOCX, XLSX, PPTX)
	// unpacks to, all its entries together. Default 64 MiB.
	MaxUnzipBytes int64 `yaml:"max_unzip_bytes"`
	// MaxUnzipRatio bounds what an office file unpacks to against its
	// own size, once it unpacks to more than 1 MiB. Default 100.
	MaxUnzipRatio int `yaml:"max_unzip_ratio"`
	// MaxZipEntries bounds the entries of an office file. Default 10000.
	MaxZipEntries int `yaml:"max_zip_entries"`
	// MaxXMLDepth bounds the nesting of a document's XML elements (DOCX,
	// XLSX, PPTX) and HTML elements. Default 256.
	MaxXMLDepth int `yaml:"max_xml_depth"`
	// MaxRows bounds the rows of one table (a sheet, a CSV, a table of a
	// document). Default 200000.
	MaxRows int `yaml:"max_rows"`
	// MaxColumns bounds the columns of one table. Default 1024.
	MaxColumns int `yaml:"max_columns"`
	// MaxCells bounds the cells of all the tables of one document, the
	// empty ones that pad a row to its table's width included, and a
	// workbook's shared strings. Default 2000000.
	MaxCells int64 `yaml:"max_cells"`
	// MaxOutputBytes bounds the Markdown of one document before it is
	// clipped at MaxChars, and the text a conversion holds to build it.
	// Default 16 MiB.
	MaxOutputBytes int64 `yaml:"max_output_bytes"`
	// MaxConcurrent bounds the documents converted at once by this
	// process; one more waits up to timeout_s for a turn, then is refused
	// with 503. Default 4.
	MaxConcurrent int `yaml:"max_concurrent"`
}

func attachmentsDefaults() Attachments {
	return Attachments{MaxBytes: 10 << 20, MaxCount: 10, MaxTotalBytes: 20 << 20, MaxRequestBytes: 32 << 20,
		MaxPDFPages: 100, MaxChars: 200000, TimeoutSeconds: 30,
		MaxUnzipBytes: 64 << 20, MaxUnzipRatio: 100, MaxZipEntries: 10000, MaxXMLDepth: 256,
		MaxRows: 200000, MaxColumns: 1024, MaxCells: 2000000, MaxOutputBytes: 16 << 20, MaxConcurrent: 4}
}

// AttachmentBodyBytes is the body limit of the routes that carry
// attachments: attachments.max_request_bytes, or server.max_body_bytes
// when that is larger.
func (c *Config) AttachmentBodyBytes() int64 {
	return max(c.Attachments.MaxRequestBytes, c.Server.MaxBodyBytes)
}

// Timeout is timeout_s as a duration.
func (a Attachments) Timeout() time.Duration { return seconds(a.TimeoutSeconds) }

func (c *Config) validateAttachments(v checker) {
	a := c.Attachments
	atLeast(v, "attachments.max_bytes", a.MaxBytes, 1)
	v.between("attachments.max_count", a.MaxCount, 1, 1000)
	if atLeast(v, "attachments.max_total_bytes", a.MaxTotalBytes, 1) && a.MaxTotalBytes < a.MaxBytes {
		v.fail("attachments.max_total_bytes", "must be at least attachments.max_bytes (%d), got %d", a.MaxBytes, a.MaxTotalBytes)
	}
	atLeast(v, "attachments.max_request_bytes", a.MaxRequestBytes, 1)
	v.between("attachments.max_pdf_pages", a.MaxPDFPages, 1, 100000)
	atLeast(v, "attachments.max_chars", a.MaxChars, 100)
	atLeast(v, "attachments.timeout_s", a.TimeoutSeconds, 1)
	atLeast(v, "attachments.max_unzip_bytes", a.MaxUnzipBytes, 1)
	atLeast(v, "attachments.max_unzip_ratio", a.MaxUnzipRatio, 1)
	v.between("attachments.max_zip_entries", a.MaxZipEntries, 1, 1000000)
	v.between("attachments.max_xml_depth", a.MaxXMLDepth, 8, 100000)
	atLeast(v, "attachments.max_rows", a.MaxRows, 1)
	atLeast(v, "attachments.max_columns", a.MaxColumns, 1)
	atLeast(v, "attachments.max_cells", a.MaxCells, 1)
	atLeast(v, "attachments.max_output_bytes", a.MaxOutputBytes, 1024)
	v.between("attachments.max_concurrent", a.MaxConcurrent, 1, 1024)
}
