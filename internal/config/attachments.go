package config

import "time"

// Attachments bounds the attachments of a question and the document
// conversion routes (docs/attachments.md). Sizes are of the decoded file,
// except MaxRequestBytes, which is of the request body (base64 makes a
// file a third larger).
type Attachments struct {
	// MaxBytes bounds one attachment, decoded. Default 10 MiB.
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxCount bounds the attachments of one request. Default 10.
	MaxCount int `yaml:"max_count"`
	// MaxTotalBytes bounds all the attachments of one request, decoded.
	// Default 20 MiB.
	MaxTotalBytes int64 `yaml:"max_total_bytes"`
	// MaxRequestBytes is the body limit of the routes that carry
	// attachments (POST /wunder, /wunder/runs, the convert routes, /a2a,
	// /wunder/mcp and the Connect Run), instead of server.max_body_bytes;
	// the larger of the two applies ([Config.AttachmentBodyBytes]).
	// Default 32 MiB.
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
	// MaxPDFPages: pages of a PDF converted; the rest is left out with a
	// note. Default 100.
	MaxPDFPages int `yaml:"max_pdf_pages"`
	// MaxChars bounds the Markdown of one converted attachment; longer
	// Markdown is clipped with a note. Default 200000.
	MaxChars int `yaml:"max_chars"`
	// TimeoutSeconds (timeout_s) bounds one conversion (pdftotext).
	// Default 30.
	TimeoutSeconds int `yaml:"timeout_s"`
}

func attachmentsDefaults() Attachments {
	return Attachments{MaxBytes: 10 << 20, MaxCount: 10, MaxTotalBytes: 20 << 20, MaxRequestBytes: 32 << 20,
		MaxPDFPages: 100, MaxChars: 200000, TimeoutSeconds: 30}
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
}
