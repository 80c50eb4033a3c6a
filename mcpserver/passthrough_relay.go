package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"sync"
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
// until it ends). answered says the response went out; streamed that w
// is an event stream already.
func relay(w http.ResponseWriter, msgs iter.Seq[[]byte], id json.RawMessage, final func([]byte) []byte) (answered, streamed bool) {
	start := func() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache, no-transform")
		w.WriteHeader(http.StatusOK)
		streamed = true
	}
	if id == nil {
		start()
		_ = http.NewResponseController(w).Flush()
	}
	var out []byte
	for msg := range msgs {
		if id != nil && responseTo(msg, id) {
			msg = final(msg)
			if !streamed {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-cache, no-transform")
				_, _ = w.Write(msg)
			} else {
				_, _ = w.Write(sse(out[:0], msg))
			}
			return true, streamed
		}
		if !streamed {
			start()
		}
		out = sse(out[:0], msg)
		if _, err := w.Write(out); err != nil {
			return false, streamed
		}
		_ = http.NewResponseController(w).Flush()
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

// sse appends msg to out as one SSE event.
func sse(out, msg []byte) []byte {
	out = append(out, "event: message\ndata: "...)
	out = append(out, compact(msg)...)
	return append(out, "\n\n"...)
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

// readers are the line readers of upstream streams, reused: one per
// request would be the biggest allocation of a forwarded call.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

// sseMessages yields the data of each event of an SSE body and closes it.
func sseMessages(body io.ReadCloser) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		rd := readers.Get().(*bufio.Reader)
		rd.Reset(body)
		defer func() {
			// Read on a little, so that the connection is reused when the
			// upstream ends its stream after the answer.
			_, _ = io.Copy(io.Discard, io.LimitReader(rd, 64<<10))
			_ = body.Close()
			rd.Reset(nil)
			readers.Put(rd)
		}()
		for data := range sseData(rd) {
			if !yield(data) {
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

// sseData yields the data of each event of an SSE stream (lines joined by
// \n); other fields (event, id, retry, comments) are not needed here.
func sseData(rd *bufio.Reader) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		var data []byte
		for {
			line, err := readLine(rd)
			if err != nil {
				return // an event without its blank line is incomplete: dropped
			}
			if len(line) == 0 {
				if len(data) > 0 && !yield(data) {
					return
				}
				data = data[:0]
				continue
			}
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				v = bytes.TrimPrefix(v, []byte(" "))
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, v...)
				if len(data) > maxAnswer {
					return // an event past the bound is dropped, and the relay ends
				}
			}
		}
	}
}

// readLine reads one SSE line without its end (\n, \r\n or \r\n at EOF).
func readLine(rd *bufio.Reader) ([]byte, error) {
	line, err := rd.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = rd.ReadSlice('\n')
			long = append(long, line...)
			if len(long) > maxAnswer {
				return nil, errors.New("SSE line too long")
			}
		}
		line = long
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if err != nil && len(line) == 0 {
		return nil, err
	}
	return line, nil // a last line without an end comes first, the error next time
}
