// Package doc2md turns what users attach to a question into what a model
// can read: documents (PDF, DOCX, XLSX, PPTX, HTML, CSV, plain text,
// Markdown, JSON) into Markdown, pictures into checked data URLs. The
// front-ends (gateway, a2a, mcpserver, connectapi) call it before a run is
// created, so a refused attachment stores nothing; the core only sees
// [orchestrator.Attachment]s that are text or images. The gateway also
// converts the documents uploaded to a knowledge base, whole
// ([Converter.ConvertAll]).
//
//	c := doc2md.New(&doc2md.Options{MaxBytes: 10 << 20})
//	atts, err := c.Prepare(ctx, req.Attachments) // *Error: too large, unsupported, unreadable, too complex, busy
//	md, err := c.Convert(ctx, "report.pdf", "", data)
//
// The real type is sniffed from the bytes (PDF and ZIP magic,
// net/http.DetectContentType); a client's mime_type or file name only
// chooses between text formats (CSV, HTML, Markdown, JSON).
//
// Every document is read as a stream, and every input has a bound that
// an [Error] names with its configuration key (Error.Limit, Error.Max):
//
//   - Office files are ZIP archives of XML. The archive's entries, what
//     they unpack to and its ratio to the file are checked before anything
//     is unpacked; each part is then read token by token with
//     encoding/xml, never unmarshalled as a tree, its nesting bounded
//     (MaxXMLDepth).
//   - Tables are bounded in rows, columns and cells before a row is padded
//     to its table's width: a sheet and a CSV are measured in a first pass
//     and written in a second; a DOCX, PPTX or HTML table is kept until its
//     end, its cells counted as they come.
//   - HTML is read by golang.org/x/net/html's tokenizer, not its parser:
//     no tree, the open elements bounded by MaxXMLDepth.
//   - The Markdown of a document and the text held to build it are
//     bounded (MaxOutputBytes); a clipped conversion keeps only what it
//     shows (MaxChars).
//   - A conversion has a deadline (Timeout) that its loops honour, and at
//     most MaxConcurrent convert at once, so many bombs do not add up.
//
// PDF is read by poppler's pdftotext, a subprocess run through
// Options.Runner (cmd/wunder passes the bubblewrap sandbox when it is
// available) within the deadline and with a bound on its output; a
// server without pdftotext refuses PDFs as unsupported, saying so.
package doc2md
