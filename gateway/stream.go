package gateway

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strconv"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// stream writes a run's events after seq as SSE (event: type, id: seq,
// data: the event JSON), with a comment heartbeat whenever the stream is
// idle for Options.Heartbeat. It returns when the final event is written,
// the client leaves, or the log fails (then an error event ends the
// stream). The run is never affected by the client. sw says when the
// response's headers go out: a new run's stream (sse.NewDeferredWriter)
// sends them with its first event, since they carry its ids, which nobody
// may hold before the run is stored (Delivery.IDsWithEvents).
func (s *Server) stream(sw *sse.Writer, r *http.Request, userID, runID string, after int64) {
	openStreams.Add(1)
	defer openStreams.Add(-1)
	if s.drained(sw, r) {
		return // opened while draining: the client goes elsewhere at once
	}
	ctx, stop := s.drainable(r.Context())
	defer stop()
	events := func(ctx context.Context) iter.Seq2[orchestrator.Event, error] {
		return s.b.Events(ctx, userID, runID, after)
	}
	// send buffers one event (sse.Pump writes each batch in one write),
	// and reports whether the stream goes on: not after the final event,
	// the log's last, so that it leaves with the response's end in one
	// write. Buffer copies the event, so one buffer holds each event's
	// JSON in turn.
	var buf []byte
	send := func(ev orchestrator.Event, err error) bool {
		if err != nil {
			if ctx.Err() == nil {
				logger(ctx).WarnContext(ctx, "event stream failed", "run_id", runID, "err", err)
				data, _ := json.Marshal(orchestrator.ErrorData{Code: "stream_failed", Message: "the event log could not be read; resume with Last-Event-ID"})
				_ = sw.Buffer(sse.Event{Type: orchestrator.EventError, Data: data})
			}
			return false
		}
		if buf, err = ev.AppendJSON(buf[:0]); err != nil {
			logger(ctx).ErrorContext(ctx, "event not encodable", "run_id", runID, "seq", ev.Seq, "err", err)
			return true
		}
		return sw.Buffer(sse.Event{ID: strconv.FormatInt(ev.Seq, 10), Type: ev.Type, Data: buf}) == nil &&
			ev.Type != orchestrator.EventFinal
	}
	sse.Pump(ctx, sw, s.live.Load().heartbeat, events, send)
	s.drained(sw, r)
}
