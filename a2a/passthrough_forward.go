package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// Forwarding. A call decoded and admitted goes to the peer's interface of
// its binding and version, with the peer's credentials (Peer.Header),
// A2A-Version, the caller's A2A-Extensions and the hop count; its answer
// comes back as the peer gave it (ids, results, errors in the peer's
// shapes), after wunder claimed the ids it names. Bounds: the request body
// (Options.MaxBodyBytes), a unary answer (maxAnswer) and its time
// (Peer.Timeout), a stream's events (sse.MaxEvent each) and the wait for
// the next (Peer.Timeout). Failures to reach the peer, a peer refusing
// wunder's credentials and an answer that is no A2A answer are errors of
// wunder's, in the binding's shape: unavailable, unavailable, invalid
// agent response.

// maxAnswer bounds a unary answer of a peer.
const maxAnswer = 16 << 20

// exchange sends the call to the peer and answers with what it says.
func (p *passThrough) exchange(rw http.ResponseWriter, pc *passCall, method, target string, body []byte, hops int, stream bool) {
	timeout := pc.peer.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithCancel(pc.r.Context())
	defer cancel()
	// A unary call has timeout in all; a stream has it between two events.
	idle := time.AfterFunc(timeout, cancel)
	defer idle.Stop()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	up, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		p.failed(rw, pc, fmt.Errorf("%w: the URL of agent %s: %w", orchestrator.ErrUnavailable, pc.peer.Name, err))
		return
	}
	p.headers(up, pc, hops, body != nil, stream)
	resp, err := pc.peer.HTTP.Do(up)
	if err != nil {
		p.forget(pc.peer.Name)
		p.failed(rw, pc, p.unreachable(ctx, pc, err, timeout))
		return
	}
	defer resp.Body.Close()
	copyAnswerHeaders(rw.Header(), resp.Header)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		p.failed(rw, pc, refusedCredentials(pc, resp.StatusCode))
		return
	}
	if stream && resp.StatusCode == http.StatusOK && isEventStream(resp.Header) {
		p.relay(ctx, rw, pc, resp.Body, func() { idle.Reset(timeout) })
		return
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		p.failed(rw, pc, p.unreachable(ctx, pc, err, timeout))
		return
	case len(b) > maxAnswer:
		p.failed(rw, pc, errKind(w.ErrInvalidAgentResponse, "agent %s answered with more than %d bytes", pc.peer.Name, maxAnswer))
		return
	}
	p.answer(rw, pc, resp.StatusCode, b)
}

// refusedCredentials is the error of a peer that refused wunder's
// credentials for it (HTTP 401 or 403, or the JSON-RPC error of either):
// wunder's configuration, not the caller's credentials, so it is not
// passed on as the caller's refusal.
func refusedCredentials(pc *passCall, status int) error {
	return errKind(orchestrator.ErrUnavailable, "agent %s refused wunder's credentials for it (HTTP %d): see the headers and bearer_token of its a2a.services entry", pc.peer.Name, status)
}

// headers sets the headers of a request to the peer.
func (p *passThrough) headers(up *http.Request, pc *passCall, hops int, body, stream bool) {
	for k, vs := range pc.peer.Header {
		up.Header[k] = slices.Clone(vs)
	}
	if body {
		up.Header.Set("Content-Type", "application/json")
	}
	if stream {
		up.Header.Set("Accept", "text/event-stream, application/json")
	} else {
		up.Header.Set("Accept", "application/json")
	}
	switch hv := pc.r.Header.Get(w.VersionHeader); {
	case pc.v == w.V10:
		up.Header.Set(w.VersionHeader, string(w.V10))
	case hv != "":
		up.Header.Set(w.VersionHeader, hv)
	}
	for _, k := range []string{"A2A-Extensions", "Accept-Language"} {
		if vs := pc.r.Header.Values(k); len(vs) > 0 {
			up.Header[k] = slices.Clone(vs)
		}
	}
	up.Header.Set(hopsHeader, strconv.Itoa(hops+1))
}

