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
	// Buffered: the events a batch makes visible at once pass without a
	// goroutine switch each, and go out in one write (below). 4, not more:
	// 16 cost an open stream 1.8 KiB more and wrote no fewer times.
	items := make(chan item, 4)
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
	// send writes one item without flushing it, and reports whether the
	// stream goes on.
	send := func(it item) bool {
		if it.err != nil {
			if ctx.Err() == nil {
				logger(ctx).WarnContext(ctx, "event stream failed", "run_id", runID, "err", it.err)
				data, _ := json.Marshal(orchestrator.ErrorData{Code: "stream_failed", Message: "the event log could not be read; resume with Last-Event-ID"})
				_ = sw.Buffer(sse.Event{Type: orchestrator.EventError, Data: data})
			}
			return false
		}
		data, err := json.Marshal(it.ev)
		if err != nil {
			logger(ctx).ErrorContext(ctx, "event not encodable", "run_id", runID, "seq", it.ev.Seq, "err", err)
			return true
		}
		return sw.Buffer(sse.Event{ID: strconv.FormatInt(it.ev.Seq, 10), Type: it.ev.Type, Data: data}) == nil
	}
	for {
		select {
		case it, ok := <-items:
			// This event and those already waiting go out in one write:
			// a batch of the log becomes visible at once.
			more := ok && send(it)
		waiting:
			for more {
				select {
				case it, ok := <-items:
					more = ok && send(it)
				default:
					break waiting
				}
			}
			if err := sw.Flush(); err != nil || !more {
				return // the client left, or the stream ended
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
