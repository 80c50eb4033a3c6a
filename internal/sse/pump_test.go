package sse_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

// flushes records what each flush sent, and tells of each write.
type flushes struct {
	mu      sync.Mutex
	header  http.Header
	pending strings.Builder
	sent    []string
	wrote   chan struct{}
	fail    error // FlushError's answer, when set
}

func newFlushes() *flushes { return &flushes{header: http.Header{}, wrote: make(chan struct{}, 100)} }

func (f *flushes) Header() http.Header { return f.header }
func (f *flushes) WriteHeader(int)     {}
func (f *flushes) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending.Write(b)
}

func (f *flushes) FlushError() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return f.fail
	}
	f.sent = append(f.sent, f.pending.String())
	f.pending.Reset()
	select {
	case f.wrote <- struct{}{}:
	default:
	}
	return nil
}

// stream starts a stream on a new recorder; the headers' flush is behind.
func stream() (*flushes, *sse.Writer) {
	f := newFlushes()
	w := sse.NewWriter(f)
	<-f.wrote
	return f, w
}

// chunks are the flushes after the first, NewWriter's of the headers.
func (f *flushes) chunks() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sent) == 0 {
		return nil
	}
	return append([]string(nil), f.sent[1:]...)
}

func event(n int) sse.Event { return sse.Event{Data: []byte{byte('0' + n)}} }

// The items waiting when one arrives go out with it in one write; the
// stream ends with what write buffered last written but not flushed (the
// handler's return sends it with the response's end), and the items'
// context is cancelled then.
func TestPumpWritesABatchAtOnce(t *testing.T) {
	f, w := stream()
	queued := make(chan struct{})
	itemsDone := make(chan error, 1)
	items := func(ctx context.Context) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			defer func() { itemsDone <- ctx.Err() }()
			for _, n := range []int{1, 2, 3} {
				if !yield(n, nil) {
					return
				}
			}
			close(queued) // 2 and 3 wait in the pump's buffer
			<-f.wrote     // and went out with 1
			if yield(4, nil) {
				<-ctx.Done() // the pump stops after 4
			}
		}
	}
	write := func(n int, err error) bool {
		if n == 1 {
			<-queued
		}
		return w.Buffer(event(n)) == nil && n < 4
	}
	sse.Pump(t.Context(), w, time.Hour, items, write)
	got := f.chunks()
	want := []string{"data: 1\n\ndata: 2\n\ndata: 3\n\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("writes %q; want %q", got, want)
	}
	f.mu.Lock()
	last := f.pending.String()
	f.mu.Unlock()
	if last != "data: 4\n\n" {
		t.Fatalf("left for the handler's return: %q; want the last event, unflushed", last)
	}
	if err := <-itemsDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("the items' context after the pump: %v; want cancelled", err)
	}
}

// An idle stream gets a comment every beat; the pump ends with its
// context, and so do the items.
func TestPumpKeepsAnIdleStreamAlive(t *testing.T) {
	f, w := stream()
	ctx, cancel := context.WithCancel(t.Context())
	items := func(ctx context.Context) iter.Seq2[int, error] {
		return func(func(int, error) bool) { <-ctx.Done() }
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		sse.Pump(ctx, w, time.Millisecond, items, func(int, error) bool { return true })
	}()
	for range 2 {
		<-f.wrote
	}
	cancel()
	<-ended
	if got := f.chunks(); len(got) < 2 || got[0] != ": ping\n\n" || got[1] != ": ping\n\n" {
		t.Fatalf("an idle stream wrote %q; want pings", got)
	}
}

// A client that left (a failed write) ends the pump.
func TestPumpEndsWhenTheClientLeaves(t *testing.T) {
	f, w := stream()
	f.mu.Lock()
	f.fail = errors.New("broken pipe")
	f.mu.Unlock()
	items := func(ctx context.Context) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for n := 1; yield(n, nil); n++ {
			}
		}
	}
	writes := 0
	sse.Pump(t.Context(), w, time.Hour, items, func(n int, _ error) bool { writes++; return w.Buffer(event(n%10)) == nil })
	if writes == 0 || len(f.chunks()) != 0 {
		t.Fatalf("%d writes, %d flushes sent to a client that left", writes, len(f.chunks()))
	}
}
