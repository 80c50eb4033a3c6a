package gateway

import (
	"net/http"
	"net/http/pprof"
)

// The Go profiler at /debug/pprof/ (net/http/pprof), for admins only and
// only when Options.PProf is set (observability.pprof): a CPU profile
// shows what a load does to the server without restarting it.
//
//	go tool pprof -http : 'http://127.0.0.1:8000/debug/pprof/profile?seconds=20'   # with X-API-Key when one is set
func (s *Server) pprofRoutes() {
	if !s.opts.PProf {
		return
	}
	admin := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if adminOnly(w, r) {
				h(w, r)
			}
		}
	}
	s.mux.HandleFunc("GET /debug/pprof/", admin(pprof.Index))
	s.mux.HandleFunc("GET /debug/pprof/cmdline", admin(pprof.Cmdline))
	s.mux.HandleFunc("GET /debug/pprof/profile", admin(pprof.Profile))
	s.mux.HandleFunc("GET /debug/pprof/symbol", admin(pprof.Symbol))
	s.mux.HandleFunc("GET /debug/pprof/trace", admin(pprof.Trace))
}
