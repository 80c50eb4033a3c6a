package sse_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	r3 "github.com/r3labs/sse/v2"
	backoff "gopkg.in/cenkalti/backoff.v1"

	"github.com/wunder/wunder/internal/sse"
)

// readAll reads s a byte at a time, so that every line end and blank line
// is split across reads somewhere.
func readAll(s string) ([]sse.Event, error) {
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
	in := ": comment\n\n" +
		"id: 1\nevent: progress\ndata: {\"a\":1}\n\n" +
		"data: line one\r\ndata:line two\r\n\r\n" + // CRLF, no space after the colon
		"id: 3\rretry: 1500\rdata: cr only\r\r" + // lone CR
		"event: nodata\nid: 9\n\n" + // no data: not dispatched
		"data\n\n" + // a data line without a colon: empty data
		"data:  two spaces\nretry: +5\nid: a\x00b\n\n" + // one space dropped; a signed retry and an id with NUL ignored
		"event: final\ndata: last\n\n"
	got, err := readAll(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []sse.Event{
		{ID: "1", Type: "progress", Data: []byte(`{"a":1}`)},
		{Data: []byte("line one\nline two")},
		{ID: "3", Retry: 1500 * time.Millisecond, Data: []byte("cr only")},
		{Data: []byte{}},
		{Data: []byte(" two spaces")},
		{Type: "final", Data: []byte("last")},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("events (-want +got):\n%s", d)
	}
}

// A stream that ends inside an event (after some of its lines, before its
// blank line) does not dispatch it: Next returns what came of it with
// ErrIncomplete, Read ends with the error. A stream that ends after a
// comment or between events ends cleanly.
func TestReadEndsInsideAnEvent(t *testing.T) {
	for _, c := range []struct {
		name, in string
		events   []string // data of the events before the end
		partial  string   // the incomplete event's data; "" for a clean end
	}{
		{"no blank line", "data: a\n\ndata: b", []string{"a"}, "b"},
		{"one line end", "data: a\n\ndata: b\n", []string{"a"}, "b"},
		{"crlf", "data: a\r\n\r\ndata: b\r\ndata: c\r\n", []string{"a"}, "b\nc"},
		{"cr", "data: a\r\rdata: b\r", []string{"a"}, "b"},
		{"cut line", "data: a\n\ndata: {\"x\":", []string{"a"}, `{"x":`},
		{"whole", "data: a\n\ndata: b\n\n", []string{"a", "b"}, ""},
		{"crlf whole", "data: a\r\n\r\n", []string{"a"}, ""},
		{"lf then cr blank", "data: a\n\r", []string{"a"}, ""},
		{"cr then crlf blank", "data: a\r\r\n", []string{"a"}, ""},
		{"trailing comment", "data: a\n\n: ping", []string{"a"}, ""},
		{"trailing id", "data: a\n\nid: 4\n", []string{"a"}, ""},
		{"empty", "", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var body io.Reader = strings.NewReader(c.in)
				if oneByte {
					body = iotest.OneByteReader(body)
				}
				rd := sse.NewReader(body, 1<<10)
				var got []string
				var ev sse.Event
				var err error
				for {
					if ev, err = rd.Next(); err != nil {
						break
					}
					got = append(got, string(ev.Data))
				}
				if !slices.Equal(got, c.events) {
					t.Fatalf("events %q, want %q", got, c.events)
				}
				switch {
				case c.partial == "" && err != io.EOF:
					t.Fatalf("end: %v, want io.EOF", err)
				case c.partial != "" && (!errors.Is(err, sse.ErrIncomplete) || string(ev.Data) != c.partial):
					t.Fatalf("end: %v with %q, want ErrIncomplete with %q", err, ev.Data, c.partial)
				}
				if _, err := rd.Next(); err != io.EOF {
					t.Fatalf("after the end: %v, want io.EOF", err)
				}
			}
			_, err := readAll(c.in)
			if want := c.partial != ""; errors.Is(err, sse.ErrIncomplete) != want {
				t.Fatalf("Read ends with %v; ErrIncomplete wanted: %v", err, want)
			}
		})
	}
}

