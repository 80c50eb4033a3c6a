package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	backoff "gopkg.in/cenkalti/backoff.v1"

	"github.com/wunder/wunder/internal/sse"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	// MaxReconnect bounds the time spent reconnecting after a dropped
	// stream. Default 2 minutes.
	MaxReconnect time.Duration
	// OnReconnect is called before each reconnection attempt.
	OnReconnect func(err error, wait time.Duration)
}

// errStop ends a follow: the final event came, or the caller stopped.
var errStop = errors.New("follow stopped")

// Follow streams a run's events after seq `after` until its final event,
// reconnecting with Last-Event-ID (the last seq it yielded) when the
// connection drops. Each event is yielded once, in seq order, whatever
// the server sends again after a reconnect. An error event the server
// writes into the stream (its log failed) is yielded with an error; if the
// caller goes on, Follow resumes after the stream ends.
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
		u := c.baseURL + "/wunder/runs/" + url.PathEscape(runID) + "/events?user_id=" + url.QueryEscape(userID)
		bo := backoff.NewExponentialBackOff()
		bo.InitialInterval = 100 * time.Millisecond
		bo.MaxInterval = 5 * time.Second
		bo.MaxElapsedTime = o.MaxReconnect
		last := after
		var end error // why the follow ended, when not for want of a connection
		connect := func() error {
			connected, err := c.followOnce(ctx, u, &last, yield)
			var ce *Error
			switch {
			case err == errStop:
				end = err
			case ctx.Err() != nil:
				end = ctx.Err()
			case err == nil:
				end = fmt.Errorf("event stream closed before the final event (last seq %d)", last)
			case errors.As(err, &ce) && ce.Status < 500 && ce.Status != http.StatusTooManyRequests:
				end = err
			case connected:
				bo.Reset() // MaxReconnect counts from the drop
				return err
			default:
				return err
			}
			return backoff.Permanent(end)
		}
		var notify backoff.Notify
		if o.OnReconnect != nil {
			notify = o.OnReconnect
		}
		err := backoff.RetryNotify(connect, backoff.WithContext(bo, ctx), notify)
		switch {
		case end == errStop:
		case end != nil:
			yield(Event{}, end)
		case ctx.Err() != nil:
			yield(Event{}, ctx.Err())
		default:
			yield(Event{}, fmt.Errorf("event stream lost: %w", err))
		}
	}
}

// followOnce reads the run's events after *last on one connection. It
// returns errStop when the final event came or yield said stop, nil when
// the server ended the stream, the server's error event when one ended it
// (it asks for a resume), and else why the connection failed; connected
// says whether the stream had begun.
func (c *Client) followOnce(ctx context.Context, u string, last *int64, yield func(Event, error) bool) (connected bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, backoff.Permanent(err)
	}
	req.Header.Set("Accept", sse.ContentType)
	req.Header.Set("Cache-Control", "no-cache")
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	c.auth(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, problemOf(resp)
	}
	var streamErr error
	for sev, err := range sse.Read(resp.Body) {
		if err != nil {
			return true, err
		}
		if sev.Type == "error" && sev.ID == "" {
			// An error the server wrote into the stream: no id, as it is
			// no event of the run's (a run's error event has its seq).
			streamErr = fmt.Errorf("stream error: %s", sev.Data)
			if !yield(Event{Type: "error", Data: sev.Data}, streamErr) {
				return true, errStop
			}
			continue
		}
		var ev Event
		if err := json.Unmarshal(sev.Data, &ev); err != nil {
			yield(Event{}, fmt.Errorf("bad event %q: %w", sev.Data, err))
			return true, errStop
		}
		if ev.Seq <= *last {
			continue // sent again after a reconnect
		}
		*last = ev.Seq
		if !yield(ev, nil) || ev.Type == "final" {
			return true, errStop
		}
	}
	return true, streamErr
}
