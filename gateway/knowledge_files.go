package gateway

import (
	"net/http"
)

// The file routes of knowledge bases, the admin's and users' alike, and
// the admin's refresh (knowledge.go registers them).

// handleKnowledgeFiles answers the original's {base, files: [path]} plus
// entries with each file's size, digest and time.
func (s *Server) handleKnowledgeFiles(w http.ResponseWriter, r *http.Request, owner string) {
	q, ok := required(w, r, "base")
	if !ok {
		return
	}
	files, err := s.opts.Knowledge.KnowledgeFiles(r.Context(), owner, q[0])
	if err != nil {
		writeError(w, r, err)
		return
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"base": q[0], "files": paths, "entries": nonNil(files)})
}

func (s *Server) handleKnowledgeFile(w http.ResponseWriter, r *http.Request, owner string) {
	q, ok := required(w, r, "base", "path")
	if !ok {
		return
	}
	data, err := s.opts.Knowledge.ReadKnowledgeFile(r.Context(), owner, q[0], q[1])
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"base": q[0], "path": q[1], "content": string(data)})
}

type knowledgeFileBody struct {
	UserID  string  `json:"user_id"`
	Base    string  `json:"base"`
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// putKnowledgeFile is PUT .../file {base, path, content}.
func (s *Server) putKnowledgeFile(ownerOf ownerOf) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body knowledgeFileBody
		if !decodeJSON(w, r, &body) {
			return
		}
		if body.UserID == "" {
			body.UserID = r.URL.Query().Get("user_id")
		}
		owner, ok := ownerOf(w, r, body.UserID)
		if !ok {
			return
		}
		if body.Base == "" || body.Path == "" || body.Content == nil {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "base, path and content are required")
			return
		}
		if err := s.opts.Knowledge.WriteKnowledgeFile(r.Context(), owner, body.Base, body.Path, []byte(*body.Content)); err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "saved", "base": body.Base, "path": body.Path})
	}
}

func (s *Server) handleDeleteKnowledgeFile(w http.ResponseWriter, r *http.Request, owner string) {
	q, ok := required(w, r, "base", "path")
	if !ok {
		return
	}
	if err := s.opts.Knowledge.DeleteKnowledgeFile(r.Context(), owner, q[0], q[1]); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "deleted", "base": q[0], "path": q[1]})
}

// handleKnowledgeRefresh is POST /wunder/admin/knowledge/refresh[?base=].
func (s *Server) handleKnowledgeRefresh(w http.ResponseWriter, r *http.Request, _ string) {
	base := r.URL.Query().Get("base")
	res, err := s.opts.Knowledge.RefreshKnowledge(r.Context(), base)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "message": "rebuilt", "bases": res})
}