// unreachable is the error of a peer that did not answer.
func (p *passThrough) unreachable(ctx context.Context, pc *passCall, err error, timeout time.Duration) error {
	if pc.r.Context().Err() != nil {
		return fmt.Errorf("%w: the caller went away", orchestrator.ErrCanceled)
	}
	if ctx.Err() != nil {
		return errKind(orchestrator.ErrUnavailable, "agent %s did not answer within %s", pc.peer.Name, timeout)
	}
	return errKind(orchestrator.ErrUnavailable, "agent %s cannot be reached: %v", pc.peer.Name, err)
}

// answer writes a unary answer of the peer: its result once its ids are
// claimed (a listing filtered), or its error as it gave it.
func (p *passThrough) answer(rw http.ResponseWriter, pc *passCall, status int, b []byte) {
	ctx := pc.r.Context()
	var result json.RawMessage
	if pc.rest {
		if !json.Valid(b) {
			p.failed(rw, pc, errKind(w.ErrInvalidAgentResponse, "agent %s answered HTTP %d with no JSON", pc.peer.Name, status))
			return
		}
		if status/100 != 2 {
			p.audit(pc, orchestrator.OutcomeError, "HTTP "+strconv.Itoa(status))
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(status)
			_, _ = rw.Write(b)
			return
		}
		result = b
	} else {
		var env w.Response
		if json.Unmarshal(b, &env) != nil || (env.Result == nil && env.Error == nil) {
			p.failed(rw, pc, errKind(w.ErrInvalidAgentResponse, "agent %s answered HTTP %d with no JSON-RPC response", pc.peer.Name, status))
			return
		}
		if env.Error != nil {
			if k := env.Error.Kind().Err; k == orchestrator.ErrUnauthenticated || k == orchestrator.ErrPermissionDenied {
				// Not the caller's credentials: wunder's, for the peer.
				p.failed(rw, pc, refusedCredentials(pc, status))
				return
			}
			p.audit(pc, orchestrator.OutcomeError, fmt.Sprintf("%d %s", env.Error.Code, env.Error.Message))
			pc.fail(rw, env.Error)
			return
		}
		result = env.Result
	}
	var err error
	switch ms := w.MethodsOf(pc.v); pc.m.Method {
	case ms.List:
		result, err = p.filterList(ctx, pc, result)
	default:
		err = p.newClaims(pc).claim(ctx, result)
	}
	if err == nil && pc.grpc != nil {
		err = p.deliver(pc, result)
	}
	if err != nil {
		p.failed(rw, pc, err)
		return
	}
	p.audit(pc, orchestrator.OutcomeAllowed, "")
	switch {
	case pc.grpc != nil: // delivered
	case pc.rest:
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		_, _ = rw.Write(result)
	default:
		writeJSON(rw, w.Response{JSONRPC: "2.0", ID: pc.m.ID, Result: result})
	}
}

// relay passes the peer's stream on, event by event, claiming the ids
// each names before the caller sees it. beat is called at each event (the
// wait for the next starts again).
func (p *passThrough) relay(ctx context.Context, rw http.ResponseWriter, pc *passCall, body io.Reader, beat func()) {
	rd := sse.NewReader(body, sse.MaxEvent)
	out, stop := p.streamTo(rw, pc)
	defer stop()
	cl := p.newClaims(pc)
	outcome, reason := orchestrator.OutcomeAllowed, ""
	for {
		ev, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				err = p.unreachable(ctx, pc, err, pc.peer.Timeout)
				outcome, reason = orchestrator.OutcomeError, err.Error()
				out.cut(p.h.toError(ctx, pc.v, err))
			}
			break
		}
		beat()
		item, failure := streamItem(pc, ev.Data)
		if failure != nil {
			outcome, reason = orchestrator.OutcomeError, "the stream ended in an error"
		}
		if item != nil {
			if err := cl.claim(ctx, item); err != nil {
				out.fail(p.h.toError(ctx, pc.v, err))
				outcome, reason = orchestrator.OutcomeError, err.Error()
				break
			}
		}
		if err := out.send(ev, item, failure); err != nil {
			if errors.Is(err, errNoFit) {
				err = fmt.Errorf("%w: agent %s sent a stream item that is no gRPC StreamResponse: %w", w.ErrInvalidAgentResponse, pc.peer.Name, err)
				out.fail(p.h.toError(ctx, pc.v, err))
				outcome, reason = orchestrator.OutcomeError, err.Error()
			} else if failure == nil {
				outcome, reason = orchestrator.OutcomeError, "the caller went away"
			}
			break
		}
	}
	p.audit(pc, outcome, reason)
}

