package gateway

import "net/http"

// The Prometheus metrics at /metrics (Options.Metrics, built by
// internal/telemetry). They describe the whole instance (models, tools,
// load), so they are for admins: an admin credential is needed unless
// Options.MetricsPublic (observability.metrics_public) opens the path to
// scrapers without credentials.
//
//	GET /metrics
func (s *Server) metricsRoutes() {
	h := s.opts.Metrics
	if h == nil {
		return
	}
	if s.opts.MetricsPublic {
		s.mux.Handle("GET /metrics", h)
		s.Open("/metrics")
		return
	}
	s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if adminOnly(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

// OpenStreams is how many SSE streams this process has open (the
// wunder_open_streams gauge and the monitor's system snapshot).
func OpenStreams() int64 { return openStreams.Load() }
