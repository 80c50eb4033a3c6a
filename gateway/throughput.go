package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// The load test (the original wunder's /wunder/admin/throughput): the
// server drives itself through POST /wunder with a ladder of concurrency
// levels. Admin only.
//
//	POST /wunder/admin/throughput/start   {"concurrency_list":[1,4,16],"runs_per_step":N | "duration_s":S,
//	                                       "question","model_name","stream","tool_names"}
//	POST /wunder/admin/throughput/stop
//	GET  /wunder/admin/throughput/status  {active, history}; ?stream=1: SSE of the running test
//	GET  /wunder/admin/throughput/report  ?run_id= (default: the running test, else the latest)

// ThroughputRequest is the body of /wunder/admin/throughput/start.
type ThroughputRequest struct {
	ConcurrencyList []int `json:"concurrency_list"`
	// Concurrency is accepted for concurrency_list.
	Concurrency []int    `json:"concurrency"`
	DurationS   int      `json:"duration_s"`
	RunsPerStep int      `json:"runs_per_step"`
	Question    string   `json:"question"`
	ModelName   string   `json:"model_name"`
	Stream      *bool    `json:"stream"`
	ToolNames   []string `json:"tool_names"`
}

// Throughput is what the load-test routes need; cmd/wunder adapts
// internal/loadtest to it. Values are encoded as JSON as they are; errors
// are the core's sentinels (ErrConflict: one runs already; ErrNotFound:
// none runs, or no such report; ErrInvalidArgument: a bad request).
type Throughput interface {
	StartThroughput(ctx context.Context, req ThroughputRequest) (any, error)
	StopThroughput(ctx context.Context) (any, error)
	ThroughputStatus(ctx context.Context) (any, error)
	ThroughputReport(ctx context.Context, runID string) (any, error)
	// WatchThroughput yields the running test's report at once and after
	// every change, its final report last; nothing when none runs.
	WatchThroughput(ctx context.Context) iter.Seq[any]
}

func (s *Server) throughputRoutes() {
	if s.opts.Throughput == nil {
		return
	}
	s.mux.HandleFunc("POST /wunder/admin/throughput/start", s.handleThroughputStart)
	s.mux.HandleFunc("POST /wunder/admin/throughput/stop", s.handleThroughputStop)
	s.mux.HandleFunc("GET /wunder/admin/throughput/status", s.handleThroughputStatus)
	s.mux.HandleFunc("GET /wunder/admin/throughput/report", s.handleThroughputReport)
}

func (s *Server) handleThroughputStart(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req ThroughputRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	if len(req.ConcurrencyList) > 0 && len(req.Concurrency) > 0 {
		writeError(w, r, fmt.Errorf("%w: give concurrency_list or concurrency, not both", orchestrator.ErrInvalidArgument))
		return
	}
	if len(req.ConcurrencyList) == 0 {
		req.ConcurrencyList, req.Concurrency = req.Concurrency, nil
	}
	rep, err := s.opts.Throughput.StartThroughput(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusAccepted, rep)
}

func (s *Server) handleThroughputStop(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	rep, err := s.opts.Throughput.StopThroughput(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, rep)
}

// handleThroughputStatus answers {active, history}, or with ?stream=1 the
// running test as SSE: a throughput_progress event with its report at
// once and at every change, then throughput_finished with the final one (throughput_idle when none runs).
func (s *Server) handleThroughputStatus(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	switch r.URL.Query().Get("stream") {
	case "", "0", "false":
		st, err := s.opts.Throughput.ThroughputStatus(r.Context())
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, st)
		return
	case "1", "true":
	default:
		writeError(w, r, fmt.Errorf("%w: stream must be 1 or 0", orchestrator.ErrInvalidArgument))
		return
	}
	openStreams.Add(1)
	defer openStreams.Add(-1)
	sw := sse.NewWriter(w)
	var last any
	send := func(typ string, v any) bool {
		data, err := json.Marshal(v)
		return err == nil && sw.Send(sse.Event{Type: typ, Data: data}) == nil
	}
	for rep := range s.opts.Throughput.WatchThroughput(r.Context()) {
		if !send("throughput_progress", rep) {
			return
		}
		last = rep
	}
	if last == nil {
		send("throughput_idle", map[string]any{"active": nil})
		return
	}
	send("throughput_finished", last)
}

func (s *Server) handleThroughputReport(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	id := r.URL.Query().Get("run_id")
	if len(id) > 128 {
		writeError(w, r, fmt.Errorf("%w: run_id is too long", orchestrator.ErrInvalidArgument))
		return
	}
	rep, err := s.opts.Throughput.ThroughputReport(r.Context(), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, rep)
}