// streamOut is where relay passes a peer's stream: an SSE response, or
// the gRPC binding's stream (call.sink).
type streamOut struct {
	// send passes on one event of the peer's: its item, or its error
	// (failure: the stream ends).
	send func(ev sse.Event, item json.RawMessage, failure *w.Error) error
	// fail ends the stream with wunder's error.
	fail func(e *w.Error)
	// cut ends a stream the peer broke off: an SSE response just ends, a
	// gRPC stream with the error.
	cut func(e *w.Error)
}

// streamTo is the stream out of relay for pc, and stop, which ends what
// it runs (the heartbeats of an SSE response).
func (p *passThrough) streamTo(rw http.ResponseWriter, pc *passCall) (streamOut, func()) {
	if pc.sink != nil {
		fail := func(e *w.Error) { _ = pc.sink(nil, e) }
		return streamOut{
			send: func(_ sse.Event, item json.RawMessage, failure *w.Error) error {
				if failure != nil {
					return pc.sink(nil, failure)
				}
				return pc.sink(item, nil)
			},
			fail: fail, cut: fail,
		}, func() {}
	}
	sw := sse.NewWriter(rw)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // heartbeats while the peer is quiet; ended before relay returns
		defer close(done)
		t := time.NewTicker(p.h.opts.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = sw.Comment("keep-alive")
			}
		}
	}()
	return streamOut{
		send: func(ev sse.Event, _ json.RawMessage, _ *w.Error) error {
			return sw.Send(sse.Event{ID: ev.ID, Type: ev.Type, Data: ev.Data})
		},
		fail: func(e *w.Error) { _ = sw.Send(sse.Event{Data: pc.item(nil, e)}) },
		cut:  func(*w.Error) {},
	}, func() { close(stop); <-done }
}

// streamItem reads one event of a peer's stream: the item it carries
// (a JSON-RPC result, or a bare StreamResponse), or its failure: the
// JSON-RPC error (HTTP+JSON: a google.rpc.Status); data that is no
// JSON-RPC response is an invalid agent response.
func streamItem(pc *passCall, data []byte) (item json.RawMessage, failure *w.Error) {
	if pc.rest {
		var st struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &st) == nil && st.Error != nil {
			// Passed on as it came: relay reads only that it failed.
			return nil, w.NewError(w.V10, w.CodeInternal, "the stream ended in an error")
		}
		return data, nil
	}
	var env w.Response
	if json.Unmarshal(data, &env) != nil {
		return nil, w.NewError(pc.v, w.CodeInvalidAgentResponse, "agent "+pc.peer.Name+" sent a stream event that is no JSON-RPC response")
	}
	if env.Error != nil {
		return nil, env.Error
	}
	return env.Result, nil
}

// copyAnswerHeaders passes on the headers of a peer's answer a caller
// reads: when to try again, and the extensions the peer activated.
func copyAnswerHeaders(dst, src http.Header) {
	for _, k := range []string{"Retry-After", "A2A-Extensions"} {
		if vs := src.Values(k); len(vs) > 0 {
			dst[k] = slices.Clone(vs)
		}
	}
}

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == sse.ContentType
}
