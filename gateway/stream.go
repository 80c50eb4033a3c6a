package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// stream writes a run's events after seq as SSE (event: type, id: seq,
// data: the event JSON), with a comment heartbeat whenever the stream is
// idle for Options.Heartbeat. It returns when the final event is written,
// the client leaves, or the log fails (then an error event ends the
// stream). The run is never affected by the client.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, userID, runID string, after int64) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	openStreams.Add(1)
	defer openStreams.Add(-1)
	type item struct {
		ev  orchestrator.Event
		err error
	}
	items := make(chan item)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range s.b.Events(ctx, userID, runID, after) {
			select {
			case items <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
		close(items)
	}()
	defer func() { cancel(); <-done }()

	sw := sse.NewWriter(w)
	beat := s.live.Load().heartbeat
	hb := time.NewTimer(beat)
	defer hb.Stop()
	for {
		select {
		case it, ok := <-items:
			if !ok {
				return
			}
			if it.err != nil {
				if ctx.Err() == nil {
					logger(ctx).WarnContext(ctx, "event stream failed", "run_id", runID, "err", it.err)
					data, _ := json.Marshal(orchestrator.ErrorData{Code: "stream_failed", Message: "the event log could not be read; resume with Last-Event-ID"})
					_ = sw.Send(sse.Event{Type: orchestrator.EventError, Data: data})
				}
				return
			}
			data, err := json.Marshal(it.ev)
			if err != nil {
				logger(ctx).ErrorContext(ctx, "event not encodable", "run_id", runID, "seq", it.ev.Seq, "err", err)
				continue
			}
			if err := sw.Send(sse.Event{ID: strconv.FormatInt(it.ev.Seq, 10), Type: it.ev.Type, Data: data}); err != nil {
				return // the client left
			}
			hb.Reset(beat)
		case <-hb.C:
			if err := sw.Comment("ping"); err != nil {
				return
			}
			hb.Reset(beat)
		case <-ctx.Done():
			return
		}
	}
}
