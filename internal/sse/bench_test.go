package sse_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/wunder/wunder/internal/sse"
)

// events is a run's stream as /wunder writes it: n deltas of about 100
// bytes of JSON, each with id and type.
func events(n int) []sse.Event {
	out := make([]sse.Event, n)
	for i := range out {
		out[i] = sse.Event{ID: strconv.Itoa(i + 1), Type: "llm_output_delta",
			Data: fmt.Appendf(nil, `{"run_id":"run_0123456789","seq":%d,"type":"llm_output_delta","data":{"delta":"word%d "}}`, i+1, i)}
	}
	return out
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) Flush()                      {}

// BenchmarkWrite writes a stream of 200 events, one flush each.
func BenchmarkWrite(b *testing.B) {
	evs := events(200)
	b.ReportAllocs()
	for b.Loop() {
		w := sse.NewWriter(&discard{h: http.Header{}})
		for _, ev := range evs {
			if err := w.Send(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRead reads a stream of 200 events.
func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	w := sse.NewWriter(&bufWriter{&buf, http.Header{}})
	for _, ev := range events(200) {
		_ = w.Send(ev)
	}
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range sse.Read(bytes.NewReader(stream)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 200 {
			b.Fatalf("%d events", n)
		}
	}
}

type bufWriter struct {
	*bytes.Buffer
	h http.Header
}

func (w *bufWriter) Header() http.Header { return w.h }
func (w *bufWriter) WriteHeader(int)     {}
func (w *bufWriter) Flush()              {}

// BenchmarkReadLarge reads a stream of 8 events of 256 KiB.
func BenchmarkReadLarge(b *testing.B) {
	var buf bytes.Buffer
	w := sse.NewWriter(&bufWriter{&buf, http.Header{}})
	for i := range 8 {
		_ = w.Send(sse.Event{ID: strconv.Itoa(i), Data: bytes.Repeat([]byte("x"), 256<<10)})
	}
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range sse.Read(bytes.NewReader(stream)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 8 {
			b.Fatalf("%d events", n)
		}
	}
}
