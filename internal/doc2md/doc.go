// Package doc2md turns what users attach to a question into what a model
// can read: documents (PDF, DOCX, XLSX, PPTX, HTML, CSV, plain text,
// Markdown, JSON) into Markdown, pictures into checked data URLs. The
// front-ends (gateway, a2a, mcpserver, connectapi) call it before a run is
// created, so a refused attachment stores nothing; the core only sees
// [orchestrator.Attachment]s that are text or images.
//
//	c := doc2md.New(&doc2md.Options{MaxBytes: 10 << 20})
//	atts, err := c.Prepare(ctx, req.Attachments) // *Error: too large, unsupported, unreadable
//	md, err := c.Convert(ctx, "report.pdf", data)
//
// The real type is sniffed from the bytes (PDF and ZIP magic,
// net/http.DetectContentType); a client's mime_type or file name only
// chooses between text formats (CSV, HTML, Markdown, JSON). Office files
// are ZIP archives of XML: every entry read is bounded (Options.MaxUnzipBytes),
// so a ZIP bomb is refused. PDF is read by poppler's pdftotext, a
// subprocess run through Options.Runner (cmd/wunder passes the bubblewrap
// sandbox when it is available) with a timeout and a bound on its output;
// a server without pdftotext refuses PDFs as unsupported, saying so.
package doc2md
