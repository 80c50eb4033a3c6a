package gateway

import (
	"fmt"
	"net/http"
	"path"
	"strings"
)

// The workspace routes that change files (workspace.go registers them).
// Each answers the original's {ok, message, files} and acts for the user
// of userOwner: a user's token for itself, an admin for the user_id it
// names in the body or the query.

// remove is DELETE /wunder/workspace: the entry at path, or, without a
// path and with confirm=true, everything in the workspace.
func (h *workspaceRoutes) remove(w http.ResponseWriter, r *http.Request) {
	user, ok := userScope(w, r)
	if !ok {
		return
	}
	p := r.URL.Query().Get("path")
	var kept int
	var err error
	msg := "deleted"
	if p == "" || p == "." { // not cleaned: "/" or ".." must reach the resolver and be refused
		confirm, ok := queryBool(w, r, "confirm", false)
		if !ok {
			return
		}
		if !confirm {
			writeProblem(w, r, http.StatusBadRequest, "confirmation_required",
				"without a path this empties the whole workspace; send confirm=true to mean it, or name a path")
			return
		}
		kept, err = h.ws.EmptyWorkspace(r.Context(), user)
		msg = "emptied"
	} else {
		kept, err = h.ws.RemoveWorkspace(r.Context(), user, p)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": msg, "path": cleanPath(p), "kept": kept})
}

// workspaceBody is the JSON body of the write routes; each reads its own
// fields.
type workspaceBody struct {
	UserID          string   `json:"user_id"`
	Path            string   `json:"path"`
	Source          string   `json:"source"`
	Destination     string   `json:"destination"`
	Content         *string  `json:"content"`
	CreateIfMissing bool     `json:"create_if_missing"`
	Action          string   `json:"action"`
	Paths           []string `json:"paths"`
}

// decodeWorkspace reads the body and says whom it acts for.
func decodeWorkspace(w http.ResponseWriter, r *http.Request) (workspaceBody, string, bool) {
	var b workspaceBody
	if !decodeJSON(w, r, &b) {
		return b, "", false
	}
	if b.UserID == "" {
		b.UserID = r.URL.Query().Get("user_id")
	}
	user, ok := userOwner(w, r, b.UserID)
	return b, user, ok
}

func done(w http.ResponseWriter, r *http.Request, msg string, files ...string) {
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": msg, "files": files})
}

func needPath(w http.ResponseWriter, r *http.Request, names ...string) bool {
	writeProblem(w, r, http.StatusBadRequest, "invalid_argument", strings.Join(names, " and ")+" required")
	return false
}

// mkdir is POST /wunder/workspace/dir {path}.
func (h *workspaceRoutes) mkdir(w http.ResponseWriter, r *http.Request) {
	b, user, ok := decodeWorkspace(w, r)
	if !ok {
		return
	}
	if b.Path == "" {
		needPath(w, r, "path is")
		return
	}
	if err := h.ws.MkdirWorkspace(r.Context(), user, b.Path); err != nil {
		writeError(w, r, err)
		return
	}
	done(w, r, "created", cleanPath(b.Path))
}

// source is a move's or copy's source: source, or path (the contract's
// name for every route's path).
func (b workspaceBody) source() string {
	if b.Source != "" {
		return b.Source
	}
	return b.Path
}

// move is POST /wunder/workspace/move {source (or path), destination}.
func (h *workspaceRoutes) move(w http.ResponseWriter, r *http.Request) {
	b, user, ok := decodeWorkspace(w, r)
	if !ok {
		return
	}
	if b.source() == "" || b.Destination == "" {
		needPath(w, r, "source (or path)", "destination are")
		return
	}
	if err := h.ws.MoveWorkspace(r.Context(), user, b.source(), b.Destination); err != nil {
		writeError(w, r, err)
		return
	}
	done(w, r, "moved", cleanPath(b.Destination))
}

// copy is POST /wunder/workspace/copy {source (or path), destination}.
func (h *workspaceRoutes) copy(w http.ResponseWriter, r *http.Request) {
	b, user, ok := decodeWorkspace(w, r)
	if !ok {
		return
	}
	if b.source() == "" || b.Destination == "" {
		needPath(w, r, "source (or path)", "destination are")
		return
	}
	n, err := h.ws.CopyWorkspace(r.Context(), user, b.source(), b.Destination)
	if err != nil {
		writeWorkspaceError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "copied", "files": []string{cleanPath(b.Destination)}, "entries": n})
}

// writeFile is POST /wunder/workspace/file {path, content,
// create_if_missing}: the file replaced atomically.
func (h *workspaceRoutes) writeFile(w http.ResponseWriter, r *http.Request) {
	b, user, ok := decodeWorkspace(w, r)
	if !ok {
		return
	}
	if b.Path == "" || b.Content == nil {
		needPath(w, r, "path", "content are")
		return
	}
	if n := int64(len(*b.Content)); n > h.limits.MaxFileBytes {
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "file_too_large",
			fmt.Sprintf("content is %d bytes, over the %d-byte limit (security.max_file_bytes); upload larger files", n, h.limits.MaxFileBytes))
		return
	}
	e, err := h.ws.WriteWorkspaceFile(r.Context(), user, b.Path, strings.NewReader(*b.Content), b.CreateIfMissing)
	if err != nil {
		writeWorkspaceError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "saved", "files": []string{e.Path}, "size": e.Size})
}

// maxBatch bounds the paths of one batch.
const maxBatch = 1000

// batchFailure is one path a batch could not handle.
type batchFailure struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// batch is POST /wunder/workspace/batch {action: delete|move|copy, paths,
// destination (a directory, for move and copy)}: each path on its own,
// in order; one failing does not stop or undo the others. ok is true when
// all succeeded.
func (h *workspaceRoutes) batch(w http.ResponseWriter, r *http.Request) {
	b, user, ok := decodeWorkspace(w, r)
	if !ok {
		return
	}
	switch {
	case b.Action != "delete" && b.Action != "move" && b.Action != "copy":
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "action must be delete, move or copy")
		return
	case len(b.Paths) == 0 || len(b.Paths) > maxBatch:
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("paths must hold 1 to %d paths", maxBatch))
		return
	case b.Action != "delete" && b.Destination == "":
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "destination (a directory) is required to "+b.Action)
		return
	}
	succeeded := []string{}
	failed := []batchFailure{}
	for _, p := range b.Paths {
		var err error
		switch b.Action {
		case "delete":
			_, err = h.ws.RemoveWorkspace(r.Context(), user, p)
		case "move":
			err = h.ws.MoveWorkspace(r.Context(), user, p, path.Join(b.Destination, path.Base(cleanPath(p))))
		case "copy":
			_, err = h.ws.CopyWorkspace(r.Context(), user, p, path.Join(b.Destination, path.Base(cleanPath(p))))
		}
		if err != nil {
			_, code, msg := classify(r, err)
			if overQuota(err) {
				code = "quota_exceeded"
			}
			failed = append(failed, batchFailure{Path: p, Code: code, Message: errorMessage(r, code, err, msg)})
			continue
		}
		succeeded = append(succeeded, cleanPath(p))
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": len(failed) == 0, "message": fmt.Sprintf("%d succeeded, %d failed", len(succeeded), len(failed)),
		"succeeded": succeeded, "failed": failed})
}
