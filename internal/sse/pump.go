package sse

import (
	"context"
	"iter"
	"time"
)

// Pump streams what items yields. write buffers what an item says (with
// Buffer) and reports whether the stream goes on; the items already
// waiting when one arrives are written too, and all of them go out in one
// write to the connection: a batch of a run's log becomes visible at once,
// and is sent so. While nothing comes for beat, a comment keeps the stream
// alive.
//
// items runs in a goroutine of its own, under a context Pump cancels when
// it returns: when write says the stream ends, the client leaves (a write
// fails) or ctx ends. When the stream ends, what write buffered last is not
// flushed: it goes out when the handler returns, with the end of the
// response, in one write to the connection instead of two (a short run's
// whole stream is then one write, sent with a Content-Length). So the
// handler must return as soon as Pump does.
func Pump[T any](ctx context.Context, w *Writer, beat time.Duration, items func(context.Context) iter.Seq2[T, error], write func(T, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	type item struct {
		v   T
		err error
	}
	// Buffered: the items a batch makes visible at once pass without a
	// goroutine switch each. 4, not more: 16 cost an open stream 1.8 KiB
	// more and wrote no fewer times.
	ch := make(chan item, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for v, err := range items(ctx) {
			select {
			case ch <- item{v, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()

	hb := time.NewTimer(beat)
	defer hb.Stop()
	for {
		select {
		case it, ok := <-ch:
			more := ok && write(it.v, it.err)
		waiting:
			for more {
				select {
				case it, ok := <-ch:
					more = ok && write(it.v, it.err)
				default:
					break waiting
				}
			}
			if !more {
				return // the stream ended: the handler's return sends the rest
			}
			if err := w.Flush(); err != nil {
				return // the client left
			}
			hb.Reset(beat)
		case <-hb.C:
			if err := w.Comment("ping"); err != nil {
				return
			}
			hb.Reset(beat)
		case <-ctx.Done():
			return
		}
	}
}
