// Package sse writes Server-Sent Events (the text/event-stream format of the
// HTML standard) to an http.ResponseWriter — one event per call, flushed at
// once, with comment heartbeats — and reads them back ([Read]). The writer
// is the server side of every stream wunder serves (/wunder, run follow-ups,
// A2A); the reader is the client side of the streams it follows (A2A peers,
// wunder itself in internal/client).
//
// Why our own: r3labs/sse/v2 renumbers event ids, has no mode for a POST
// that answers with a stream, and lets one slow subscriber stall the others
// (DESIGN.md section 8). The writer here is deliberately tiny: the event log
// in the orchestrator does the buffering and replay. Buffer and Flush let a
// caller holding several events send them in one write.
package sse

import (
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
	// WriteTimeout bounds each write, so a client that stopped reading is
	// noticed; zero means no deadline.
	WriteTimeout time.Duration
}

// NewWriter sends the stream's headers (200, text/event-stream, no caching,
// no proxy buffering) and returns a writer. Set other headers before.
func NewWriter(w http.ResponseWriter) *Writer {
	h := w.Header()
	h.Set("Content-Type", ContentType+"; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := &Writer{w: w, rc: http.NewResponseController(w), WriteTimeout: 30 * time.Second}
	sw.mu.Lock()
	sw.flushLocked()
	sw.mu.Unlock()
	return sw
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
func (w *Writer) Send(ev Event) error { return w.write(format(ev), true) }

// Buffer writes one event without flushing it: a caller with several
// events at hand sends them in one write to the connection, then calls
// Flush.
func (w *Writer) Buffer(ev Event) error { return w.write(format(ev), false) }

// Flush sends what Buffer wrote.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.flushLocked()
	}
	return w.err
}

// format is ev in the wire format.
func format(ev Event) string {
	var b strings.Builder
	if ev.ID != "" {
		b.WriteString("id: ")
		b.WriteString(clean(ev.ID))
		b.WriteByte('\n')
	}
	if ev.Type != "" {
		b.WriteString("event: ")
		b.WriteString(clean(ev.Type))
		b.WriteByte('\n')
	}
	if ev.Retry > 0 {
		b.WriteString("retry: ")
		b.WriteString(strconv.FormatInt(ev.Retry.Milliseconds(), 10))
		b.WriteByte('\n')
	}
	data := strings.ReplaceAll(strings.ReplaceAll(string(ev.Data), "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.String()
}

// Comment writes a comment line (": text"), which clients ignore; it keeps
// idle connections and proxies alive.
func (w *Writer) Comment(text string) error {
	return w.write(": "+clean(text)+"\n\n", true)
}

func (w *Writer) write(s string, flush bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.WriteTimeout > 0 {
		// Not every ResponseWriter supports deadlines (httptest's
		// recorder does not); that is not an error.
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.WriteTimeout))
	}
	if _, err := io.WriteString(w.w, s); err != nil {
		w.err = err
		return err
	}
	if flush {
		w.flushLocked()
	}
	return w.err
}

func (w *Writer) flushLocked() {
	if err := w.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		w.err = err
	}
}

// lineBreaks removes line breaks; a Replacer is built on its first use,
// so one is shared rather than built for every field.
var lineBreaks = strings.NewReplacer("\r", "", "\n", "")

// clean removes line breaks from a field that must stay on one line.
func clean(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return lineBreaks.Replace(s)
}
