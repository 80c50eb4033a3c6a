package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// Skills is what the skill routes need: the admin's view of the skills
// every user has and each user's own uploads. cmd/wunder adapts
// adapters/skills to it. owner "" is the admin (the skills every user
// has); any other owner acts on their own uploads only, and another
// user's skill is not found. Errors are the core's sentinels; results are
// encoded as JSON as they are.
type Skills interface {
	AdminSkills(ctx context.Context) (any, error)
	SetAdminEnabled(ctx context.Context, names []string) (any, error)
	UserSkills(ctx context.Context, userID string) (any, error)
	SetUserSkills(ctx context.Context, userID string, s SkillSettings) (any, error)
	UploadSkill(ctx context.Context, owner string, zip []byte) (any, error)
	SkillContent(ctx context.Context, owner, name string) (any, error)
	DeleteSkill(ctx context.Context, owner, name string) error
	// MaxUploadBytes is the largest ZIP an upload takes
	// (skills.max_zip_bytes).
	MaxUploadBytes() int64
}

// SkillSettings is a user's skill settings; a nil list is left as it is.
type SkillSettings struct {
	Enabled *[]string `json:"enabled"`
	Shared  *[]string `json:"shared"`
	Preload *[]string `json:"preload"`
}

// multipartSlack is what an upload's body may hold besides the ZIP
// (boundaries, headers, the user_id field).
const multipartSlack = 64 << 10

// skillRoutes are the original's /wunder/admin/skills and
// /wunder/user_tools/skills (without its per-file editing routes).
func (s *Server) skillRoutes() {
	if s.opts.Skills == nil {
		return
	}
	s.mux.HandleFunc("GET /wunder/admin/skills", s.handleAdminSkills)
	s.mux.HandleFunc("POST /wunder/admin/skills", s.handleAdminSetSkills)
	s.mux.HandleFunc("DELETE /wunder/admin/skills", s.handleDeleteSkill)
	s.mux.HandleFunc("POST /wunder/admin/skills/upload", admins(s.handleUploadSkill))
	s.mux.HandleFunc("GET /wunder/admin/skills/content", s.handleSkillContent)
	s.mux.HandleFunc("GET /wunder/user_tools/skills", s.handleUserSkills)
	s.mux.HandleFunc("POST /wunder/user_tools/skills", s.handleUserSetSkills)
	s.mux.HandleFunc("DELETE /wunder/user_tools/skills", s.handleDeleteSkill)
	s.mux.HandleFunc("POST /wunder/user_tools/skills/upload", s.handleUploadSkill)
	s.mux.HandleFunc("GET /wunder/user_tools/skills/content", s.handleSkillContent)
	limit := s.opts.Skills.MaxUploadBytes() + multipartSlack
	s.routeBodyLimit("/wunder/admin/skills/upload", limit)
	s.routeBodyLimit("/wunder/user_tools/skills/upload", limit)
}

// skillOwner is the owner a skill route acts for: "" on the admin routes
// (admins only), else the acting user (user_id from the query, or form
// for an upload), who must be named.
func skillOwner(w http.ResponseWriter, r *http.Request, requested string) (string, bool) {
	if strings.HasPrefix(r.URL.Path, "/wunder/admin/") {
		return "", adminOnly(w, r)
	}
	userID, err := scope(r, requested)
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required (an admin names the user whose skills these are)")
		return "", false
	}
	return userID, true
}

func (s *Server) handleAdminSkills(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	s.answer(w, r)(s.opts.Skills.AdminSkills(r.Context()))
}

func (s *Server) handleAdminSetSkills(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req struct {
		Enabled *[]string `json:"enabled"`
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	if req.Enabled == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `enabled is required: the list of enabled skills ([] for none)`)
		return
	}
	s.answer(w, r)(s.opts.Skills.SetAdminEnabled(r.Context(), *req.Enabled))
}

