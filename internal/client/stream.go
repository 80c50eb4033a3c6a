package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
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
		for data, err := range sseData(resp) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			var ev Event
			if err := json.Unmarshal(data, &ev); err != nil {
				yield(Event{}, fmt.Errorf("bad event %q: %w", data, err))
				return
			}
			if !yield(ev, nil) || ev.Type == "final" {
				return
			}
		}
		yield(Event{}, fmt.Errorf("stream ended before the final event"))
	}
}

// sseData yields the data of each event of an SSE body.
func sseData(resp *http.Response) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var data bytes.Buffer
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data.Len() > 0 {
					if !yield(bytes.Clone(data.Bytes()), nil) {
						return
					}
					data.Reset()
				}
			case strings.HasPrefix(line, "data:"):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		if err := sc.Err(); err != nil {
			yield(nil, err)
		}
	}
}
