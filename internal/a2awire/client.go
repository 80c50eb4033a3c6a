package a2awire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// Client calls one A2A agent over JSON-RPC in one protocol version. It is
// safe for concurrent use.
type Client struct {
	HTTP    *http.Client
	URL     string
	Version Version
	// Header is added to every request (auth of the peer).
	Header http.Header
	ids    atomic.Int64
}

// SendRequest is what [Client.Send] and [Client.Stream] send.
type SendRequest struct {
	Message Message
	// Blocking waits for the task to end (non-streaming send only).
	Blocking bool
}

func (c *Client) sendParams(r *SendRequest) map[string]any {
	cfg := map[string]any{"acceptedOutputModes": []string{"text/plain", "application/json"}}
	if c.Version == V10 {
		cfg["returnImmediately"] = !r.Blocking
	} else {
		cfg["blocking"] = r.Blocking
	}
	return map[string]any{"message": encodeMessage(c.Version, &r.Message), "configuration": cfg}
}

// Send sends a message and returns the task (or message) the peer answers.
func (c *Client) Send(ctx context.Context, r *SendRequest) (Event, error) {
	method := MethodsOf(c.Version).Send
	raw, err := c.Call(ctx, method, c.sendParams(r))
	if err != nil {
		return Event{}, err
	}
	ev, err := DecodeEvent(raw)
	if err != nil {
		return Event{}, errorf(ErrInvalidAgentResponse, "a2a %s: %w", method, err)
	}
	return ev, nil
}

// Stream sends a message and yields the peer's stream events.
func (c *Client) Stream(ctx context.Context, r *SendRequest) iter.Seq2[Event, error] {
	return c.stream(ctx, MethodsOf(c.Version).Stream, c.sendParams(r))
}

// Subscribe follows an existing task's stream.
func (c *Client) Subscribe(ctx context.Context, taskID string) iter.Seq2[Event, error] {
	return c.stream(ctx, MethodsOf(c.Version).Subscribe, map[string]any{"id": taskID})
}

// GetTask returns a task.
func (c *Client) GetTask(ctx context.Context, taskID string) (*Task, error) {
	return c.task(ctx, MethodsOf(c.Version).Get, taskID)
}

// CancelTask asks the peer to cancel a task.
func (c *Client) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	return c.task(ctx, MethodsOf(c.Version).Cancel, taskID)
}

// task calls a method that answers a Task.
func (c *Client) task(ctx context.Context, method, taskID string) (*Task, error) {
	raw, err := c.Call(ctx, method, map[string]any{"id": taskID})
	if err != nil {
		return nil, err
	}
	t, err := decode[Task](raw)
	if err != nil {
		return nil, errorf(ErrInvalidAgentResponse, "a2a %s: %w", method, err)
	}
	return t, nil
}

func (c *Client) post(ctx context.Context, method string, params any, accept string) (*http.Response, json.RawMessage, error) {
	id := json.RawMessage(strconv.FormatInt(c.ids.Add(1), 10))
	p, err := json.Marshal(params)
	if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(Request{JSONRPC: "2.0", ID: id, Method: method, Params: p})
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set(VersionHeader, string(c.Version))
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: a2a %s: %w", orchestrator.ErrUnavailable, method, err)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		// A refusal in JSON-RPC's shape (the gateway's 401 and 429) says
		// what it is: keep its code and retry hint. Else the status says
		// it when it is one a gateway or proxy answers for any binding
		// (credentials, limits); any other means no agent answered.
		var r Response
		if json.Unmarshal(b, &r) == nil && r.JSONRPC == "2.0" && r.Error != nil {
			return nil, nil, fmt.Errorf("a2a %s: HTTP %d: %w", method, resp.StatusCode, r.Error)
		}
		if e := fromHTTP(resp.StatusCode, resp.Header, b); e.Kind().Transport {
			return nil, nil, fmt.Errorf("a2a %s: HTTP %d: %w", method, resp.StatusCode, e)
		}
		return nil, nil, fmt.Errorf("%w: a2a %s: HTTP %d: %s", orchestrator.ErrUnavailable, method, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return resp, id, nil
}

// Call calls method with params and returns its raw result; an error
// answer is an [*Error] (errors.Is reads its kind). Send, GetTask and the
// others are Call with their method's params and decoded result.
func (c *Client) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	resp, _, err := c.post(ctx, method, params, "application/json")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r Response
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&r); err != nil {
		return nil, errorf(ErrInvalidAgentResponse, "a2a %s: bad response: %w", method, err)
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// stream POSTs a streaming method and parses the SSE answer: each event's
// data is one JSON-RPC response. The stream ends at a terminal or
// interrupted status (0.3: final:true) or when the peer closes it.
func (c *Client) stream(ctx context.Context, method string, params any) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		resp, _, err := c.post(ctx, method, params, "text/event-stream")
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// An immediate JSON-RPC error instead of a stream.
			var r Response
			if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil || r.Error == nil {
				yield(Event{}, errorf(ErrInvalidAgentResponse, "a2a %s: expected an event stream, got %q", method, resp.Header.Get("Content-Type")))
				return
			}
			yield(Event{}, r.Error)
			return
		}
		for sev, err := range sse.Read(resp.Body) {
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					yield(Event{}, fmt.Errorf("%w: a2a stream: %w", orchestrator.ErrUnavailable, err))
				}
				return
			}
			var r Response
			if err := json.Unmarshal(sev.Data, &r); err != nil {
				yield(Event{}, errorf(ErrInvalidAgentResponse, "a2a %s: bad stream item: %w", method, err))
				return
			}
			if r.Error != nil {
				yield(Event{}, r.Error)
				return
			}
			ev, err := DecodeEvent(r.Result)
			if err != nil {
				yield(Event{}, errorf(ErrInvalidAgentResponse, "a2a %s: %w", method, err))
				return
			}
			if !yield(ev, nil) {
				return
			}
			if ev.Status != nil && (ev.Status.Final || ev.Status.Status.State.Terminal() || ev.Status.Status.State.Interrupted()) {
				return
			}
			if ev.Message != nil {
				return
			}
		}
	}
}
