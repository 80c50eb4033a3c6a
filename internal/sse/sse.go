package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// Writer writes events to one response. It is safe for concurrent use.
type Writer struct {
	// mu serialises writes to w.
	mu  sync.Mutex
	w   io.Writer
	rc  *http.ResponseController
	err error
	// held: a deferred writer that has sent no event yet, whose comments
	// are dropped (its headers go out with its first event, nothing else).
	held bool
	// WriteTimeout bounds each write, so a client that stopped reading is
	// noticed; zero means no deadline.
	WriteTimeout time.Duration
}

// NewWriter sends the stream's headers (200, text/event-stream, no caching,
// no proxy buffering) and returns a writer. Set other headers before.
func NewWriter(w http.ResponseWriter) *Writer {
	sw := NewDeferredWriter(w)
	sw.held = false
	w.WriteHeader(http.StatusOK)
	sw.mu.Lock()
	sw.flushLocked()
	sw.mu.Unlock()
	return sw
}

// NewDeferredWriter is [NewWriter] except that the headers go out with
// the first event, in one write with it: a stream whose headers say what
// its events are about (POST /wunder's run and session ids) says nothing
// before it has an event to send. A comment before the first event (a
// heartbeat) is dropped, since it would send the headers.
func NewDeferredWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", ContentType+"; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	return &Writer{w: w, rc: http.NewResponseController(w), held: true, WriteTimeout: 30 * time.Second}
}

// Event is one event of a stream.
type Event struct {
	ID   string // sent as id:, empty = none
	Type string // sent as event:, empty = "message"
	Data []byte // sent as one data: line per line of Data
	// Retry asks the client to wait this long before reconnecting; 0 = unset.
	Retry time.Duration
}

// Send writes and flushes one event.
func (w *Writer) Send(ev Event) error { return w.writeEvent(ev, true) }

// Buffer writes one event without flushing it: a caller with several
// events at hand sends them in one write to the connection, then calls
// Flush.
func (w *Writer) Buffer(ev Event) error { return w.writeEvent(ev, false) }

// Flush sends what Buffer wrote; a deferred writer with no event yet has
// nothing to send (its headers wait for its first event).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !w.held {
		w.flushLocked()
	}
	return w.err
}

// scratch holds the buffers events are formatted in, shared by every
// stream: an open stream keeps none between its events, and a buffer that
// grew past maxScratch for a large event is not kept at all.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1<<10); return &b }}

const maxScratch = 16 << 10

func (w *Writer) writeEvent(ev Event, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.held = false
	bp := scratch.Get().(*[]byte)
	b := appendEvent((*bp)[:0], ev)
	w.writeLocked(b, flush) // an io.Writer does not retain b
	if cap(b) <= maxScratch {
		*bp = b[:0]
		scratch.Put(bp)
	}
	return w.err
}

// appendEvent appends ev in the wire format to dst: one data: line per
// line of Data, whichever of CRLF, LF or CR ends it.
func appendEvent(dst []byte, ev Event) []byte {
	if ev.ID != "" {
		dst = append(dst, "id: "...)
		dst = appendClean(dst, ev.ID)
		dst = append(dst, '\n')
	}
	if ev.Type != "" {
		dst = append(dst, "event: "...)
		dst = appendClean(dst, ev.Type)
		dst = append(dst, '\n')
	}
	if ev.Retry > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, ev.Retry.Milliseconds(), 10)
		dst = append(dst, '\n')
	}
	data := ev.Data
	for {
		dst = append(dst, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			dst = append(dst, data...)
			dst = append(dst, '\n')
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n')
}

// appendClean appends s without its line breaks: a field that must stay
// on one line.
func appendClean(dst []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i+1:]
	}
}

// Retry writes a block with the retry: field alone, which sets the
// client's reconnection delay and dispatches no event (it has no data):
// a stream that ends on purpose, for its client to resume, ends with it.
func (w *Writer) Retry(d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.held = false
	w.writeLocked(strconv.AppendInt([]byte("retry: "), max(d.Milliseconds(), 0), 10), false)
	w.writeLocked([]byte("\n\n"), true)
	return w.err
}

// Comment writes a comment line (": text"), which clients ignore; it keeps
// idle connections and proxies alive. A deferred writer drops it before
// its first event.
func (w *Writer) Comment(text string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !w.held {
		b := appendClean([]byte(": "), text)
		w.writeLocked(append(b, "\n\n"...), true)
	}
	return w.err
}

// writeLocked writes b and, with flush, flushes; a failure is kept in
// w.err.
func (w *Writer) writeLocked(b []byte, flush bool) {
	if w.WriteTimeout > 0 {
		// Not every ResponseWriter supports deadlines (httptest's
		// recorder does not); that is not an error.
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.WriteTimeout))
	}
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return
	}
	if flush {
		w.flushLocked()
	}
}

func (w *Writer) flushLocked() {
	if err := w.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		w.err = err
	}
}
