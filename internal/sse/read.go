package sse

import (
	"bufio"
	"bytes"
	"io"
	"iter"
	"strconv"
	"time"
)

// MaxLine bounds one line of a stream Read accepts.
const MaxLine = 16 << 20

// Read parses a text/event-stream body (the HTML standard's rules: lines end
// in LF, CRLF or CR; "field: value" with one optional space; comments start
// with ':'; a blank line dispatches an event; data lines are joined with
// LF; an event with no data is not dispatched) and yields each event. The
// sequence ends at EOF, after a last event without a blank line, or with
// the read error (a line over MaxLine is bufio.ErrTooLong). It is the
// client side of every stream wunder follows: A2A peers, and wunder itself.
func Read(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), MaxLine)
		sc.Split(scanLines)
		var ev Event
		var data []byte
		hasData := false
		dispatch := func() bool {
			if !hasData {
				ev = Event{}
				return true
			}
			ev.Data = data
			ok := yield(ev, nil)
			ev, data, hasData = Event{}, nil, false
			return ok
		}
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) == 0 {
				if !dispatch() {
					return
				}
				continue
			}
			if line[0] == ':' {
				continue
			}
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				hasData = true
			case "event":
				ev.Type = string(value)
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					ev.ID = string(value)
				}
			case "retry":
				if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
					ev.Retry = time.Duration(ms) * time.Millisecond
				}
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, err)
			return
		}
		dispatch()
	}
}

// scanLines splits on LF, CRLF or a lone CR.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		switch {
		case data[i] == '\n':
			return i + 1, data[:i], nil
		case i+1 < len(data) && data[i+1] == '\n':
			return i + 2, data[:i], nil
		case i+1 < len(data) || atEOF:
			return i + 1, data[:i], nil
		default:
			return 0, nil, nil // a CR at the end: wait, it may be a CRLF
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
