package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/wunder/wunder/internal/sse"
)

// Ask runs a task with POST /wunder and yields its events as the server
// streams them (SSE), ending with the final event. The run keeps going if
// the caller stops early; follow it again with [Client.Follow].
func (c *Client) Ask(ctx context.Context, req RunRequest) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stream := true
		req.Stream = &stream
		body, err := json.Marshal(req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/wunder", bytes.NewReader(body))
		if err != nil {
			yield(Event{}, err)
			return
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "text/event-stream")
		c.auth(hr.Header)
		resp, err := c.http.Do(hr)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			yield(Event{}, problemOf(resp))
			return
		}
		for sev, err := range sse.Read(resp.Body) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			var ev Event
			if err := json.Unmarshal(sev.Data, &ev); err != nil {
				yield(Event{}, fmt.Errorf("bad event %q: %w", sev.Data, err))
				return
			}
			if !yield(ev, nil) || ev.Type == "final" {
				return
			}
		}
		yield(Event{}, fmt.Errorf("stream ended before the final event"))
	}
}
