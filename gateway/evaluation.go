package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"time"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// Capability evaluation (the original wunder's /wunder/admin/evaluation):
// a case set run against a model, scored and stored. Admin only.
//
//	POST   /wunder/admin/evaluation/start            {"model_name","case_set","case_ids"}
//	POST   /wunder/admin/evaluation/{run_id}/cancel
//	GET    /wunder/admin/evaluation/runs             ?model_name=&status=&since=&until=&limit=
//	GET    /wunder/admin/evaluation/cases
//	GET    /wunder/admin/evaluation/stream/{run_id}  SSE: eval_started, eval_item, eval_progress, eval_log, eval_finished
//	GET    /wunder/admin/evaluation/{run_id}         {run, items}
//	DELETE /wunder/admin/evaluation/{run_id}

// EvaluationRequest is the body of /wunder/admin/evaluation/start.
type EvaluationRequest struct {
	ModelName string   `json:"model_name"`
	CaseSet   string   `json:"case_set"`
	CaseIDs   []string `json:"case_ids"`
}

// EvaluationFilter selects runs for /wunder/admin/evaluation/runs.
type EvaluationFilter struct {
	ModelName, Status string
	Since, Until      time.Time
	Limit             int
}

// EvaluationEvent is one event of an evaluation's stream.
type EvaluationEvent struct {
	Type string
	Data any
}

// Evaluation is what the evaluation routes need; cmd/wunder adapts
// internal/evaluation to it. Values are encoded as JSON as they are.
type Evaluation interface {
	StartEvaluation(ctx context.Context, req EvaluationRequest) (any, error)
	CancelEvaluation(ctx context.Context, runID string) (any, error)
	EvaluationRuns(ctx context.Context, f EvaluationFilter) (any, error)
	EvaluationCases(ctx context.Context) (any, error)
	EvaluationRun(ctx context.Context, runID string) (any, error)
	DeleteEvaluation(ctx context.Context, runID string) (any, error)
	// WatchEvaluation yields a run's events from its start, ending after
	// eval_finished.
	WatchEvaluation(ctx context.Context, runID string) iter.Seq2[EvaluationEvent, error]
}

var evalIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (s *Server) evaluationRoutes() {
	if s.opts.Evaluation == nil {
		return
	}
	s.mux.HandleFunc("POST /wunder/admin/evaluation/start", s.handleEvalStart)
	s.mux.HandleFunc("POST /wunder/admin/evaluation/{run_id}/cancel", s.evalByID(s.opts.Evaluation.CancelEvaluation))
	s.mux.HandleFunc("GET /wunder/admin/evaluation/runs", s.handleEvalRuns)
	s.mux.HandleFunc("GET /wunder/admin/evaluation/cases", s.handleEvalCases)
	s.mux.HandleFunc("GET /wunder/admin/evaluation/stream/{run_id}", s.handleEvalStream)
	s.mux.HandleFunc("GET /wunder/admin/evaluation/{run_id}", s.evalByID(s.opts.Evaluation.EvaluationRun))
	s.mux.HandleFunc("DELETE /wunder/admin/evaluation/{run_id}", s.evalByID(s.opts.Evaluation.DeleteEvaluation))
}

// evalRunID reads {run_id}; an id wunder cannot have issued is not found.
func evalRunID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("run_id")
	if !evalIDRE.MatchString(id) {
		writeError(w, r, fmt.Errorf("%w: evaluation run %q", orchestrator.ErrNotFound, id))
		return "", false
	}
	return id, true
}

// evalByID serves a route that calls fn with the {run_id}.
func (s *Server) evalByID(fn func(ctx context.Context, id string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		id, ok := evalRunID(w, r)
		if !ok {
			return
		}
		v, err := fn(r.Context(), id)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, v)
	}
}

func (s *Server) handleEvalStart(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req EvaluationRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	if len(req.CaseIDs) > 1000 || len(req.ModelName) > 256 || len(req.CaseSet) > 256 {
		writeError(w, r, fmt.Errorf("%w: model_name, case_set or case_ids too long", orchestrator.ErrInvalidArgument))
		return
	}
	run, err := s.opts.Evaluation.StartEvaluation(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusAccepted, run)
}

func (s *Server) handleEvalRuns(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	q := r.URL.Query()
	f := EvaluationFilter{ModelName: q.Get("model_name"), Status: q.Get("status")}
	var err error
	if f.Since, err = since(r); err != nil {
		writeError(w, r, err)
		return
	}
	if v := q.Get("until"); v != "" {
		if f.Until, err = time.Parse(time.RFC3339, v); err != nil {
			writeError(w, r, fmt.Errorf("%w: until must be an RFC 3339 time, got %q", orchestrator.ErrInvalidArgument, v))
			return
		}
	}
	if f.Limit, err = queryInt(r, "limit", 100, 1000); err != nil {
		writeError(w, r, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err))
		return
	}
	runs, err := s.opts.Evaluation.EvaluationRuns(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"runs": runs})
}

func (s *Server) handleEvalCases(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	sets, err := s.opts.Evaluation.EvaluationCases(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"case_sets": sets})
}

// handleEvalStream writes a run's events as SSE from its start (an
// unknown run is a 404 before the stream begins).
func (s *Server) handleEvalStream(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	id, ok := evalRunID(w, r)
	if !ok {
		return
	}
	next, stop := iter.Pull2(s.opts.Evaluation.WatchEvaluation(r.Context(), id))
	defer stop()
	ev, err, more := next()
	if err != nil {
		writeError(w, r, err)
		return
	}
	openStreams.Add(1)
	defer openStreams.Add(-1)
	sw := sse.NewWriter(w)
	for seq := 1; more; seq++ {
		if err != nil {
			if r.Context().Err() == nil {
				logger(r.Context()).WarnContext(r.Context(), "evaluation stream failed", "run_id", id, "err", err)
			}
			return
		}
		data, merr := json.Marshal(ev.Data)
		if merr != nil || sw.Send(sse.Event{ID: fmt.Sprint(seq), Type: ev.Type, Data: data}) != nil {
			return
		}
		ev, err, more = next()
	}
}
