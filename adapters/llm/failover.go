package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Failover: llm.models.<name>.fallbacks. A model whose call failed after
// its own retries were spent on a server failure (5xx, a timeout, a
// connection that failed or broke; not a 4xx) hands the call to the next
// model of its list. The switch is an llm_stream_retry event naming it
// (the deltas so far are void), and the response says which model
// answered, so usage is attributed to it. A circuit breaker shared by all
// runs skips a model that failed over within the last CircuitOpen, so a
// dead provider costs one run its retries, not every run.

// DefaultCircuitOpen is how long a failed model is skipped.
const DefaultCircuitOpen = 30 * time.Second

// Breaker remembers which models failed over recently. Safe for
// concurrent use; one per registry.
type Breaker struct {
	open time.Duration
	now  func() time.Time

	mu    sync.Mutex
	until map[string]time.Time // model -> skipped until
}

// NewBreaker returns a breaker that skips a failed model for open (<= 0:
// DefaultCircuitOpen).
func NewBreaker(open time.Duration) *Breaker {
	if open <= 0 {
		open = DefaultCircuitOpen
	}
	return &Breaker{open: open, now: time.Now, until: map[string]time.Time{}}
}

func (b *Breaker) isOpen(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now().Before(b.until[name])
}

func (b *Breaker) trip(name string) {
	b.mu.Lock()
	b.until[name] = b.now().Add(b.open)
	b.mu.Unlock()
}

func (b *Breaker) reset(name string) {
	b.mu.Lock()
	delete(b.until, name)
	b.mu.Unlock()
}

// Named is a model with the name it is configured under.
type Named struct {
	Name  string
	Model orchestrator.Model
}

// Failover calls its models in order, moving on when one fails over.
type Failover struct {
	models  []Named
	breaker *Breaker
}

var _ orchestrator.Model = (*Failover)(nil)

// NewFailover returns the model of primary with fallbacks, sharing b.
func NewFailover(b *Breaker, primary Named, fallbacks ...Named) *Failover {
	return &Failover{models: append([]Named{primary}, fallbacks...), breaker: b}
}

// failsOver reports whether err, a model call's final error, hands the
// call to the next model: a server failure after the retries, not the
// request's own fault (a 4xx) nor a cancellation.
func failsOver(err error) bool {
	if !errors.Is(err, orchestrator.ErrUnavailable) {
		return false
	}
	var se *statusError
	if errors.As(err, &se) && se.status >= 400 && se.status < 500 {
		return false // 408, 409, 429: retried, but the request's own
	}
	return true
}

// statusError carries the HTTP status of a final failure.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// Generate implements [orchestrator.Model].
func (f *Failover) Generate(ctx context.Context, req *orchestrator.ModelRequest) iter.Seq2[orchestrator.ModelEvent, error] {
	return func(yield func(orchestrator.ModelEvent, error) bool) {
		order := f.order()
		for i, m := range order {
			var failed error
			for ev, err := range m.Model.Generate(ctx, req) {
				if err != nil {
					failed = err
					break
				}
				if ev.Response != nil {
					f.breaker.reset(m.Name)
					if ev.Response.Model == "" {
						ev.Response.Model = m.Name
					}
				}
				if !yield(ev, nil) {
					return
				}
			}
			if failed == nil {
				return
			}
			if ctx.Err() != nil || !failsOver(failed) || i == len(order)-1 {
				yield(orchestrator.ModelEvent{}, failed)
				return
			}
			f.breaker.trip(m.Name)
			next := order[i+1].Name
			reason := fmt.Sprintf("model %s failed (%v); switching to %s", m.Name, failed, next)
			if !yield(orchestrator.ModelEvent{Retry: &orchestrator.ModelRetry{Attempt: i + 2, Reason: reason}}, nil) {
				return
			}
		}
	}
}

// order is the models to try: those whose circuit is closed first, in
// their order, then the open ones (when every model failed recently, they
// are tried all the same rather than refusing the call).
func (f *Failover) order() []Named {
	var closed, open []Named
	for _, m := range f.models {
		if f.breaker.isOpen(m.Name) {
			open = append(open, m)
		} else {
			closed = append(closed, m)
		}
	}
	return append(closed, open...)
}