// cut returns its stream, then err.
type cut struct {
	r   io.Reader
	err error
}

func (c *cut) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, c.err
	}
	return n, err
}

// A connection that fails ends the events with its error, the event it
// cut dropped; one that fails between events ends after them. A cancelled
// read is its error, not the end of the stream.
func TestReadErrors(t *testing.T) {
	reset := errors.New("connection reset (test)")
	for _, c := range []struct {
		name, in string
		err      error
		events   int
	}{
		{"cut inside an event", "data: a\n\ndata: b\ndata: c", reset, 1},
		{"cut between events", "data: a\n\ndata: b\n\n", reset, 2},
		{"cancelled", "data: a\n\n", context.Canceled, 1},
		{"timeout", "data: a\n\n", iotest.ErrTimeout, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n int
			var got error
			for _, err := range sse.Read(&cut{strings.NewReader(c.in), c.err}) {
				if err != nil {
					got = err
					break
				}
				n++
			}
			if n != c.events || !errors.Is(got, c.err) {
				t.Fatalf("%d events then %v; want %d then %v", n, got, c.events, c.err)
			}
		})
	}
}

// An event over the bound is an error that names the bound; the events
// before it arrive.
func TestReadBound(t *testing.T) {
	const bound = 64
	in := "data: small\n\ndata: " + strings.Repeat("x", bound) + "\n\ndata: after\n\n"
	rd := sse.NewReader(strings.NewReader(in), bound)
	if ev, err := rd.Next(); err != nil || string(ev.Data) != "small" {
		t.Fatalf("first: %q %v", ev.Data, err)
	}
	_, err := rd.Next()
	if !errors.Is(err, bufio.ErrTooLong) || !strings.Contains(err.Error(), strconv.Itoa(bound)+" bytes") {
		t.Fatalf("an event over the bound: %v; want bufio.ErrTooLong naming %d bytes", err, bound)
	}
	var got error
	for _, err := range sse.Read(strings.NewReader("data: " + strings.Repeat("x", sse.MaxEvent) + "\n\n")) {
		got = err
	}
	if !errors.Is(got, bufio.ErrTooLong) || !strings.Contains(got.Error(), strconv.Itoa(sse.MaxEvent)) {
		t.Fatalf("Read over MaxEvent: %v", got)
	}
}

// Next's Data is valid until the next call; Read's is the caller's.
func TestReadDataOwnership(t *testing.T) {
	in := "data: one\n\ndata: two\ndata: lines\n\ndata: three\n\ndata: four\ndata: lines\n\n"
	var kept [][]byte
	for ev, err := range sse.Read(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, ev.Data)
	}
	want := []string{"one", "two\nlines", "three", "four\nlines"}
	for i, d := range kept {
		if string(d) != want[i] {
			t.Fatalf("kept event %d = %q, want %q", i, d, want[i])
		}
	}
}

