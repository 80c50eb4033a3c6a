package sse_test

import (
	"bufio"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/internal/sse"
)

func readAll(t *testing.T, s string) ([]sse.Event, error) {
	t.Helper()
	var out []sse.Event
	for ev, err := range sse.Read(iotest.OneByteReader(strings.NewReader(s))) {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func TestReadFraming(t *testing.T) {
	in := ": comment\n" +
		"id: 1\nevent: progress\ndata: {\"a\":1}\n\n" +
		"data: line one\r\ndata:line two\r\n\r\n" + // CRLF, no space after colon
		"id: 3\rretry: 1500\rdata: cr only\r\r" + // lone CR
		"event: nodata\n\n" + // no data: not dispatched
		"data: last, no blank line"
	got, err := readAll(t, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []sse.Event{
		{ID: "1", Type: "progress", Data: []byte(`{"a":1}`)},
		{Data: []byte("line one\nline two")},
		{ID: "3", Retry: 1500 * time.Millisecond, Data: []byte("cr only")},
		{Data: []byte("last, no blank line")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

// What the writer writes, the reader reads back.
func TestWriteThenRead(t *testing.T) {
	rec := httptest.NewRecorder()
	events := []sse.Event{{ID: "7", Type: "tool_result", Data: []byte("multi\nline")}, {Type: "final", Data: []byte("{}")}}
	w := sse.NewWriter(rec)
	for _, ev := range events {
		if err := w.Send(ev); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Comment("ping")
	got, err := readAll(t, rec.Body.String())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(events, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

func TestReadErrors(t *testing.T) {
	var err error
	for _, e := range sse.Read(strings.NewReader("data: " + strings.Repeat("x", sse.MaxLine+1) + "\n\n")) {
		err = e
	}
	if !errors.Is(err, bufio.ErrTooLong) {
		t.Fatalf("an over-long line: %v, want bufio.ErrTooLong", err)
	}
	// A failing connection ends the sequence with its error.
	var got error
	for _, err := range sse.Read(iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n\n"))) {
		got = err
	}
	if !errors.Is(got, iotest.ErrTimeout) {
		t.Fatalf("read error = %v, want %v", got, iotest.ErrTimeout)
	}
}

func FuzzRead(f *testing.F) {
	f.Add("id: 1\nevent: x\ndata: y\n\n")
	f.Add("data\r\r\n:\n\rretry: -5\ndata: \x00")
	f.Fuzz(func(t *testing.T, s string) {
		for ev, err := range sse.Read(strings.NewReader(s)) {
			if err != nil {
				return
			}
			if strings.ContainsAny(ev.Type, "\r\n") || strings.ContainsAny(ev.ID, "\r\n\x00") {
				t.Fatalf("field spans lines: %+v", ev)
			}
		}
	})
}
