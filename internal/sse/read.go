package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	r3 "github.com/r3labs/sse/v2"
)

// MaxEvent is the bound [Read] puts on one event, its fields and line ends
// included.
const MaxEvent = 16 << 20

// ErrIncomplete reports a stream that ended inside an event: after some of
// its lines, before the blank line that dispatches it. The HTML standard
// drops such an event; [Reader.Next] returns what had arrived of it with
// this error, for a caller that must know.
var ErrIncomplete = errors.New("sse: the stream ended inside an event")

// Reader reads the events of one stream. r3labs/sse/v2's
// EventStreamReader cuts the stream into events (at a blank line: LF LF,
// CR CR, CRLF CRLF, or a mix) and bounds their size; Reader parses each
// event's fields and tells a stream that ended cleanly from one cut inside
// an event (see the package doc).
type Reader struct {
	src  source
	er   *r3.EventStreamReader
	max  int
	data []byte // the joined data lines of the last event
	typ  string // the last event type, reused while it repeats
	// rest holds the events read ahead at the end of a stream that ended
	// inside its last one; nil before.
	rest  [][]byte
	final error // what ends the stream once rest is drained
}

// NewReader reads events from r, each at most max bytes long.
func NewReader(r io.Reader, max int) *Reader {
	rd := &Reader{src: source{r: r}, max: max}
	rd.er = r3.NewEventStreamReader(&rd.src, max)
	return rd
}

// Next returns the next event that has data; events without data
// (comments, heartbeats, a lone id:) are skipped. The event's Data is
// valid until the next call: copy what you keep.
//
// At the end of the stream Next returns io.EOF; when the stream ended
// inside an event, ErrIncomplete with what had arrived of that event;
// when an event is over the bound, an error that names it and wraps
// bufio.ErrTooLong; else the error reading the stream returned.
func (r *Reader) Next() (Event, error) {
	for {
		if r.rest != nil {
			return r.nextRest()
		}
		tok, err := r.read()
		if err != nil {
			return Event{}, err
		}
		if r.src.err != nil && !r.src.terminated() {
			// The stream has ended without a blank line, and all that is
			// left of it is buffered: read it now, to know which event is
			// the last, the incomplete one.
			r.rest = [][]byte{bytes.Clone(tok)}
			for {
				t, err := r.read()
				if err != nil {
					r.final = err
					break
				}
				r.rest = append(r.rest, bytes.Clone(t))
			}
			continue
		}
		if ev, ok := r.parse(tok); ok {
			return ev, nil
		}
	}
}

// nextRest returns the next event of those read ahead at the end of a
// stream that ended inside its last one.
func (r *Reader) nextRest() (Event, error) {
	for len(r.rest) > 1 {
		tok := r.rest[0]
		r.rest = r.rest[1:]
		if ev, ok := r.parse(tok); ok {
			return ev, nil
		}
	}
	if len(r.rest) == 1 {
		last := r.rest[0]
		r.rest = r.rest[:0]
		// A connection that failed says more than the event it cut.
		if ev, ok := r.parse(last); ok && r.final == io.EOF {
			return ev, ErrIncomplete
		}
	}
	return Event{}, r.final
}

// read returns the bytes of the next event from EventStreamReader.
func (r *Reader) read() ([]byte, error) {
	tok, err := r.er.ReadEvent()
	switch {
	case err == nil:
		r.src.since = 0
		return tok, nil
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("sse: an event is longer than %d bytes: %w", r.max, err)
	case err == io.EOF && r.src.err != nil && r.src.err != io.EOF:
		// EventStreamReader reports a read cancelled (context.Canceled)
		// as the end of the stream: it is an error.
		return nil, r.src.err
	}
	return nil, err
}