func (s *Server) handleUserSkills(w http.ResponseWriter, r *http.Request) {
	owner, ok := skillOwner(w, r, r.URL.Query().Get("user_id"))
	if !ok {
		return
	}
	s.answer(w, r)(s.opts.Skills.UserSkills(r.Context(), owner))
}

func (s *Server) handleUserSetSkills(w http.ResponseWriter, r *http.Request) {
	var req struct {
		UserID string `json:"user_id"`
		SkillSettings
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	owner, ok := skillOwner(w, r, cmp.Or(req.UserID, r.URL.Query().Get("user_id")))
	if !ok {
		return
	}
	s.answer(w, r)(s.opts.Skills.SetUserSkills(r.Context(), owner, req.SkillSettings))
}

func (s *Server) handleSkillContent(w http.ResponseWriter, r *http.Request) {
	owner, ok := skillOwner(w, r, r.URL.Query().Get("user_id"))
	if !ok {
		return
	}
	name, ok := skillNameParam(w, r)
	if !ok {
		return
	}
	s.answer(w, r)(s.opts.Skills.SkillContent(r.Context(), owner, name))
}

func (s *Server) handleDeleteSkill(w http.ResponseWriter, r *http.Request) {
	owner, ok := skillOwner(w, r, r.URL.Query().Get("user_id"))
	if !ok {
		return
	}
	name, ok := skillNameParam(w, r)
	if !ok {
		return
	}
	if err := s.opts.Skills.DeleteSkill(r.Context(), owner, name); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "name": name, "message": "skill " + name + " deleted"})
}

func skillNameParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "name is required (the skill's name)")
		return "", false
	}
	return name, true
}

// handleUploadSkill is POST .../skills/upload: multipart/form-data with
// the ZIP in the field file (and, on the user route, user_id).
func (s *Server) handleUploadSkill(w http.ResponseWriter, r *http.Request) {
	zip, userID, ok := readSkillUpload(w, r, s.opts.Skills.MaxUploadBytes())
	if !ok {
		return
	}
	owner, ok := skillOwner(w, r, cmp.Or(userID, r.URL.Query().Get("user_id")))
	if !ok {
		return
	}
	res, err := s.opts.Skills.UploadSkill(r.Context(), owner, zip)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, map[string]any{"ok": true, "skill": res})
}

// readSkillUpload reads the parts of an upload: the file (at most limit
// bytes) and a user_id field.
func readSkillUpload(w http.ResponseWriter, r *http.Request, limit int64) (zip []byte, userID string, ok bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the skill as multipart/form-data with the ZIP in the field file")
		return nil, "", false
	}
	mr, err := r.MultipartReader()
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_multipart", err.Error())
		return nil, "", false
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			uploadError(w, r, err)
			return nil, "", false
		}
		switch part.FormName() {
		case "file":
			b, err := io.ReadAll(io.LimitReader(part, limit+1))
			if err != nil {
				uploadError(w, r, err)
				return nil, "", false
			}
			if int64(len(b)) > limit {
				writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large",
					fmt.Sprintf("the ZIP is larger than %d bytes (skills.max_zip_bytes)", limit))
				return nil, "", false
			}
			zip = b
		case "user_id":
			b, err := io.ReadAll(io.LimitReader(part, 1024))
			if err != nil {
				uploadError(w, r, err)
				return nil, "", false
			}
			userID = strings.TrimSpace(string(b))
		}
		_ = part.Close()
	}
	if zip == nil {
		writeProblem(w, r, http.StatusBadRequest, "missing_file", "the upload has no field file (the skill's ZIP)")
		return nil, "", false
	}
	return zip, userID, true
}

func uploadError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit))
		return
	}
	writeProblem(w, r, http.StatusBadRequest, "invalid_multipart", err.Error())
}

// answer writes a result as JSON, or its error.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) func(v any, err error) {
	return func(v any, err error) {
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, v)
	}
}
