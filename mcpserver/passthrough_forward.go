package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Forwarding: a session's requests, notifications and answers go upstream
// as the downstream sent them, ids and all (wunder sends nothing of its own
// on the upstream session, so no id can collide). A request lives as long
// as the downstream's HTTP request for it, its notifications/cancelled, or
// the session, whichever ends first.

// link is the upstream side of a session: one upstream session.
type link interface {
	// call sends the request msg (whose id is id) and returns the messages
	// of its answer in order, the response to id among them, last.
	// Ranging over them to the end, or stopping early, releases the
	// exchange.
	call(ctx context.Context, out outHeader, msg []byte, id json.RawMessage) (iter.Seq[[]byte], error)
	// send sends a notification, or the answer to a request of the
	// upstream.
	send(ctx context.Context, out outHeader, msg []byte) error
	// listen returns the messages of the upstream's standalone stream,
	// those that belong to no request.
	listen(ctx context.Context, out outHeader) (iter.Seq[[]byte], error)
	// close ends the upstream session.
	close()
}

// outHeader is what a message upstream carries of HTTP headers besides
// the link's own: the protocol version, and the downstream's standard
// headers of 2026-07-28 (Mcp-Method, Mcp-Name, Mcp-Param-*), which the
// upstream checks against the body, as the downstream sent them.
type outHeader struct {
	version string      // Mcp-Protocol-Version; "" for none
	mcp     http.Header // nil for none
}

var errGone = errors.New("the upstream session ended")

// rpcAnswer is an upstream's JSON-RPC answer that came with an HTTP status
// other than 200, as 2026-07-28 servers answer errors (404 for a method
// they do not have, 400 for bad params): relayed with its status.
type rpcAnswer struct {
	status int
	msg    []byte
}

func (e *rpcAnswer) Error() string { return "answered HTTP " + strconv.Itoa(e.status) }

// statusError is an upstream's HTTP status other than the one expected.
type statusError int

func (e statusError) Error() string { return "answered HTTP " + strconv.Itoa(int(e)) }

// notifyTimeout bounds forwarding a message that expects no answer.
const notifyTimeout = 30 * time.Second

// message is a JSON-RPC message as the pass-through reads it: the
// envelope; params, results and errors stay raw.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

const (
	kindInvalid = iota
	kindRequest
	kindNotification
	kindResponse
)

func (m *message) kind() int {
	switch {
	case m.Method != "" && len(m.ID) > 0:
		if !idLike(m.ID) || m.Result != nil || m.Error != nil {
			return kindInvalid
		}
		return kindRequest
	case m.Method != "":
		return kindNotification
	case len(m.ID) > 0 && (m.Result == nil) != (m.Error == nil):
		return kindResponse
	}
	return kindInvalid
}

// readMessage reads one JSON-RPC 2.0 message. Batches are not forwarded:
// no revision since 2025-06-18 has them, and their answers could not be
// relayed one by one.
func readMessage(b []byte) (*message, error) {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		return nil, errors.New("JSON-RPC batches are not supported by the pass-through")
	}
	m := new(message)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, err
	}
	if m.JSONRPC != "2.0" || m.kind() == kindInvalid {
		return nil, errors.New("not a JSON-RPC 2.0 request, notification or response")
	}
	return m, nil
}

