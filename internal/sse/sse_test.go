package sse_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

func TestWriterFraming(t *testing.T) {
	rec := httptest.NewRecorder()
	w := sse.NewWriter(rec)
	if err := w.Send(sse.Event{ID: "7", Type: "tool\nresult", Data: []byte("a\nb\r\nc"), Retry: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := w.Comment("ping"); err != nil {
		t.Fatal(err)
	}
	want := "id: 7\nevent: toolresult\nretry: 1500\ndata: a\ndata: b\ndata: c\n\n: ping\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body:\n%q\nwant:\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	if !rec.Flushed {
		t.Fatal("not flushed")
	}
}

// Each event reaches the client before the handler returns.
func TestWriterFlushesPerEvent(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := sse.NewWriter(rw)
		for i := range 3 {
			_ = w.Send(sse.Event{ID: string(rune('1' + i)), Data: []byte("x")})
			<-next
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for i := range 3 {
		var lines []string
		for sc.Scan() && sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
		if len(lines) != 2 || lines[0] != "id: "+string(rune('1'+i)) {
			t.Fatalf("event %d: %q", i, lines)
		}
		next <- struct{}{}
	}
}

// flushCounter counts the flushes of a response.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// Buffer writes events without flushing them; Flush sends them at once.
func TestWriterBuffersUntilFlush(t *testing.T) {
	rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	w := sse.NewWriter(rec)
	headers := rec.flushes
	for i := range 3 {
		if err := w.Buffer(sse.Event{ID: string(rune('1' + i)), Type: "e", Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if rec.flushes != headers {
		t.Fatalf("Buffer flushed %d times", rec.flushes-headers)
	}
	if err := w.Flush(); err != nil || rec.flushes != headers+1 {
		t.Fatalf("Flush = %v after %d flushes; want one", err, rec.flushes-headers)
	}
	want := "id: 1\nevent: e\ndata: x\n\nid: 2\nevent: e\ndata: x\n\nid: 3\nevent: e\ndata: x\n\n"
	if got := rec.Body.String(); got != want {
		t.Fatalf("body = %q; want %q", got, want)
	}
}

// headerWatch records when a response's headers are written: explicitly,
// or by its first Write.
type headerWatch struct {
	*flushCounter
	status int
	body   int // bytes written when the headers went out
}

func (h *headerWatch) WriteHeader(code int) {
	if h.status == 0 {
		h.status, h.body = code, h.Body.Len()
	}
	h.ResponseRecorder.WriteHeader(code)
}

func (h *headerWatch) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status, h.body = http.StatusOK, 0
	}
	return h.ResponseRecorder.Write(b)
}

// A deferred writer sends nothing, headers included, until its first
// event, not even a heartbeat; then the headers go out with it, in one
// flush, and comments go out again. NewWriter sends them at once.
func TestDeferredWriterSendsHeadersWithTheFirstEvent(t *testing.T) {
	rec := &headerWatch{flushCounter: &flushCounter{ResponseRecorder: httptest.NewRecorder()}}
	rec.Header().Set("X-Run-Id", "run_1")
	w := sse.NewDeferredWriter(rec)
	if err := w.Comment("ping"); err != nil { // a heartbeat before the first event
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.status != 0 || rec.flushes != 0 || rec.Body.Len() != 0 {
		t.Fatalf("before any event: status %d, %d flushes, body %q; want nothing sent", rec.status, rec.flushes, rec.Body.String())
	}
	if err := w.Buffer(sse.Event{ID: "1", Type: "progress", Data: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if rec.status != http.StatusOK || rec.body != 0 || rec.flushes != 1 {
		t.Fatalf("status %d with %d bytes before it, %d flushes; want 200 with the first event, in one flush", rec.status, rec.body, rec.flushes)
	}
	if ct := rec.Result().Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") || rec.Result().Header.Get("X-Run-Id") != "run_1" {
		t.Fatalf("headers = %v", rec.Result().Header)
	}
	if err := w.Comment("ping"); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.Body.String(), "id: 1\nevent: progress\ndata: {}\n\n: ping\n\n"; got != want {
		t.Fatalf("body = %q; want %q (the heartbeat before the first event dropped, the one after it sent)", got, want)
	}

	eager := &headerWatch{flushCounter: &flushCounter{ResponseRecorder: httptest.NewRecorder()}}
	sse.NewWriter(eager)
	if eager.status != http.StatusOK || eager.flushes != 1 {
		t.Fatalf("NewWriter: status %d, %d flushes; want the headers sent at once", eager.status, eager.flushes)
	}
}
