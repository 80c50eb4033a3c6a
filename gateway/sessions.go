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
