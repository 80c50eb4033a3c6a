package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"iter"
	"net/http"

	"github.com/wunder/wunder/internal/sse"
)

// The SSE relay: an upstream's answer goes to the downstream message by
// message as it arrives (progress, logging and the upstream's own requests
// stay on the stream of the request they belong to), unchanged; only the
// events' ids are dropped, since the route keeps no event store to resume
// from. An answer whose response comes first and alone goes out as plain
// JSON instead: one write, no stream to frame, as the downstream accepts
// either.

// maxAnswer bounds an upstream's answer (or one SSE event of it) held in
// memory; a larger one ends the relay.
const maxAnswer = 32 << 20

// relay writes msgs to w until the response to id, which passes through
// final on its way (id nil: the standalone stream, relayed as it comes
// until it ends). A response that goes out as plain JSON does so with the
// HTTP status status gives it (nil: 200). answered says the response went
// out; streamed that w is an event stream already.
func relay(w http.ResponseWriter, msgs iter.Seq[[]byte], id json.RawMessage, final func([]byte) []byte, status func([]byte) int) (answered, streamed bool) {
	var sw *sse.Writer
	start := func() {
		sw = sse.NewDeferredWriter(w)
		w.Header().Set("Cache-Control", "no-cache, no-transform")
		streamed = true
	}
	if id == nil {
		start()
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
	}
	for msg := range msgs {
		if id != nil && responseTo(msg, id) {
			msg = final(msg)
			if !streamed {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-cache, no-transform")
				if status != nil {
					w.WriteHeader(status(msg))
				}
				_, _ = w.Write(msg)
			} else {
				_ = sw.Send(sseMessage(msg))
			}
			return true, streamed
		}
		if !streamed {
			start()
		}
		if sw.Send(sseMessage(msg)) != nil {
			return false, streamed
		}
	}
	return false, streamed
}

// responseTo reports whether msg is the response to the request id.
func responseTo(msg []byte, id json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != nil || len(m.ID) == 0 {
		return false
	}
	return bytes.Equal(m.ID, id) || sameJSON(m.ID, id)
}

// sameJSON reports whether a and b are the same JSON value written
// differently (a string's escapes, a number's form).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return va == vb // ids are strings or numbers: comparable
}

// sseMessage is msg as an event of a stream: type message, its data on one
// line.
func sseMessage(msg []byte) sse.Event {
	return sse.Event{Type: "message", Data: compact(msg)}
}

// compact strips the insignificant whitespace of msg when it spans lines.
func compact(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg
	}
	var b bytes.Buffer
	if json.Compact(&b, msg) != nil {
		return nil
	}
	return b.Bytes()
}

// sseMessages yields the data of each event of an SSE body (the one
// reader, internal/sse) and closes it. An event cut by the stream's end,
// or past maxAnswer, ends the relay.
func sseMessages(body io.ReadCloser) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		defer func() {
			// Read on a little, so that the connection is reused when the
			// upstream ends its stream after the answer.
			_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
			_ = body.Close()
		}()
		rd := sse.NewReader(body, maxAnswer)
		for {
			ev, err := rd.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 0 && !yield(ev.Data) {
				return
			}
		}
	}
}

// jsonMessage yields a JSON body as one message and closes it.
func jsonMessage(body io.ReadCloser) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		defer body.Close()
		data, err := io.ReadAll(io.LimitReader(body, maxAnswer+1))
		if err == nil && len(data) <= maxAnswer {
			yield(data)
		}
	}
}