// parse reads the fields of one event: lines end in LF, CR or CRLF; a
// line "name: value" (one space after the colon dropped; no colon: an
// empty value) sets a field; comments (":...") and unknown fields are
// ignored. It reports whether the event has data.
func (r *Reader) parse(tok []byte) (Event, bool) {
	var ev Event
	lines := 0
	cr := bytes.IndexByte(tok, '\r') >= 0 // else lines end in LF, found faster
	for len(tok) > 0 {
		var line []byte
		var i int
		if cr {
			i = bytes.IndexAny(tok, "\r\n")
		} else {
			i = bytes.IndexByte(tok, '\n')
		}
		if i >= 0 {
			line, tok = tok[:i], tok[i+1:]
		} else {
			line, tok = tok, nil
		}
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "data":
			switch lines {
			case 0:
				ev.Data = value // in place: most events have one data line
			case 1:
				r.data = append(append(append(r.data[:0], ev.Data...), '\n'), value...)
				ev.Data = r.data
			default:
				r.data = append(append(r.data, '\n'), value...)
				ev.Data = r.data
			}
			lines++
		case "event":
			if string(value) != r.typ {
				r.typ = string(value)
			}
			ev.Type = r.typ
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // the standard ignores such an id
				ev.ID = string(value)
			}
		case "retry":
			if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
				ev.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if lines > 0 && ev.Data == nil {
		ev.Data = []byte{} // "data:" alone: an event with empty data
	}
	return ev, lines > 0
}

// source is the stream under EventStreamReader: it keeps the first error
// the stream returned (io.EOF included) and its last bytes, which say
// whether it ended with a blank line, and it sizes reads (see Read).
type source struct {
	r    io.Reader
	err  error
	tail [3]byte
	n    int // bytes in tail
	// since counts the bytes read since EventStreamReader last returned
	// an event.
	since int
}

// minRead is the most source reads at once right after an event.
const minRead = 1 << 9

// Read reads at most minRead bytes after an event, and then as much again
// as has been read since, until the next event. EventStreamReader looks
// for the end of an event (five patterns, a bytes.Index each) in all it
// has buffered, after every event and every read: reads that filled its
// 4 KiB with thirty small events cost each of them a scan of the rest
// (BenchmarkRead: 2.05× the CPU of the line reader this package had; 1.17×
// with these reads; 0.93× once parse looks for CR only where there is
// one), and reads that double while an event is incomplete keep the scans
// of a large one linear in its size (BenchmarkReadLarge).
func (s *source) Read(p []byte) (int, error) {
	if limit := max(minRead, s.since); len(p) > limit {
		p = p[:limit]
	}
	n, err := s.r.Read(p)
	s.since += n
	if n >= len(s.tail) {
		copy(s.tail[:], p[n-len(s.tail):n])
		s.n = len(s.tail)
	} else if n > 0 {
		keep := min(s.n, len(s.tail)-n)
		copy(s.tail[:], s.tail[s.n-keep:s.n])
		copy(s.tail[keep:], p[:n])
		s.n = keep + n
	}
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// terminated reports whether the stream ends with a blank line, as an
// event's last line and the blank line after it do: two line ends (LF,
// CR, CRLF) in a row. An empty stream counts as one.
func (s *source) terminated() bool {
	t := s.tail[:s.n]
	switch {
	case len(t) == 0:
		return true
	case bytes.HasSuffix(t, []byte("\r\n")):
		t = t[:len(t)-2]
	case t[len(t)-1] == '\n' || t[len(t)-1] == '\r':
		t = t[:len(t)-1]
	default:
		return false
	}
	return len(t) > 0 && (t[len(t)-1] == '\n' || t[len(t)-1] == '\r')
}

// Read yields the events with data of a text/event-stream body, each at
// most [MaxEvent] bytes, as [Reader.Next] reads them; each event's Data is
// the caller's to keep. The sequence ends at the end of the stream, or
// with an error: ErrIncomplete when the stream ended inside an event, the
// bound's, or the read's.
func Read(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		rd := NewReader(r, MaxEvent)
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			ev.Data = bytes.Clone(ev.Data)
			if !yield(ev, nil) {
				return
			}
		}
	}
}
