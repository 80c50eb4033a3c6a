package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Knowledge is what the knowledge-base routes need; cmd/wunder adapts
// adapters/knowledge to it. owner is whose bases a request reaches: "" for
// the admin's (the configured directories and the admin's uploads, offered
// to everyone), else a user's own. Every lookup is made under owner, so
// another user's base is not found. Bad input is an error wrapping
// orchestrator.ErrInvalidArgument; an unknown base or file ErrNotFound; a
// write to a configured (read-only) base ErrConflict.
type Knowledge interface {
	KnowledgeBases(ctx context.Context, owner string) ([]KnowledgeBase, error)
	// SetKnowledgeBases replaces owner's list of uploaded bases (the files
	// of a base left out are deleted) and returns the bases as
	// KnowledgeBases does.
	SetKnowledgeBases(ctx context.Context, owner string, bases []KnowledgeBase) ([]KnowledgeBase, error)
	KnowledgeFiles(ctx context.Context, owner, base string) ([]KnowledgeFile, error)
	ReadKnowledgeFile(ctx context.Context, owner, base, path string) ([]byte, error)
	// WriteKnowledgeFile creates or replaces a file of an uploaded base.
	WriteKnowledgeFile(ctx context.Context, owner, base, path string, data []byte) error
	DeleteKnowledgeFile(ctx context.Context, owner, base, path string) error
	// RefreshKnowledge parses and indexes the global bases again (one, or
	// all for ""); the value is encoded as JSON as it is.
	RefreshKnowledge(ctx context.Context, base string) (any, error)
	// SearchKnowledge ranks the passages of owner's base for query as the
	// base's tool does in a run (limit 0 = the tool's default); the value
	// is encoded as JSON as it is.
	SearchKnowledge(ctx context.Context, owner, base, query string, limit int) (any, error)
}

// KnowledgeBase is a base as the routes show and take it.
type KnowledgeBase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Shared is for users' bases: offered to every other user as
	// owner@name.
	Shared bool `json:"shared"`
	// Source is "config" (a directory of knowledge.bases, read-only here)
	// or "upload"; Root the directory of a config base.
	Source    string `json:"source,omitempty"`
	Root      string `json:"root,omitempty"`
	FileCount int    `json:"file_count"`
	Bytes     int64  `json:"bytes"`
}

// KnowledgeFile describes a file of a base.
type KnowledgeFile struct {
	Path      string    `json:"path"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// knowledgeRoutes serves the original wunder's knowledge-base routes: the
// admin's under /wunder/admin/knowledge, a user's own under
// /wunder/user_tools/knowledge (docs/http.md, docs/tools.md).
func (s *Server) knowledgeRoutes() {
	if s.opts.Knowledge == nil {
		return
	}
	const admin, user = "/wunder/admin/knowledge", "/wunder/user_tools/knowledge"
	s.mux.HandleFunc("GET "+admin, s.adminKnowledge(s.handleKnowledgeBases))
	s.mux.HandleFunc("POST "+admin, s.handleSetAdminKnowledgeBases)
	s.mux.HandleFunc("GET "+admin+"/files", s.adminKnowledge(s.handleKnowledgeFiles))
	s.mux.HandleFunc("GET "+admin+"/file", s.adminKnowledge(s.handleKnowledgeFile))
	s.mux.HandleFunc("PUT "+admin+"/file", admins(s.putKnowledgeFile(adminOwner)))
	s.mux.HandleFunc("DELETE "+admin+"/file", s.adminKnowledge(s.handleDeleteKnowledgeFile))
	s.mux.HandleFunc("POST "+admin+"/upload", admins(s.uploadKnowledgeFile(adminOwner)))
	s.mux.HandleFunc("POST "+admin+"/refresh", s.adminKnowledge(s.handleKnowledgeRefresh))
	s.mux.HandleFunc("GET "+admin+"/search", s.adminKnowledge(s.handleKnowledgeSearch))
	s.mux.HandleFunc("GET "+user, s.userKnowledge(s.handleKnowledgeBases))
	s.mux.HandleFunc("POST "+user, s.handleSetUserKnowledgeBases)
	s.mux.HandleFunc("GET "+user+"/files", s.userKnowledge(s.handleKnowledgeFiles))
	s.mux.HandleFunc("GET "+user+"/file", s.userKnowledge(s.handleKnowledgeFile))
	s.mux.HandleFunc("PUT "+user+"/file", s.putKnowledgeFile(userOwner))
	s.mux.HandleFunc("DELETE "+user+"/file", s.userKnowledge(s.handleDeleteKnowledgeFile))
	s.mux.HandleFunc("POST "+user+"/upload", s.uploadKnowledgeFile(userOwner))
	s.mux.HandleFunc("GET "+user+"/search", s.userKnowledge(s.handleKnowledgeSearch))
	// An upload may be a document (converted to Markdown): the body limit
	// of the routes that carry attachments.
	s.routeBodyLimit(admin+"/upload", s.opts.AttachmentBodyBytes)
	s.routeBodyLimit(user+"/upload", s.opts.AttachmentBodyBytes)
}

// admins lets only admins reach h. An admin route decides who may call it
// before it reads its body: a caller who may not gets 403, never a 400,
// 413 or 415 about a body it had no business sending (nor the cost of
// reading it).
func admins(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if adminOnly(w, r) {
			h(w, r)
		}
	}
}

// knowledgeHandler is a knowledge route acting for owner.
type knowledgeHandler func(w http.ResponseWriter, r *http.Request, owner string)

// adminKnowledge lets admins only through, acting for owner "".
func (s *Server) adminKnowledge(h knowledgeHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !principal(r.Context()).IsAdmin() {
			writeError(w, r, fmt.Errorf("%w: admin only", orchestrator.ErrPermissionDenied))
			return
		}
		h(w, r, "")
	}
}

// userKnowledge acts for the user of the request: a user's token for
// itself, an admin for the user_id the query names (which it must).
func (s *Server) userKnowledge(h knowledgeHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if owner, ok := userScope(w, r); ok {
			h(w, r, owner)
		}
	}
}

// ownerOf says whom a request with a body (or form) acts for, given
// the user_id it names; it writes the problem and returns false when the
// request may not go on.
type ownerOf func(w http.ResponseWriter, r *http.Request, requested string) (string, bool)

// adminOwner: admins only, for the admin's bases (owner ""), naming no
// user.
func adminOwner(w http.ResponseWriter, r *http.Request, requested string) (string, bool) {
	if !principal(r.Context()).IsAdmin() {
		writeError(w, r, fmt.Errorf("%w: admin only", orchestrator.ErrPermissionDenied))
		return "", false
	}
	if requested != "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument",
			"the admin's knowledge routes reach the admin's bases; a user's are under /wunder/user_tools/knowledge with user_id")
		return "", false
	}
	return "", true
}

// userOwner: the user the request acts for (a user's token for itself,
// an admin for the user it names, which it must).
func userOwner(w http.ResponseWriter, r *http.Request, requested string) (string, bool) {
	owner, err := scope(r, requested)
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if owner == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required")
		return "", false
	}
	return owner, true
}

// required reads required query parameters; it writes the problem and
// returns false when one is missing.
func required(w http.ResponseWriter, r *http.Request, names ...string) ([]string, bool) {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = r.URL.Query().Get(n)
		if out[i] == "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("the %s query parameter is required", n))
			return nil, false
		}
	}
	return out, true
}

func (s *Server) handleKnowledgeBases(w http.ResponseWriter, r *http.Request, owner string) {
	bases, err := s.opts.Knowledge.KnowledgeBases(r.Context(), owner)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeKnowledgeBases(w, r, owner, bases)
}

func writeKnowledgeBases(w http.ResponseWriter, r *http.Request, owner string, bases []KnowledgeBase) {
	body := map[string]any{"knowledge": map[string]any{"bases": nonNil(bases)}}
	if owner != "" {
		body["user_id"] = owner
	}
	writeJSON(w, r, http.StatusOK, body)
}

// The bodies of POST /wunder/admin/knowledge and
// /wunder/user_tools/knowledge: {"knowledge":{"bases":[...]}}. An
// admin's base has no shared flag: it is everyone's.
type adminKnowledgeBody struct {
	Knowledge *struct {
		Bases []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"bases"`
	} `json:"knowledge"`
}

