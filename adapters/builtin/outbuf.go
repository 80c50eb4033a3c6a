package builtin

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"
)

// streamCapFactor bounds streamed deltas: a command streams at most this
// many times MaxOutputBytes through Output, then one marker.
const streamCapFactor = 16

// capBuffer keeps the head and the tail of what is written, max bytes in
// all, and counts what it dropped in between.
type capBuffer struct {
	max     int
	head    []byte
	tail    []byte
	dropped int64
}

func (b *capBuffer) write(p []byte) {
	headMax := b.max / 2
	if room := headMax - len(b.head); room > 0 {
		n := min(room, len(p))
		b.head = append(b.head, p[:n]...)
		p = p[n:]
	}
	b.tail = append(b.tail, p...)
	if tailMax := b.max - headMax; len(b.tail) > 2*tailMax {
		b.trimTail()
	}
}

func (b *capBuffer) trimTail() {
	tailMax := b.max - b.max/2
	if excess := len(b.tail) - tailMax; excess > 0 {
		b.dropped += int64(excess)
		b.tail = append(b.tail[:0], b.tail[excess:]...)
	}
}

// truncated reports whether anything was dropped.
func (b *capBuffer) truncated() bool {
	b.trimTail()
	return b.dropped > 0
}

// String returns head and tail, with a marker between them when bytes were
// dropped; runes cut at the edges are trimmed.
func (b *capBuffer) String() string {
	b.trimTail()
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	head := b.head[:completePrefix(b.head)]
	tail := b.tail
	for i := 0; i < len(tail) && i < utf8.UTFMax && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n[... %d bytes of output truncated ...]\n%s", head, b.dropped, tail)
}

// completePrefix returns the length of b without a trailing incomplete
// UTF-8 sequence.
func completePrefix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// outputSink collects a command's stdout and stderr, line by line in
// arrival order, into one capped buffer and streams them through emit. Its
// writers are called by os/exec's copying goroutines; the mutex keeps emit
// calls serial.
type outputSink struct {
	emit func(stream, delta string)

	// mu guards the fields below and serialises emit.
	mu        sync.Mutex
	buf       capBuffer
	streamed  int
	streamMax int
	stopped   bool
}

func newOutputSink(maxBytes int, emit func(stream, delta string)) *outputSink {
	return &outputSink{emit: emit, buf: capBuffer{max: maxBytes}, streamMax: streamCapFactor * maxBytes}
}

// writer returns the io.Writer for one stream ("stdout" or "stderr").
func (s *outputSink) writer(stream string) *streamWriter {
	return &streamWriter{sink: s, stream: stream}
}

// maxPartialLine bounds how much of an unfinished line a stream holds back
// from the combined output.
const maxPartialLine = 4 << 10

// streamWriter is one stream's writer. It holds back a rune split across
// writes, so every delta is valid UTF-8, and an unfinished line, so stdout
// and stderr interleave in the combined output by whole lines.
type streamWriter struct {
	sink    *outputSink
	stream  string
	pending []byte // the start of a split rune, not yet streamed
	partial []byte // an unfinished line, not yet in the combined output
}

func (w *streamWriter) Write(p []byte) (int, error) {
	s := w.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	w.partial = append(w.partial, p...)
	if i := bytes.LastIndexByte(w.partial, '\n'); i >= 0 || len(w.partial) > maxPartialLine {
		n := i + 1
		if i < 0 {
			n = len(w.partial)
		}
		s.buf.write(w.partial[:n])
		w.partial = append(w.partial[:0], w.partial[n:]...)
	}
	data := append(w.pending, p...)
	n := completePrefix(data)
	w.pending = append([]byte(nil), data[n:]...)
	s.send(w.stream, data[:n])
	return len(p), nil
}

// flush sends and records what Write held back; call it after the
// command's I/O ended.
func (w *streamWriter) flush() {
	s := w.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.write(w.partial)
	s.send(w.stream, w.pending)
	w.partial, w.pending = nil, nil
}

// send emits data unless the streaming cap was reached. Called with mu held.
func (s *outputSink) send(stream string, data []byte) {
	if len(data) == 0 || s.stopped || s.emit == nil {
		return
	}
	if s.streamed+len(data) > s.streamMax {
		s.stopped = true
		s.emit(stream, fmt.Sprintf("\n[streaming stopped after %d bytes; the result keeps the head and tail]\n", s.streamed))
		return
	}
	s.streamed += len(data)
	s.emit(stream, string(data))
}

// result returns the captured output and whether it was truncated.
func (s *outputSink) result() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String(), s.buf.truncated()
}
