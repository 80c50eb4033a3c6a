package gateway

import (
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// userScope reads the required user_id query parameter for listings.
func userScope(w http.ResponseWriter, r *http.Request) (string, bool) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "the user_id query parameter is required")
		return "", false
	}
	return userID, true
}

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	page, err := pageOf(r, "sessions", userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sessions, err := s.b.ListSessions(r.Context(), userID, page.Page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sessions, next := orchestrator.CutPage(page, sessions, orchestrator.SessionKey)
	writeJSON(w, r, http.StatusOK, map[string]any{"sessions": sessions, "next_cursor": next})
}

// handleGetSession is GET /wunder/sessions/{id}: the session and its
// history (?limit= keeps the last n messages).
func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", 0, 1<<20)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	id := r.PathValue("session_id")
	sess, err := s.b.GetSession(r.Context(), userID, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	msgs, err := s.b.History(r.Context(), userID, id, limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, struct {
		*orchestrator.Session
		Messages []orchestrator.Message `json:"messages"`
	}{sess, nonNil(msgs)})
}

func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.b.DeleteSession(r.Context(), userID, r.PathValue("session_id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// renameRequest is the body of POST /wunder/sessions/{id}/title.
type renameRequest struct {
	UserID string `json:"user_id"`
	Title  string `json:"title"`
}

// handleRenameSession is POST /wunder/sessions/{id}/title (the original
// wunder's route, /wunder/chat/sessions/{id}/title, under wunder's
// session path): {"title": "..."} renames the caller's session and
// answers the session. The title is trimmed and must be one line of 1 to
// orchestrator.MaxSessionTitle characters (400 invalid_argument naming
// the limit); another user's session is 404, as a missing one.
func (s *Server) handleRenameSession(w http.ResponseWriter, r *http.Request) {
	var req renameRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := namedScope(w, r, req.UserID)
	if !ok {
		return
	}
	sess, err := s.b.RenameSession(r.Context(), userID, r.PathValue("session_id"), req.Title)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, sess)
}
