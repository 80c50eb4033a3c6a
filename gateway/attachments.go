package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// Attachments (docs/attachments.md): POST /wunder and /wunder/runs take
// an attachments list, converted here before the run is created (a refused
// attachment stores nothing); the convert routes expose the conversion.

// DefaultAttachmentBodyBytes is the body limit of the routes that carry
// attachments when Options.AttachmentBodyBytes is 0.
const DefaultAttachmentBodyBytes = 32 << 20

// attachmentPaths are the exact paths whose body limit is
// Options.AttachmentBodyBytes instead of MaxBodyBytes.
var attachmentPaths = []string{"/wunder", "/wunder/runs", "/wunder/doc2md/convert", "/wunder/attachments/convert"}

func (s *Server) attachmentRoutes() {
	s.mux.HandleFunc("POST /wunder/doc2md/convert", s.handleConvert)
	s.mux.HandleFunc("POST /wunder/attachments/convert", s.handleConvert)
	for _, p := range attachmentPaths {
		s.routeBodyLimit(p, s.opts.AttachmentBodyBytes)
	}
}

// AttachmentRoutes gives the exact paths of front-ends mounted on the
// gateway whose requests carry attachments (/a2a, /wunder/mcp, the
// Connect Run) the body limit of the attachment routes,
// Options.AttachmentBodyBytes. Call it before Handler.
func (s *Server) AttachmentRoutes(paths ...string) {
	for _, p := range paths {
		s.routeBodyLimit(p, s.opts.AttachmentBodyBytes)
	}
}

// converter is Options.Attachments, or one with the default limits.
func (s *Server) converter() *doc2md.Converter {
	if s.opts.Attachments != nil {
		return s.opts.Attachments
	}
	return defaultConverter
}

var defaultConverter = doc2md.New(nil)

// writeAttachmentError writes an attachment that cannot be used as its
// problem, the detail naming it — the one table of doc2md's kinds: 413
// too large, 415 unsupported, 400 unreadable, 422 too complex (nested too
// deep, converting too long), 503 busy (with Retry-After); other errors
// as writeError does. A refusal over a limit carries the limit's
// configuration key and value as "limit" and "limit_value".
func writeAttachmentError(w http.ResponseWriter, r *http.Request, err error) {
	var e *doc2md.Error
	if !errors.As(err, &e) {
		writeError(w, r, err)
		return
	}
	var p Problem
	switch e.Kind {
	case doc2md.TooLarge:
		p = newProblem(r, http.StatusRequestEntityTooLarge, "attachment_too_large", e.Error())
	case doc2md.Unsupported:
		p = newProblem(r, http.StatusUnsupportedMediaType, "attachment_unsupported", e.Error())
	case doc2md.TooComplex:
		p = newProblem(r, http.StatusUnprocessableEntity, "attachment_too_complex", e.Error())
	case doc2md.Busy:
		w.Header().Set("Retry-After", "1")
		p = newProblem(r, http.StatusServiceUnavailable, "attachment_busy", e.Error())
	default:
		p = newProblem(r, http.StatusBadRequest, "attachment_unreadable", e.Error())
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	if err := json.NewEncoder(w).Encode(limitProblem{Problem: p, Limit: e.Limit, LimitValue: e.Max}); err != nil {
		logger(r.Context()).DebugContext(r.Context(), "problem not written", "err", err)
	}
}

// limitProblem is the problem of an attachment over a limit: the
// limit's configuration key (attachments.max_cells, ...) and its value.
type limitProblem struct {
	Problem
	Limit      string `json:"limit,omitempty"`
	LimitValue int64  `json:"limit_value,omitempty"`
}

// convertRequest is the JSON body of the convert routes.
type convertRequest struct {
	Name string `json:"name"`
	// Content is a data URL (data:<mime>;base64,...).
	Content  string `json:"content"`
	MimeType string `json:"mime_type"`
}

// convertResponse is their answer.
type convertResponse struct {
	OK      bool   `json:"ok"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

// handleConvert is POST /wunder/doc2md/convert and
// /wunder/attachments/convert: a document (multipart field "file", or
// JSON {"name","content"} with a data URL) to Markdown.
func (s *Server) handleConvert(w http.ResponseWriter, r *http.Request) {
	c := s.converter()
	var name, hint string
	var data []byte
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		var ok bool
		if name, hint, data, ok = readFilePart(w, r, c.MaxBytes()); !ok {
			return
		}
	} else {
		var req convertRequest
		if !decodeJSON(w, r, &req) {
			return
		}
		name = req.Name
		if name == "" {
			name = "document"
		}
		urlMime, b, err := c.DecodeDataURL(name, req.Content)
		if err != nil {
			writeAttachmentError(w, r, err)
			return
		}
		data, hint = b, req.MimeType
		if hint == "" {
			hint = urlMime
		}
	}
	md, err := c.Convert(r.Context(), name, hint, data)
	if err != nil {
		writeAttachmentError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, convertResponse{OK: true, Name: name, Content: md})
}

// readFilePart reads the multipart field "file" of at most limit bytes.
func readFilePart(w http.ResponseWriter, r *http.Request, limit int64) (name, mimeType string, data []byte, ok bool) {
	mr, err := r.MultipartReader()
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_multipart", err.Error())
		return "", "", nil, false
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			writeProblem(w, r, http.StatusBadRequest, "missing_file", `send the document in the multipart field "file"`)
			return "", "", nil, false
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit))
			} else {
				writeProblem(w, r, http.StatusBadRequest, "invalid_multipart", err.Error())
			}
			return "", "", nil, false
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		name = part.FileName()
		if name == "" {
			name = "document"
		}
		data, err = io.ReadAll(io.LimitReader(part, limit+1))
		part.Close()
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit))
			return "", "", nil, false
		case err != nil:
			writeProblem(w, r, http.StatusBadRequest, "invalid_multipart", err.Error())
			return "", "", nil, false
		case int64(len(data)) > limit:
			writeAttachmentError(w, r, &doc2md.Error{Name: name, Kind: doc2md.TooLarge, Limit: "attachments.max_bytes", Max: limit,
				Msg: fmt.Sprintf("more than %d bytes, over the limit of %d (attachments.max_bytes)", limit, limit)})
			return "", "", nil, false
		}
		ct := part.Header.Get("Content-Type")
		if ct == "application/octet-stream" {
			ct = ""
		}
		return name, strings.TrimSpace(ct), data, true
	}
}

// prepareAttachments converts a run request's attachments; false when a
// problem was written.
func (s *Server) prepareAttachments(w http.ResponseWriter, r *http.Request, in []orchestrator.Attachment) ([]orchestrator.Attachment, bool) {
	out, err := s.converter().Prepare(r.Context(), in)
	if err != nil {
		writeAttachmentError(w, r, err)
		return nil, false
	}
	return out, true
}
