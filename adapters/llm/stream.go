package llm

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// maxLine bounds one line of an event stream (and so one chunk).
const maxLine = 8 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	// Event is the event type; "" means "message".
	Event string
	// Data is the data lines joined by "\n". The decoder reuses it: it
	// holds until the next call of Next.
	Data []byte
}

// sseDecoder reads server-sent events as the WHATWG spec defines them:
// lines end in CRLF, LF or CR; a line starting with ":" is a comment
// (keep-alive); "data:" lines accumulate; a blank line dispatches; one space
// after the colon is dropped; id and retry are ignored.
type sseDecoder struct {
	sc    *bufio.Scanner
	data  []byte
	event string
	// hasData is set once a data line was seen for the pending event.
	hasData bool
}

// newSSEDecoder reads events from r, a line at a time in buf (grown up to
// maxLine when a line needs it).
func newSSEDecoder(r io.Reader, buf []byte) *sseDecoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(buf[:0], maxLine)
	sc.Split(scanSSELines)
	return &sseDecoder{sc: sc}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// an event not terminated by a blank line is dropped then, as the spec
// says, except a lone "[DONE]", which sloppy servers send without one.
func (d *sseDecoder) Next() (sseEvent, error) {
	for d.sc.Scan() {
		line := d.sc.Bytes()
		if len(line) == 0 {
			if !d.hasData {
				d.event = ""
				continue
			}
			ev := sseEvent{Event: d.event, Data: d.data}
			d.data, d.event, d.hasData = d.data[:0], "", false
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if d.hasData {
				d.data = append(d.data, '\n')
			}
			d.data = append(d.data, value...)
			d.hasData = true
		case "event":
			d.event = string(value)
		}
	}
	if err := d.sc.Err(); err != nil {
		return sseEvent{}, err
	}
	if d.hasData && string(d.data) == "[DONE]" {
		d.data, d.hasData = nil, false
		return sseEvent{Data: []byte("[DONE]")}, nil
	}
	return sseEvent{}, io.EOF
}

// scanSSELines splits on CRLF, LF or CR. A CR at the end of the buffer waits
// for the next byte, which may be its LF.
func scanSSELines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		switch {
		case data[i] == '\n':
			return i + 1, data[:i], nil
		case i+1 < len(data) && data[i+1] == '\n':
			return i + 2, data[:i], nil
		case i+1 < len(data) || atEOF:
			return i + 1, data[:i], nil
		}
		return 0, nil, nil
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// errBadChunk marks a chunk that is not the JSON it should be.
var errBadChunk = errors.New("malformed chunk")

// accumulator folds stream chunks into a [orchestrator.ModelResponse].
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     []*partialCall
	finish    string
	usage     *wireUsage
}

// partialCall is a tool call whose arguments arrive in fragments.
type partialCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// add folds one chunk in and returns the text deltas it carried.
func (a *accumulator) add(ch *chatChunk) (delta, reasoning string) {
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // n > 1 is never asked for
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
		d := &c.Delta
		a.content.WriteString(d.Content)
		delta += d.Content
		r := d.reasoning()
		a.reasoning.WriteString(r)
		reasoning += r
		for j := range d.ToolCalls {
			a.addCall(&d.ToolCalls[j])
		}
	}
	return delta, reasoning
}

// addCall merges one tool call fragment. Fragments are keyed by index; the
// id, type and name usually come only with the first. A fragment without
// an index (some servers send whole calls) starts a new call when it has an
// id not seen yet and continues the last call otherwise.
func (a *accumulator) addCall(f *wireToolCall) {
	var pc *partialCall
	switch {
	case f.Index != nil:
		for _, c := range a.calls {
			if c.index == *f.Index {
				pc = c
				break
			}
		}
		if pc == nil {
			pc = &partialCall{index: *f.Index}
			a.calls = append(a.calls, pc)
		}
	case len(a.calls) > 0 && (f.ID == "" || f.ID == a.calls[len(a.calls)-1].id):
		pc = a.calls[len(a.calls)-1]
	default:
		next := 0
		for _, c := range a.calls {
			next = max(next, c.index+1)
		}
		pc = &partialCall{index: next}
		a.calls = append(a.calls, pc)
	}
	if pc.id == "" {
		pc.id = f.ID
	}
	if pc.name == "" {
		pc.name = f.Function.Name
	}
	pc.args.WriteString(string(f.Function.Arguments))
}

// complete reports whether the server said the answer is finished.
func (a *accumulator) complete() bool { return a.finish != "" }

func (a *accumulator) response() *orchestrator.ModelResponse {
	out := &orchestrator.ModelResponse{
		Content:          a.content.String(),
		ReasoningContent: a.reasoning.String(),
		Usage:            a.usage.usage(),
		FinishReason:     a.finish,
	}
	calls := slices.Clone(a.calls)
	slices.SortStableFunc(calls, func(x, y *partialCall) int { return cmp.Compare(x.index, y.index) })
	for _, c := range calls {
		out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{
			ID:        callID(c.id),
			Name:      c.name,
			Arguments: rawArguments(c.args.String()),
		})
	}
	return out
}
