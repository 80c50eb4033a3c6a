package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	sse "github.com/r3labs/sse/v2"
	backoff "gopkg.in/cenkalti/backoff.v1"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	// MaxReconnect bounds the time spent reconnecting after a dropped
	// stream. Default 2 minutes.
	MaxReconnect time.Duration
	// OnReconnect is called before each reconnection attempt.
	OnReconnect func(err error, wait time.Duration)
}

// Follow streams a run's events after seq `after` until its final event,
// reconnecting with Last-Event-ID when the connection drops. Each event is
// yielded once, in seq order, whatever the transport re-sends (r3labs/sse
// keeps the last id across reconnects and may repeat an event).
func (c *Client) Follow(ctx context.Context, userID, runID string, after int64, opts *FollowOptions) iter.Seq2[Event, error] {
	var o FollowOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxReconnect <= 0 {
		o.MaxReconnect = 2 * time.Minute
	}
	return func(yield func(Event, error) bool) {
		// Check the run first: an unknown run is a clear error, not a
		// reconnect loop.
		if _, err := c.GetRun(ctx, userID, runID); err != nil {
			yield(Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		u := c.baseURL + "/wunder/runs/" + url.PathEscape(runID) + "/events?user_id=" + url.QueryEscape(userID)
		sc := sse.NewClient(u)
		sc.Connection = c.http
		if c.apiKey != "" {
			sc.Headers["X-API-Key"] = c.apiKey
		}
		if c.language != "" {
			sc.Headers["Accept-Language"] = c.language
		}
		if after > 0 {
			sc.LastEventID.Store([]byte(strconv.FormatInt(after, 10)))
		}
		var permanent error
		sc.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err := problemOf(resp)
			resp.Body.Close()
			if resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
				permanent = err
				cancel() // stops the reconnect loop
			}
			return err
		}
		bo := backoff.NewExponentialBackOff()
		bo.InitialInterval = 100 * time.Millisecond
		bo.MaxInterval = 5 * time.Second
		bo.MaxElapsedTime = o.MaxReconnect
		sc.ReconnectStrategy = backoff.WithContext(bo, ctx)
		if o.OnReconnect != nil {
			sc.ReconnectNotify = o.OnReconnect
		}

		items := make(chan Event)
		done := make(chan error, 1)
		// r3labs records the id: of every event it parses, including the
		// partial one a cut connection leaves behind, and would resume after
		// it. The handler owns Last-Event-ID instead: only an event whose
		// data parsed whole moves it.
		good := after
		go func() {
			done <- sc.SubscribeRawWithContext(ctx, func(msg *sse.Event) {
				var ev Event
				err := json.Unmarshal(msg.Data, &ev)
				if err == nil && ev.Seq > good {
					good = ev.Seq
				}
				sc.LastEventID.Store([]byte(strconv.FormatInt(good, 10)))
				if err != nil || len(msg.Data) == 0 {
					if string(msg.Event) != "error" {
						return // a torn event; it comes again after the resume
					}
					ev = Event{Type: "error", Data: append(json.RawMessage(nil), msg.Data...)}
				}
				select {
				case items <- ev:
				case <-ctx.Done():
				}
			})
		}()
		subscribed := true
		defer func() {
			cancel()
			if subscribed {
				<-done
			}
		}()
		last := after
		for {
			select {
			case ev := <-items:
				if ev.Seq == 0 && ev.Type == "error" {
					// An error the server wrote into the stream.
					if !yield(ev, fmt.Errorf("stream error: %s", ev.Data)) {
						return
					}
					continue
				}
				if ev.Seq <= last {
					continue // a repeat after reconnecting
				}
				last = ev.Seq
				if !yield(ev, nil) {
					return
				}
				if ev.Type == "final" {
					return
				}
			case err := <-done:
				subscribed = false
				// The subscription ended without a final event: the server
				// closed a stream it had finished, or reconnecting gave up.
				switch {
				case permanent != nil:
					yield(Event{}, permanent)
				case ctx.Err() != nil && err == nil:
					yield(Event{}, ctx.Err())
				case err != nil:
					yield(Event{}, fmt.Errorf("event stream lost: %w", err))
				default:
					yield(Event{}, fmt.Errorf("event stream closed before the final event (last seq %d)", last))
				}
				return
			}
		}
	}
}
