package gateway

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
)

// errUploadTooLarge ends a file of an upload at WorkspaceLimits.MaxUploadBytes.
var errUploadTooLarge = errors.New("file over the upload limit")

// capReader reads at most n bytes of r; one more is errUploadTooLarge. It
// remembers the error it returned, so the handler tells the upload's own
// failures (size, a broken form) from the workspace's.
type capReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n < 0 {
		c.err = errUploadTooLarge
		return 0, c.err
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		c.err = errUploadTooLarge
		return n, c.err
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// uploadName is a part's file name as the client sent it (not reduced to
// its base, as multipart.Part.FileName does): it may name subdirectories
// ("docs/a.md", kept as such) but must be a plain relative path — no "..",
// no leading "/", no "\", no NUL, no empty element.
func uploadName(part *multipart.Part) (string, error) {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	name := params["filename"]
	switch {
	case err != nil:
		return "", fmt.Errorf("the part's Content-Disposition is malformed: %v", err)
	case name == "":
		return "", errors.New("a files part has no file name")
	case strings.ContainsAny(name, "\\\x00") || !fs.ValidPath(name) || name == ".":
		return "", fmt.Errorf("file name %q must be a plain relative path (no \"..\", leading \"/\", \"\\\" or NUL)", name)
	}
	return name, nil
}

// upload is POST /wunder/workspace/upload, multipart/form-data: path (the
// target directory, which must exist; default the workspace) and user_id
// first, then one or more files parts, each written atomically to
// path/<file name> as it streams in. Each file is bounded by
// MaxUploadBytes, the body by MaxUploadTotalBytes. A failure stops the
// upload; the files before it stay (the problem says how many).
func (h *workspaceRoutes) upload(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the upload as multipart/form-data with the fields path and files")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_form", err.Error())
		return
	}
	requested, dir, user := r.URL.Query().Get("user_id"), r.URL.Query().Get("path"), ""
	var written []string
	var total int64
	// target says whom the upload is for and checks its directory, once,
	// at the first file.
	target := func() bool {
		if user != "" {
			return true
		}
		u, ok := userOwner(w, r, requested)
		if !ok {
			return false
		}
		e, err := h.ws.StatWorkspace(r.Context(), u, dir)
		if err == nil && e.Type != "dir" {
			writeProblem(w, r, http.StatusConflict, "conflict", fmt.Sprintf("path %q is not a directory", dir))
			return false
		}
		if err != nil {
			writeError(w, r, err)
			return false
		}
		user = u
		return true
	}
	stopped := func() string { return fmt.Sprintf(" (%d file(s) were uploaded before it: %q)", len(written), written) }
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			formProblem(w, r, err)
			return
		}
		switch name := part.FormName(); name {
		case "user_id", "path":
			if user != "" {
				writeProblem(w, r, http.StatusBadRequest, "invalid_form", "send path and user_id before the files")
				return
			}
			v, ok := formField(w, r, part, name)
			if !ok {
				return
			}
			if name == "path" {
				dir = v
			} else {
				requested = v
			}
		case "files":
			if !target() {
				return
			}
			fname, err := uploadName(part)
			if err != nil {
				writeProblem(w, r, http.StatusBadRequest, "invalid_filename", err.Error()+stopped())
				return
			}
			in := &capReader{r: part, n: h.limits.MaxUploadBytes}
			e, err := h.ws.WriteWorkspaceFile(r.Context(), user, path.Join(dir, fname), in, true)
			switch {
			case errors.Is(in.err, errUploadTooLarge):
				writeProblem(w, r, http.StatusRequestEntityTooLarge, "file_too_large",
					fmt.Sprintf("%s is over the %d-byte limit of one file (workspace.max_upload_bytes)%s", fname, h.limits.MaxUploadBytes, stopped()))
				return
			case in.err != nil:
				formProblem(w, r, in.err)
				return
			case overQuota(err):
				writeProblem(w, r, http.StatusRequestEntityTooLarge, "quota_exceeded", fmt.Sprintf("%s: %v%s", fname, err, stopped()))
				return
			case err != nil:
				writeError(w, r, fmt.Errorf("%w%s", err, stopped()))
				return
			}
			written, total = append(written, e.Path), total+e.Size
		default:
			writeProblem(w, r, http.StatusBadRequest, "unknown_field", fmt.Sprintf("unknown form field %q (fields: path, user_id, files)", name))
			return
		}
	}
	if !target() {
		return
	}
	if len(written) == 0 {
		writeProblem(w, r, http.StatusBadRequest, "invalid_form", "send one or more files parts")
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "uploaded", "files": written, "bytes": total})
}

// formField reads a short form field, trimmed.
func formField(w http.ResponseWriter, r *http.Request, part *multipart.Part, name string) (string, bool) {
	b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
	if err != nil {
		return "", formProblem(w, r, err)
	}
	if len(b) > maxFormField {
		writeProblem(w, r, http.StatusBadRequest, "invalid_form", fmt.Sprintf("the field %s is longer than %d bytes", name, maxFormField))
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}
