package gateway

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/wunder/wunder/internal/doc2md"
)

// maxFormField bounds a form field other than the file.
const maxFormField = 1024

// knowledgeUpload is the form of POST .../knowledge/upload: base, file,
// and optionally user_id and path (the file's path in the base; default
// the uploaded file's name).
type knowledgeUpload struct {
	userID, base, path string
	fileName           string
	data               []byte
	hasFile            bool
}

// uploadKnowledgeFile is POST .../upload, multipart/form-data with the
// fields base and file (the original's), and optionally user_id and path.
// A document (.docx, .xlsx, .pptx, .pdf, .html, .htm) is converted to
// Markdown by the attachment converter, whole and within its bounds, and
// stored as <name>.md; a .md or .txt file is stored as it is. The body is
// bounded by attachments.max_request_bytes, the file by
// attachments.max_bytes, and the adapter checks what is stored against
// knowledge.max_file_bytes.
func (s *Server) uploadKnowledgeFile(ownerOf ownerOf) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		up, ok := readKnowledgeUpload(w, r, s.converter().MaxBytes())
		if !ok {
			return
		}
		if up.userID == "" {
			up.userID = r.URL.Query().Get("user_id")
		}
		owner, ok := ownerOf(w, r, up.userID)
		if !ok {
			return
		}
		if up.base == "" || !up.hasFile {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "the form fields base and file are required")
			return
		}
		p := up.path
		if p == "" {
			p = up.fileName
		}
		if p == "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "the file part has no file name; name it, or send the field path")
			return
		}
		data := up.data
		if ext := strings.ToLower(path.Ext(p)); knowledgeDocuments[ext] {
			md, err := s.converter().ConvertAll(r.Context(), p, "", up.data)
			if err != nil {
				writeAttachmentError(w, r, err)
				return
			}
			p, data = strings.TrimSuffix(p, path.Ext(p))+".md", []byte(md)
		}
		if err := s.opts.Knowledge.WriteKnowledgeFile(r.Context(), owner, up.base, p, data); err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "uploaded", "base": up.base, "path": p, "bytes": len(data)})
	}
}

// knowledgeDocuments are the extensions of the documents an upload
// converts to Markdown.
var knowledgeDocuments = map[string]bool{".docx": true, ".xlsx": true, ".pptx": true, ".pdf": true, ".html": true, ".htm": true}

// readKnowledgeUpload reads the form, the file of at most maxFile bytes;
// each failure writes its own problem: 415 for another media type, 413
// past the body limit or maxFile, 400 for a malformed form or a second
// file.
func readKnowledgeUpload(w http.ResponseWriter, r *http.Request, maxFile int64) (*knowledgeUpload, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the upload as multipart/form-data with the fields base and file")
		return nil, false
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_form", err.Error())
		return nil, false
	}
	up := &knowledgeUpload{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return up, true
		}
		if err != nil {
			return nil, formProblem(w, r, err)
		}
		name := part.FormName()
		switch name {
		case "file":
			if up.hasFile {
				writeProblem(w, r, http.StatusBadRequest, "invalid_form", "one file per upload")
				return nil, false
			}
			up.hasFile, up.fileName = true, part.FileName()
			if up.data, err = io.ReadAll(io.LimitReader(part, maxFile+1)); err != nil {
				return nil, formProblem(w, r, err)
			}
			if int64(len(up.data)) > maxFile {
				writeAttachmentError(w, r, &doc2md.Error{Name: up.fileName, Kind: doc2md.TooLarge, Limit: "attachments.max_bytes", Max: maxFile,
					Msg: fmt.Sprintf("more than %d bytes, over the limit of %d (attachments.max_bytes)", maxFile, maxFile)})
				return nil, false
			}
		case "base", "user_id", "path":
			b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return nil, formProblem(w, r, err)
			}
			if len(b) > maxFormField {
				writeProblem(w, r, http.StatusBadRequest, "invalid_form", fmt.Sprintf("the field %s is longer than %d bytes", name, maxFormField))
				return nil, false
			}
			v := strings.TrimSpace(string(b))
			switch name {
			case "base":
				up.base = v
			case "user_id":
				up.userID = v
			default:
				up.path = v
			}
		default:
			writeProblem(w, r, http.StatusBadRequest, "unknown_field", fmt.Sprintf("unknown form field %q (fields: base, file, path, user_id)", name))
			return nil, false
		}
	}
}

func formProblem(w http.ResponseWriter, r *http.Request, err error) bool {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d bytes (attachments.max_request_bytes)", tooLarge.Limit))
	} else {
		writeProblem(w, r, http.StatusBadRequest, "invalid_form", "malformed multipart form: "+err.Error())
	}
	return false
}
