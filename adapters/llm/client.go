package llm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// Size limits of what the client reads.
const (
	maxErrorBody    = 64 << 10
	maxResponseBody = 32 << 20
)

var errTruncated = errors.New("stream ended before [DONE] or a finish_reason")

// Client is an [orchestrator.Model] that speaks OpenAI chat completions over
// HTTP. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint string
	// shownEndpoint is endpoint without a password, for errors.
	shownEndpoint string
	http          *http.Client
	// noStreamOptions is set once the server rejected stream_options; from
	// then on streamed requests go without it.
	noStreamOptions atomic.Bool
}

var _ orchestrator.Model = (*Client)(nil)

// New returns a client for cfg, after [Config.WithDefaults] and
// [Config.Validate]. The scripted provider has no HTTP client: use
// [NewModel] or [NewScripted] for it.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Provider == ProviderScripted {
		return nil, cfg.invalid("provider", "scripted has no HTTP client; use NewModel or NewScripted")
	}
	// Copies, so the caller's later changes do not reach the client.
	usage := *cfg.StreamIncludeUsage
	cfg.StreamIncludeUsage = &usage
	if cfg.Temperature != nil {
		t := *cfg.Temperature
		cfg.Temperature = &t
	}
	cfg.Headers = maps.Clone(cfg.Headers)
	hc := cfg.HTTPClient
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		hc = &http.Client{Transport: t}
	}
	endpoint := cfg.BaseURL + "/chat/completions"
	shown := endpoint
	if u, err := url.Parse(endpoint); err == nil {
		shown = u.Redacted()
	}
	return &Client{cfg: cfg, endpoint: endpoint, shownEndpoint: shown, http: hc}, nil
}

// NewModel returns the model cfg describes: a [*Client], or for the scripted
// provider a [*Scripted] playing cfg.Script ([EchoScript] when it is empty).
func NewModel(cfg Config) (orchestrator.Model, error) {
	cfg = cfg.WithDefaults()
	if cfg.Provider != ProviderScripted {
		return New(cfg)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Script == "" {
		return NewScripted(EchoScript()), nil
	}
	s, err := LoadScript(cfg.Script)
	if err != nil {
		return nil, fmt.Errorf("%w: llm model %q: script: %w", orchestrator.ErrInvalidArgument, cfg.Name, err)
	}
	return NewScripted(s), nil
}

// Generate implements [orchestrator.Model]. The request is streamed when
// req.Stream or Config.Stream is set. Transient failures are retried from
// scratch, each retry announced by an event with Retry set; see the package
// doc for what is retried.
func (c *Client) Generate(ctx context.Context, req *orchestrator.ModelRequest) iter.Seq2[orchestrator.ModelEvent, error] {
	return func(yield func(orchestrator.ModelEvent, error) bool) {
		if req == nil {
			yield(orchestrator.ModelEvent{}, fmt.Errorf("%w: llm %q: nil request", orchestrator.ErrInvalidArgument, c.cfg.Name))
			return
		}
		stream := req.Stream || c.cfg.Stream
		includeUsage := stream && *c.cfg.StreamIncludeUsage && !c.noStreamOptions.Load()
		body, err := c.buildRequest(req, stream, includeUsage)
		if err != nil {
			yield(orchestrator.ModelEvent{}, err)
			return
		}
		for attempt := 1; ; {
			resp, f, ok := c.attempt(ctx, body, stream, yield)
			switch {
			case !ok:
				return
			case f == nil:
				yield(orchestrator.ModelEvent{Response: resp}, nil)
				return
			case ctx.Err() != nil:
				yield(orchestrator.ModelEvent{}, c.canceled(ctx))
				return
			case f.usageRejected && includeUsage:
				// Not a transient failure: ask again at once without the
				// option, and never send it to this server again.
				c.noStreamOptions.Store(true)
				includeUsage = false
				if body, err = c.buildRequest(req, stream, false); err != nil {
					yield(orchestrator.ModelEvent{}, err)
					return
				}
				continue
			case !f.retry || attempt >= c.cfg.Retry.MaxAttempts || f.retryAfter > maxRetryAfter:
				yield(orchestrator.ModelEvent{}, c.finalError(f, attempt))
				return
			}
			delay := f.retryAfter
			if delay == 0 {
				delay = c.backoff(attempt)
			}
			attempt++
			retry := &orchestrator.ModelRetry{Attempt: attempt, Delay: delay, Reason: f.err.Error()}
			if !yield(orchestrator.ModelEvent{Retry: retry}, nil) {
				return
			}
			if sleep(ctx, delay) != nil {
				yield(orchestrator.ModelEvent{}, c.canceled(ctx))
				return
			}
		}
	}
}

// setHeaders sets what every request to the provider carries: the user
// agent, the API key, and the configured headers (after Authorization, so
// they can replace it).
func (c Config) setHeaders(h http.Header) {
	h.Set("User-Agent", "wunder")
	if c.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.APIKey)
	}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
}

