package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// Long-term memory (docs/memory.md): the original's admin routes and the
// user's own.
//
//	GET    /wunder/admin/memory/users
//	GET    /wunder/admin/memory/status                ?user_id=&limit=(100, at most 1000)
//	GET    /wunder/admin/memory/status/{task_id}
//	GET    /wunder/admin/memory/{user_id}
//	DELETE /wunder/admin/memory/{user_id}
//	POST   /wunder/admin/memory/{user_id}/enabled     {"enabled":bool}
//	PUT    /wunder/admin/memory/{user_id}/{session_id} {"summary":"..."}
//	DELETE /wunder/admin/memory/{user_id}/{session_id}
//
//	GET    /wunder/memory                ?user_id= (admins name the user)
//	DELETE /wunder/memory
//	PUT    /wunder/memory/enabled        {"enabled":bool}
//	PUT    /wunder/memory/{session_id}   {"summary":"..."}
//	DELETE /wunder/memory/{session_id}

// Memory is what the memory routes need; *memory.Memory satisfies it.
type Memory interface {
	Enabled(ctx context.Context, userID string) (bool, error)
	SetEnabled(ctx context.Context, userID string, enabled bool) error
	Users(ctx context.Context) ([]memory.User, error)
	Records(ctx context.Context, userID string) ([]memory.Record, error)
	UpdateRecord(ctx context.Context, userID, sessionID, summary string) error
	DeleteRecords(ctx context.Context, userID, sessionID string) (int, error)
	Tasks(ctx context.Context, f memory.TaskFilter) ([]memory.Task, error)
	Task(ctx context.Context, id string) (*memory.Task, error)
}

var _ Memory = (*memory.Memory)(nil)

func (s *Server) memoryRoutes() {
	mem := s.opts.Memory
	if mem == nil {
		return
	}
	m := &memoryRoutes{mem: mem}
	s.mux.HandleFunc("GET /wunder/admin/memory/users", m.users)
	s.mux.HandleFunc("GET /wunder/admin/memory/status", m.tasks)
	s.mux.HandleFunc("GET /wunder/admin/memory/status/{task_id}", m.task)
	s.mux.HandleFunc("GET /wunder/admin/memory/{user_id}", m.records)
	s.mux.HandleFunc("DELETE /wunder/admin/memory/{user_id}", m.deleteRecords)
	s.mux.HandleFunc("POST /wunder/admin/memory/{user_id}/enabled", m.setEnabled)
	s.mux.HandleFunc("PUT /wunder/admin/memory/{user_id}/{session_id}", m.updateRecord)
	s.mux.HandleFunc("DELETE /wunder/admin/memory/{user_id}/{session_id}", m.deleteRecords)
	s.mux.HandleFunc("GET /wunder/memory", m.records)
	s.mux.HandleFunc("DELETE /wunder/memory", m.deleteRecords)
	s.mux.HandleFunc("PUT /wunder/memory/enabled", m.setEnabled)
	s.mux.HandleFunc("PUT /wunder/memory/{session_id}", m.updateRecord)
	s.mux.HandleFunc("DELETE /wunder/memory/{session_id}", m.deleteRecords)
}

type memoryRoutes struct{ mem Memory }

// memoryUser is the user a memory route acts for: the path's user_id on
// the admin routes (admins only), else the caller (an admin names the user
// with ?user_id=).
func memoryUser(w http.ResponseWriter, r *http.Request) (string, bool) {
	if id := r.PathValue("user_id"); id != "" {
		return id, adminOnly(w, r)
	}
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required (an admin names the user whose memory this is)")
		return "", false
	}
	return userID, true
}

// recordView is a record as the routes answer it.
type recordView struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (m *memoryRoutes) records(w http.ResponseWriter, r *http.Request) {
	userID, ok := memoryUser(w, r)
	if !ok {
		return
	}
	enabled, err := m.mem.Enabled(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	recs, err := m.mem.Records(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	views := make([]recordView, len(recs))
	for i, rec := range recs {
		views[i] = recordView{ID: rec.ID, SessionID: rec.SessionID, Summary: rec.Summary, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, "enabled": enabled, "records": views})
}

// deleteRecords removes one record (a session_id in the path) or all the
// user's records.
func (m *memoryRoutes) deleteRecords(w http.ResponseWriter, r *http.Request) {
	userID, ok := memoryUser(w, r)
	if !ok {
		return
	}
	n, err := m.mem.DeleteRecords(r.Context(), userID, r.PathValue("session_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "deleted": n})
}

func (m *memoryRoutes) setEnabled(w http.ResponseWriter, r *http.Request) {
	userID, ok := memoryUser(w, r)
	if !ok {
		return
	}
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	if req.Enabled == nil {
		writeError(w, r, fmt.Errorf("%w: enabled (true or false) is required", orchestrator.ErrInvalidArgument))
		return
	}
	if err := m.mem.SetEnabled(r.Context(), userID, *req.Enabled); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, "enabled": *req.Enabled})
}

func (m *memoryRoutes) updateRecord(w http.ResponseWriter, r *http.Request) {
	userID, ok := memoryUser(w, r)
	if !ok {
		return
	}
	var req struct {
		Summary string `json:"summary"`
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	sessionID := r.PathValue("session_id")
	if err := m.mem.UpdateRecord(r.Context(), userID, sessionID, req.Summary); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"ok": true, "session_id": sessionID})
}

func (m *memoryRoutes) users(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	users, err := m.mem.Users(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"users": nonNil(users)})
}

// taskView is a task with its elapsed time.
type taskView struct {
	memory.Task
	// ElapsedS is from start to end (or to now while running).
	ElapsedS *float64 `json:"elapsed_s,omitempty"`
}

func viewTask(t memory.Task) taskView {
	v := taskView{Task: t}
	if t.StartedAt != nil {
		end := time.Now()
		if t.FinishedAt != nil {
			end = *t.FinishedAt
		}
		s := end.Sub(*t.StartedAt).Seconds()
		v.ElapsedS = &s
	}
	return v
}

// tasks is GET /wunder/admin/memory/status: the recent tasks, split as the
// original does into active (queued, running) and history (done, failed).
func (m *memoryRoutes) tasks(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	f := memory.TaskFilter{UserID: r.URL.Query().Get("user_id")}
	limit, err := queryInt(r, "limit", 100, 1000)
	if err != nil {
		writeError(w, r, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err))
		return
	}
	f.Limit = max(limit, 1)
	list, err := m.mem.Tasks(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	active, history := []taskView{}, []taskView{}
	for _, t := range list {
		if t.State == memory.Queued || t.State == memory.Running {
			active = append(active, viewTask(t))
		} else {
			history = append(history, viewTask(t))
		}
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"active": active, "history": history})
}

func (m *memoryRoutes) task(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	t, err := m.mem.Task(r.Context(), r.PathValue("task_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, viewTask(*t))
}
