package gateway

import (
	"fmt"
	"net/http"
	"time"

	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
)

// The performance page's data: this process's load over the last hour or
// so, sampled at a fixed interval (monitor.Sampler). Admin only.
//
//	GET /wunder/admin/performance  ?points=N (the newest N; default all)
//	    -> {"interval_s","points":[{"at","seconds","runs","runs_per_s","runs_failed",
//	        "run_p50_ms","run_p95_ms","run_max_ms","tool_calls","tool_errors",
//	        "tool_p50_ms","tool_p95_ms","tool_max_ms","active","queued"}]}

// Performance is what the performance route reads; *monitor.Sampler
// satisfies it.
type Performance interface {
	Interval() time.Duration
	Points(n int) []monitor.Point
}

var _ Performance = (*monitor.Sampler)(nil)

// maxPerformancePoints bounds ?points= (the sampler keeps fewer anyway).
const maxPerformancePoints = 10_000

func (s *Server) performanceRoutes() {
	if s.opts.Performance == nil {
		return
	}
	s.mux.HandleFunc("GET /wunder/admin/performance", s.handlePerformance)
}

func (s *Server) handlePerformance(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	n, err := queryInt(r, "points", 0, maxPerformancePoints)
	if err != nil {
		writeError(w, r, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err))
		return
	}
	p := s.opts.Performance
	writeJSON(w, r, http.StatusOK, map[string]any{"interval_s": p.Interval().Seconds(), "points": p.Points(n)})
}