// attempt sends the request once and reads the answer, yielding deltas when
// streaming. It returns the response or why there is none; ok is false when
// the consumer stopped the iteration.
func (c *Client) attempt(ctx context.Context, body []byte, stream bool, yield func(orchestrator.ModelEvent, error) bool) (resp *orchestrator.ModelResponse, f *failure, ok bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.AfterFunc(c.cfg.Timeout, func() { cancel(errTimeout) })
	defer deadline.Stop()

	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &failure{err: err}, true
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	c.cfg.setHeaders(hreq.Header)

	// For streams the idle timer also bounds the wait for the headers.
	var idle *time.Timer
	if stream {
		idle = time.AfterFunc(c.cfg.IdleTimeout, func() { cancel(errIdle) })
		defer idle.Stop()
	}
	hresp, err := c.http.Do(hreq)
	if idle != nil {
		idle.Stop()
	}
	if err != nil {
		return nil, transportFailure(actx, "send request", err), true
	}
	defer hresp.Body.Close()
	// Cancellation closes the body at once, whatever the transport does.
	stop := context.AfterFunc(actx, func() { hresp.Body.Close() })
	defer stop()

	var r io.Reader = hresp.Body
	if idle != nil {
		r = &idleReader{r: r, timer: idle, d: c.cfg.IdleTimeout}
	}
	if hresp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
		return nil, statusFailure(hresp, b), true
	}
	return readResponse(actx, r, stream, yield)
}

// readResponse reads a 2xx body: an event stream, or a JSON completion
// (which servers also send for stream requests they cannot stream). Deltas
// are yielded only when stream is set.
// readers are the buffers responses are read through, reused: one of
// 16 KiB per model call was a sixth of what a run allocated. Nothing read
// through one outlives readResponse (the body is copied or decoded).
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

func readResponse(actx context.Context, r io.Reader, stream bool, yield func(orchestrator.ModelEvent, error) bool) (*orchestrator.ModelResponse, *failure, bool) {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil) // the body is not kept alive by the pool
		readers.Put(br)
	}()
	first, err := firstByte(br)
	switch {
	case errors.Is(err, io.EOF):
		return nil, protocolFailure(errors.New("empty response body")), true
	case err != nil:
		return nil, transportFailure(actx, "read response", err), true
	case first == '{':
		b, err := io.ReadAll(io.LimitReader(br, maxResponseBody))
		if err != nil {
			return nil, transportFailure(actx, "read response", err), true
		}
		var cr chatResponse
		if err := fastjson.Unmarshal(b, &cr); err != nil {
			return nil, protocolFailure(fmt.Errorf("malformed response: %w: %s", err, clip(string(b)))), true
		}
		resp, err := cr.response()
		if err != nil {
			return nil, protocolFailure(err), true
		}
		return resp, nil, true
	}

	// What is already buffered, to quote if this is not an event stream.
	head, _ := br.Peek(min(br.Buffered(), maxExcerpt))
	head = bytes.Clone(head)
	dec := sse.NewReader(br, maxEvent)
	var acc accumulator
	events := 0
	for {
		ev, err := dec.Next()
		if actx.Err() != nil {
			// Cancelled while data was buffered: stop at once.
			return nil, transportFailure(actx, "read stream", actx.Err()), true
		}
		if errors.Is(err, sse.ErrIncomplete) {
			if string(ev.Data) == "[DONE]" {
				// Sloppy servers end with it and no blank line.
				return acc.response(), nil, true
			}
			err = io.EOF // dropped, as the standard says: was the answer complete?
		}
		switch {
		case errors.Is(err, io.EOF) && events == 0:
			return nil, protocolFailure(fmt.Errorf("response has no data events: %s", excerpt(head))), true
		case errors.Is(err, io.EOF):
			if !acc.complete() {
				return nil, protocolFailure(errTruncated), true
			}
			return acc.response(), nil, true
		case errors.Is(err, bufio.ErrTooLong):
			return nil, protocolFailure(fmt.Errorf("%w: %w", errBadChunk, err)), true
		case err != nil:
			return nil, transportFailure(actx, "read stream", err), true
		}
		events++
		d, rd, err := decodeEvent(ev, &acc)
		switch {
		case errors.Is(err, errDone):
			return acc.response(), nil, true
		case err != nil:
			return nil, protocolFailure(err), true
		case stream && (d != "" || rd != ""):
			if !yield(orchestrator.ModelEvent{Delta: d, ReasoningDelta: rd}, nil) {
				return nil, nil, false
			}
		}
	}
}

var errDone = errors.New("[DONE]")

// decodeEvent folds one server-sent event into acc and returns its deltas.
// It decodes with segmentio's encoding/json, as readResponse decodes a
// whole response (see the package doc).
// It returns errDone for the end marker, and an error for error events and
// chunks that are not JSON.
func decodeEvent(ev sse.Event, acc *accumulator) (delta, reasoning string, err error) {
	if string(ev.Data) == "[DONE]" {
		return "", "", errDone
	}
	if ev.Type == "error" {
		return "", "", fmt.Errorf("error event: %s", excerpt(ev.Data))
	}
	var ch chatChunk
	if err := fastjson.Unmarshal(ev.Data, &ch); err != nil {
		return "", "", fmt.Errorf("%w: %w: %s", errBadChunk, err, clip(string(ev.Data)))
	}
	if ch.Error != nil {
		return "", "", fmt.Errorf("error event: %s", ch.Error.text())
	}
	delta, reasoning = acc.add(&ch)
	return delta, reasoning, nil
}

// firstByte returns the first byte of br that is not white space, without
// consuming it.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b, br.UnreadByte()
	}
}

// idleReader arms timer for d around every Read, so a server that goes
// silent for d cancels the attempt. Time the consumer spends between reads
// does not count.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	ir.timer.Reset(ir.d)
	n, err := ir.r.Read(p)
	ir.timer.Stop()
	return n, err
}
