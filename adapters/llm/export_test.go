package llm

import (
	"context"
	"io"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// DecodeStream runs the response reader over body as a streamed answer and
// returns the deltas it yielded and the response or the failure.
func DecodeStream(body io.Reader) ([]orchestrator.ModelEvent, *orchestrator.ModelResponse, error) {
	var events []orchestrator.ModelEvent
	resp, f, _ := readResponse(context.Background(), body, true, func(ev orchestrator.ModelEvent, _ error) bool {
		events = append(events, ev)
		return true
	})
	if f != nil {
		return events, nil, f.err
	}
	return events, resp, nil
}

// ParseRetryAfter exposes the Retry-After parser.
var ParseRetryAfter = retryAfter

// Backoff exposes the backoff of c.
func (c *Client) Backoff(n int) time.Duration { return c.backoff(n) }

// SetBreakerClock replaces the clock of b.
func SetBreakerClock(b *Breaker, now func() time.Time) { b.now = now }