type userKnowledgeBody struct {
	UserID    string `json:"user_id"`
	Knowledge *struct {
		Bases []knowledgeBaseSpec `json:"bases"`
	} `json:"knowledge"`
}

// knowledgeBaseSpec is a base as a user's list sets it.
type knowledgeBaseSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Shared      bool   `json:"shared"`
}

const knowledgeListHelp = `knowledge.bases is required (the whole list; [] removes every base)`

func (s *Server) handleSetAdminKnowledgeBases(w http.ResponseWriter, r *http.Request) {
	owner, ok := adminOwner(w, r, "")
	if !ok {
		return
	}
	var body adminKnowledgeBody
	if !decodeJSON(w, r, &body) {
		return
	}
	if body.Knowledge == nil || body.Knowledge.Bases == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", knowledgeListHelp)
		return
	}
	bases := make([]KnowledgeBase, len(body.Knowledge.Bases))
	for i, b := range body.Knowledge.Bases {
		bases[i] = KnowledgeBase{Name: b.Name, Description: b.Description}
	}
	s.setKnowledgeBases(w, r, owner, bases)
}

func (s *Server) handleSetUserKnowledgeBases(w http.ResponseWriter, r *http.Request) {
	var body userKnowledgeBody
	if !decodeJSON(w, r, &body) {
		return
	}
	if body.UserID == "" {
		body.UserID = r.URL.Query().Get("user_id")
	}
	owner, ok := userOwner(w, r, body.UserID)
	if !ok {
		return
	}
	if body.Knowledge == nil || body.Knowledge.Bases == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", knowledgeListHelp)
		return
	}
	bases := make([]KnowledgeBase, len(body.Knowledge.Bases))
	for i, b := range body.Knowledge.Bases {
		bases[i] = KnowledgeBase{Name: b.Name, Description: b.Description, Shared: b.Shared}
	}
	s.setKnowledgeBases(w, r, owner, bases)
}

func (s *Server) setKnowledgeBases(w http.ResponseWriter, r *http.Request, owner string, bases []KnowledgeBase) {
	got, err := s.opts.Knowledge.SetKnowledgeBases(r.Context(), owner, bases)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeKnowledgeBases(w, r, owner, got)
}

// handleKnowledgeSearch is GET .../knowledge/search?base=&query=&limit=:
// the passages a run's search of the base would return, to test
// retrieval. {"base","query","hits":[{title,heading_path,content,score,source}]}.
func (s *Server) handleKnowledgeSearch(w http.ResponseWriter, r *http.Request, owner string) {
	v, ok := required(w, r, "base", "query")
	if !ok {
		return
	}
	limit := 0
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 20 {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("limit must be an integer from 1 to 20, got %.40q", l))
			return
		}
		limit = n
	}
	hits, err := s.opts.Knowledge.SearchKnowledge(r.Context(), owner, v[0], v[1], limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"base": v[0], "query": v[1], "hits": hits})
}
