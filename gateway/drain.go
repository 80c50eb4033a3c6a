package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

// Drain ends, at once, every event stream the server serves, resumably,
// and every one opened from now on before its first event: each ends with
// a retry: hint and no error event, and its client reconnects with Last-Event-ID (behind a
// balancer, to another replica) and misses nothing. A stopping server
// calls it once its readiness said no for long enough
// (server.drain_delay_s), before it stops its runs. It may be called more
// than once.
func (s *Server) Drain() { s.drain() }

// drainRetry is the reconnection delay a drained stream asks for.
const drainRetry = time.Second

// drainable is ctx, ended also by Drain; stop releases it.
func (s *Server) drainable(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.draining, cancel)
	return ctx, func() { stop(); cancel() }
}

// drained reports whether a stream of r stopped because the server drains
// (not because its client left), and then ends it with the retry hint.
func (s *Server) drained(sw *sse.Writer, r *http.Request) bool {
	if s.draining.Err() == nil || r.Context().Err() != nil {
		return false
	}
	_ = sw.Retry(drainRetry)
	return true
}