// Two events separated by a line ended in LF and a blank line ended in a
// lone CR read as one: EventStreamReader does not know LF CR as a blank
// line (the package doc). The standard makes them two.
func TestReadMixedLineEnds(t *testing.T) {
	got, err := readAll("data: a\n\rdata: b\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Data) != "a\nb" {
		t.Fatalf("events %+v; want the one EventStreamReader sees", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Why Reader does not use r3labs's Client (the package doc): it sends GET
// whatever the stream, and gives an event without an id the id before.
func TestR3labsClientIsGETOnlyAndCarriesIDsOver(t *testing.T) {
	const body = "id: 7\ndata: a\n\nevent: error\ndata: b\n\n"
	var method string
	c := r3.NewClient("http://peer.invalid/a2a")
	c.Connection = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		method = r.Method
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {sse.ContentType}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})}
	c.ReconnectStrategy = &backoff.StopBackOff{}
	var theirs []string
	if err := c.SubscribeRaw(func(ev *r3.Event) { theirs = append(theirs, string(ev.ID)) }); err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet || !slices.Equal(theirs, []string{"7", "7"}) {
		t.Fatalf("r3labs Client: %s, ids %q; the package doc says GET and [7 7]", method, theirs)
	}
	var ours []string
	for ev, err := range sse.Read(strings.NewReader(body)) {
		if err != nil {
			t.Fatal(err)
		}
		ours = append(ours, ev.ID)
	}
	if !slices.Equal(ours, []string{"7", ""}) {
		t.Fatalf("ids %q, want them as sent", ours)
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
	got, err := readAll(rec.Body.String())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(events, got); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

// Any event the writer writes reads back as itself: its id and type
// without line breaks, its data with each line break as LF.
func FuzzWriteThenRead(f *testing.F) {
	f.Add("7", "tool\nresult", []byte("a\nb\r\nc"), int64(1500))
	f.Add("", "", []byte(""), int64(0))
	f.Add("1", "x", []byte("\r\n\r\n"), int64(0))
	f.Add("id", "e", []byte(" lead\rtrail "), int64(3))
	f.Fuzz(func(t *testing.T, id, typ string, data []byte, retryMS int64) {
		if retryMS < 0 || retryMS >= 1<<31 {
			retryMS = 0 // the reader's bound; the writer writes any
		}
		ev := sse.Event{ID: id, Type: typ, Data: data, Retry: time.Duration(retryMS) * time.Millisecond}
		rec := httptest.NewRecorder()
		w := sse.NewWriter(rec)
		if w.Send(ev) != nil || w.Send(sse.Event{Data: []byte("next")}) != nil {
			t.Fatal("send")
		}
		got, err := readAll(rec.Body.String())
		if err != nil {
			t.Fatal(err)
		}
		noBreaks := strings.NewReplacer("\r", "", "\n", "")
		want := sse.Event{ID: noBreaks.Replace(id), Type: noBreaks.Replace(typ),
			Data: []byte(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data)))}
		if strings.Contains(want.ID, "\x00") {
			want.ID = ""
		}
		want.Retry = ev.Retry
		if len(got) != 2 || string(got[1].Data) != "next" {
			t.Fatalf("read back %+v", got)
		}
		if d := cmp.Diff(want, got[0]); d != "" {
			t.Fatalf("round trip (-want +got):\n%s", d)
		}
	})
}

// Whatever the stream, Read neither panics nor loops; fields stay on one
// line; LF, CRLF and CR framing read the same; and reading a byte at a
// time reads what reading at once does.
func FuzzRead(f *testing.F) {
	f.Add("id: 1\nevent: x\ndata: y\n\n")
	f.Add("data\n\n:\nretry: 5\ndata: \x00")
	f.Add("data: a\n\n\n\ndata: b")
	f.Fuzz(func(t *testing.T, s string) {
		read := func(r io.Reader) ([]sse.Event, error) {
			var out []sse.Event
			for ev, err := range sse.Read(r) {
				if err != nil {
					return out, err
				}
				if strings.ContainsAny(ev.Type, "\r\n") || strings.ContainsAny(ev.ID, "\r\n\x00") {
					t.Fatalf("field spans lines: %+v", ev)
				}
				out = append(out, ev)
			}
			return out, nil
		}
		lf, lfErr := read(strings.NewReader(s))
		if strings.Contains(s, "\r") {
			return
		}
		for _, c := range []struct {
			name string
			r    io.Reader
		}{
			{"one byte at a time", iotest.OneByteReader(strings.NewReader(s))},
			{"crlf", strings.NewReader(strings.ReplaceAll(s, "\n", "\r\n"))},
			{"cr", strings.NewReader(strings.ReplaceAll(s, "\n", "\r"))},
		} {
			got, err := read(c.r)
			if d := cmp.Diff(lf, got); d != "" || !errors.Is(err, lfErr) && err != lfErr {
				t.Fatalf("%s: %v vs %v; events (-lf +%s):\n%s", c.name, lfErr, err, c.name, d)
			}
		}
	})
}