// idLike reports whether id is a JSON-RPC request id: a string or a number.
func idLike(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// serve forwards one POSTed message of the session.
func (s *passSession) serve(w http.ResponseWriter, r *http.Request, m *message, body []byte) {
	out := s.outFor(r)
	if m.kind() != kindRequest {
		// A notification, or the downstream's answer to a request of the
		// upstream (sampling, elicitation, roots, ping).
		s.send(w, r, out, body)
		if m.Method == "notifications/cancelled" {
			s.cancel(m.Params) // after the upstream was told
		}
		return
	}
	final, rpcErr := s.admit(r.Context(), m)
	if rpcErr != nil {
		writeError(w, m.ID, rpcErr)
		return
	}
	up := upReq{body: withTraceContext(r.Context(), body), id: m.ID, out: out}
	if s.exchange(w, r, m, up, final) {
		if s.again(r.Context()) {
			up.out = s.outFor(r)
			if !s.exchange(w, r, m, up, final) {
				return
			}
		}
		final(nil)
		s.gone(w, r)
	}
}

// upReq is a request as it goes upstream: its bytes, its id there and the
// headers it carries.
type upReq struct {
	body []byte
	id   json.RawMessage
	out  outHeader
	// status is the HTTP status of a response relayed as plain JSON; nil
	// for 200.
	status func([]byte) int
}

// exchange forwards the request m (upstream as up) and relays its answer
// to w. final sees the response before it goes out (and may rewrite it);
// it sees nil when no response came. gone says the upstream session is
// gone and nothing was written: the caller answers, or tries anew.
func (s *passSession) exchange(w http.ResponseWriter, r *http.Request, m *message, up upReq, final func([]byte) []byte) (gone bool) {
	ctx, done := s.begin(r.Context(), m.ID)
	defer done()
	msgs, err := s.link.call(ctx, up.out, up.body, up.id)
	answered, streamed := false, false
	if err == nil {
		answered, streamed = relay(w, msgs, up.id, final, up.status)
	}
	if answered {
		return false
	}
	var ra *rpcAnswer
	if errors.As(err, &ra) && responseTo(ra.msg, up.id) {
		msg := final(ra.msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ra.status)
		_, _ = w.Write(msg)
		return false
	}
	if errors.Is(err, errGone) {
		return true // final is the caller's to call, once it gave up
	}
	final(nil)
	s.failed(ctx, w, m, err, ra, streamed)
	return false
}

// failed answers the request m whose exchange ended without a response:
// err is the call's error (nil when the upstream's answer ended without
// one), ra an answer of the upstream's that was no response to it.
func (s *passSession) failed(ctx context.Context, w http.ResponseWriter, m *message, err error, ra *rpcAnswer, streamed bool) {
	name := s.route.name
	switch {
	case ctx.Err() != nil && s.life.Err() == nil:
		// Cancelled by the caller (its notifications/cancelled, or its
		// request gone): nothing to answer.
	case streamed:
		// The upstream ended its stream without an answer; so does this one.
	case s.life.Err() != nil:
		writeError(w, m.ID, internalError("the pass-through session to "+name+" ended"))
	case err == nil:
		writeError(w, m.ID, internalError("upstream "+name+" ended its answer without a response"))
	case ra != nil, errors.As(err, new(statusError)):
		// The upstream may have run it (a 5xx after a tool's side
		// effect): it is never sent again.
		writeError(w, m.ID, internalError("upstream "+name+" "+err.Error()))
	default:
		writeError(w, m.ID, internalError("upstream "+name+" is unavailable: "+err.Error()))
	}
}

// begin is the context of a request's exchange: the downstream request's,
// ended also by the request's notifications/cancelled and the session's
// end; done forgets it.
func (s *passSession) begin(rctx context.Context, id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancel(rctx)
	stop := context.AfterFunc(s.life, cancel)
	if s.shared {
		// Requests of many downstream clients, whose ids may be alike: a
		// stateless client cancels by ending its request.
		return ctx, func() { stop(); cancel() }
	}
	key, c := string(id), &cancel
	s.mu.Lock()
	s.calls[key] = c
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		if s.calls[key] == c {
			delete(s.calls, key)
		}
		s.mu.Unlock()
		stop()
		cancel()
	}
}

// cancel ends the exchange of the request a notifications/cancelled names.
func (s *passSession) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	c := s.calls[string(p.RequestID)]
	s.mu.Unlock()
	if c != nil {
		(*c)()
	}
}

// send forwards a message that expects no answer and tells the downstream
// 202, as the SDK handler does; a failure is logged (or, when the upstream
// session is gone, a 404 ends this one too).
func (s *passSession) send(w http.ResponseWriter, r *http.Request, out outHeader, body []byte) {
	// Not cancelled with the downstream's request, but bounded, and ended
	// with the session.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), notifyTimeout)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	err := s.link.send(ctx, out, body)
	if errors.Is(err, errGone) && s.again(ctx) {
		err = s.link.send(ctx, s.outFor(r), body)
	}
	if err != nil {
		if errors.Is(err, errGone) {
			s.gone(w, r)
			return
		}
		s.route.h.opts.Logger.Warn("pass-through message not forwarded", "server", s.route.name, "err", err)
	}
	w.WriteHeader(http.StatusAccepted)
}

// listen relays the upstream's standalone stream to a downstream GET.
func (s *passSession) listen(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	msgs, err := s.link.listen(ctx, s.outFor(r))
	if errors.Is(err, errGone) && s.again(ctx) {
		msgs, err = s.link.listen(ctx, s.outFor(r))
	}
	var status statusError
	switch {
	case errors.Is(err, errGone):
		s.gone(w, r)
	case errors.As(err, &status):
		http.Error(w, "upstream "+s.route.name+" "+err.Error(), int(status))
	case err != nil:
		http.Error(w, "upstream "+s.route.name+" is unavailable: "+err.Error(), http.StatusBadGateway)
	default:
		relay(w, msgs, nil, nil, nil)
	}
}

func internalError(message string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: message}
}

// writeError answers the request id with a JSON-RPC error.
func writeError(w http.ResponseWriter, id json.RawMessage, e *jsonrpc.Error) {
	msg, _ := json.Marshal(e.Message)
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = append(b, msg...)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
