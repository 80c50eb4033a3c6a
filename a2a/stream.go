package a2a

import (
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// stream serves SendStreamingMessage / message/stream: errors before the
// run starts are plain JSON-RPC errors; then an SSE stream that starts with
// the Task and ends with its final status.
func (h *Handler) stream(rw http.ResponseWriter, r *http.Request, c *call) {
	ctx := r.Context()
	p, err := w.DecodeSendParams(c.m.Params)
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, errParams("%v", err)))
		return
	}
	run, after, err := h.start(ctx, c, p, sendStreamed)
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, err))
		return
	}
	if after > 0 {
		// An answered input-required task: the Task as it is now, then
		// what the run does after the wait.
		if cur, err := h.b.GetRun(ctx, c.userID, run.ID); err == nil {
			run = cur
		}
	}
	// A new task goes out with its first event, once it is stored (its
	// start may wait for that event's write: sendStreamed).
	h.follow(rw, r, c, run, p.HistoryLength, after, after == 0, false)
}

// subscribe serves SubscribeToTask / tasks/resubscribe: the Task as it is
// now, then the task's events replayed from the event log and followed
// live, so a client that reconnects loses nothing, to the task's terminal
// state (section 3.1.6: the stream MUST terminate there, TCK
// STREAM-SUB-002). A wait for input on the way is told as an
// input-required status that is not final, and the stream goes on with
// what the run does once someone answers, on this front-end or any other.
// A terminal task is an immediate error (TCK STREAM-SUB-003).
func (h *Handler) subscribe(rw http.ResponseWriter, r *http.Request, c *call) {
	ctx := r.Context()
	p, err := w.DecodeTaskParams(c.m.Params)
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, errParams("%v", err)))
		return
	}
	run, err := h.b.GetRun(ctx, c.userID, p.ID)
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, err))
		return
	}
	if run.State.Terminal() {
		c.fail(rw, newError(ctx, c.v, w.ErrUnsupportedOperation, "task "+run.ID+" is in a terminal state; use GetTask"))
		return
	}
	h.follow(rw, r, c, run, p.HistoryLength, 0, false, true)
}

// follow streams the task: the Task, then the A2A events of its log after
// afterSeq, to the final status or to an input-required one: a message's
// stream ends there (section 11.7: a stream closes at a terminal or an
// interrupted state; SubscribeToTask resumes it), and with toTerminal (a
// subscription) the stream tells the wait and goes on to the task's end.
// With withFirstEvent the Task (and the response's headers) wait for the
// log's first event, so the task is stored before its id goes out.
func (h *Handler) follow(rw http.ResponseWriter, r *http.Request, c *call, run *orchestrator.Run, historyLength *int, afterSeq int64, withFirstEvent, toTerminal bool) {
	ctx := r.Context()
	t, err := h.taskOf(ctx, c.userID, run, historyLength, true, c.view())
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, err))
		return
	}
	emit := c.sink
	if emit == nil {
		open := sse.NewWriter
		if withFirstEvent {
			open = sse.NewDeferredWriter
		}
		sw := open(rw)
		stop := h.heartbeat(sw)
		defer stop()
		emit = func(raw json.RawMessage, e *w.Error) error { return sw.Send(sse.Event{Data: c.item(raw, e)}) }
	}
	send := func(ev w.Event) bool {
		raw, err := json.Marshal(w.EncodeEvent(c.v, ev))
		if err != nil {
			return false
		}
		return emit(raw, nil) == nil
	}
	taskSent := !withFirstEvent
	if taskSent && !send(w.Event{Task: t}) {
		return
	}
	started := run.State != orchestrator.RunQueued
	each := func(ev orchestrator.Event) error {
		if !taskSent {
			if taskSent = true; !send(w.Event{Task: t}) {
				return errGone
			}
		}
		if ev.Type == orchestrator.EventApprovalRequired || ev.Type == orchestrator.EventUserInputRequired {
			return nil // a wait is told below; a decided approval (an answered question) is history
		}
		for _, out := range h.eventsOf(run, ev, &started, c.view()) {
			if !send(out) {
				return errGone
			}
		}
		return nil
	}
	for after := afterSeq; ; {
		st, err := h.b.Wait(ctx, c.userID, run.ID, after, each)
		switch {
		case errors.Is(err, errGone):
		case err != nil:
			if ctx.Err() == nil {
				_ = emit(nil, h.toError(ctx, c.v, err))
			}
		case st.Paused():
			ps := pauseStatus(run, st)
			ps.Status.Final = !toTerminal
			if send(ps) && toTerminal {
				after = st.Event.Seq
				continue
			}
		}
		return
	}
}

// errGone stops a stream whose client left.
var errGone = errors.New("a2a: the stream's client left")

// heartbeat writes SSE comments while a stream is idle; stop ends it and
// waits for its goroutine.
func (h *Handler) heartbeat(sw *sse.Writer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(h.opts.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if sw.Comment("keep-alive") != nil {
					return
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
