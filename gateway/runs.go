package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// handleEvents is GET /wunder/runs/{run_id}/events: the run's events as
// SSE from the seq after Last-Event-ID (or ?after=), then live until the
// final event.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	after, err := resumeFrom(r)
	if err != nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	runID := r.PathValue("run_id")
	// Look the run up first, so an unknown run is a 404 problem and not an
	// error inside a stream.
	if _, err := s.b.GetRun(r.Context(), userID, runID); err != nil {
		writeError(w, r, err)
		return
	}
	s.stream(sse.NewWriter(w), r, userID, runID, after)
}

// resumeFrom reads the seq to resume after: Last-Event-ID wins over ?after=.
func resumeFrom(r *http.Request) (int64, error) {
	src, v := "Last-Event-ID", strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		src, v = "after", r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, &badParam{src, v}
	}
	return n, nil
}

type badParam struct{ name, value string }

func (b *badParam) Error() string {
	return b.name + " must be a non-negative event seq, got " + strconv.Quote(b.value)
}

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	run, err := s.b.GetRun(r.Context(), userID, r.PathValue("run_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, run)
}

// handleRunPlan is GET /wunder/runs/{run_id}/plan: the run's todo plan as
// its last plan event left it ({"run_id","steps":[{"title","status"}],
// "strategy"?,"note"?}; no steps when the run made none).
func (s *Server) handleRunPlan(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	runID := r.PathValue("run_id")
	plan, err := s.b.Plan(r.Context(), userID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"run_id": runID, "steps": plan.Steps, "strategy": plan.Strategy, "note": plan.Note})
}

func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	userID, err := scope(r, q.Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, err := pageOf(r, "runs", userID, q.Get("session_id"), q.Get("state"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	f := orchestrator.RunFilter{UserID: userID, SessionID: q.Get("session_id"), Page: page.Page}
	if st := q.Get("state"); st != "" {
		for _, s := range strings.Split(st, ",") {
			f.States = append(f.States, orchestrator.RunState(s))
		}
	}
	runs, err := s.b.ListRuns(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	runs, next := orchestrator.CutPage(page, runs, orchestrator.RunKey)
	writeJSON(w, r, http.StatusOK, map[string]any{"runs": runs, "next_cursor": next})
}

// handleCancel is POST /wunder/runs/{run_id}/cancel.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	run, err := s.b.Cancel(r.Context(), userID, r.PathValue("run_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusAccepted, run)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
