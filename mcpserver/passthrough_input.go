package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/orchestrator"
)

// A 2025-11-25 upstream's questions for a 2026-07-28 client. An upstream
// of 2025-11-25 or older asks its client in the middle of a call, with a
// request of its own on the call's stream: elicitation/create,
// sampling/createMessage, roots/list. A 2026-07-28 client takes no such
// requests (SEP-2322): a server that needs its input answers the call with
// an input-required result, and the client calls again with its answers
// (inputResponses) and the result's requestState. The gateway's session
// for stateless clients (passthrough_stateless.go) declares those three
// capabilities upstream and translates between the two:
//
//   - The upstream asks during a stateless client's call (tools/call,
//     prompts/get, resources/read), and the client declared the capability
//     in its request's _meta: the call is parked. The upstream's request
//     goes to the client as an input request (key "input-<n>", method and
//     params as the upstream sent them) in an input-required result, with
//     a requestState naming the parked call. The upstream call itself goes
//     on, held by a goroutine of this replica that stores each message
//     the upstream sends on it as an event of the parked call's record
//     (package mcpsession: every replica reads them).
//   - The client calls again with its answer and the requestState, on any
//     replica. That replica checks the record is the caller's and of this
//     route and method, sends the answer upstream as the response to the
//     upstream's request (on the holder's connection when it holds the
//     call, else on the upstream session by its id, which the record
//     keeps), and follows the stored events to the call's response, which
//     it answers with, or to the upstream's next question, which is the
//     next input-required result.
//   - A question the client cannot answer (it did not declare the
//     capability, or the call is a list or another method a client does
//     not retry) is refused upstream with -32602, as a 2025-11-25 client
//     without the capability refuses it (go-sdk's), and the call goes on:
//     whether it can do without is the upstream's to decide (SEP-2322:
//     input requests only for declared capabilities). ping is answered. A parked
//     call not answered within Options.InputTimeout is cancelled upstream,
//     and a retry then gets the error that says so.
//
// The requestState is no credential: the record is read as the caller
// (another user's is not found). The records are MCP session records whose
// route no client can name (the route's name + "#input"), deleted when the
// call's answer went out and otherwise purged with idle sessions.

const (
	inputStatePrefix = "wunder-input."
	inputRouteSuffix = "#input"
	inputStream      = "call"
	// maxInputCalls bounds the calls one replica holds parked per user
	// and upstream; one past it is refused upstream as if the client
	// could not answer.
	maxInputCalls = 16
	// maxInputEvents bounds the messages stored of one parked call (each
	// at most maxAnswer); an upstream that sends more is cancelled.
	maxInputEvents = 1000
)

// inputCapability is the client capability each upstream question needs.
var inputCapability = map[string]string{
	"elicitation/create":     "elicitation",
	"sampling/createMessage": "sampling",
	"roots/list":             "roots",
}

// retriable are the methods a 2026-07-28 client calls again with its
// answers (SEP-2322).
var retriable = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// inputToken is the requestState of the gateway's input-required result:
// the parked call's record and the index of the event that holds the
// upstream's question.
type inputToken struct {
	Call string `json:"c"`
	At   int    `json:"a"`
}

func (t inputToken) String() string {
	b, _ := json.Marshal(t)
	return inputStatePrefix + base64.RawURLEncoding.EncodeToString(b)
}

func parseInputToken(s string) (inputToken, bool) {
	var t inputToken
	rest, ok := strings.CutPrefix(s, inputStatePrefix)
	if !ok {
		return t, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || json.Unmarshal(b, &t) != nil || t.Call == "" || t.At < 0 {
		return t, false
	}
	return t, true
}

// inputRecord is the state of a parked call's record.
type inputRecord struct {
	// Upstream is the upstream session's id (an HTTP upstream), which a
	// replica that does not hold the call answers on.
	Upstream string `json:"upstream,omitempty"`
	// Method is the client's method; Request the call's id upstream.
	Method  string          `json:"method"`
	Request json.RawMessage `json:"request"`
	// Version is the upstream session's protocol version.
	Version string `json:"version"`
}

// retryParams are what a retried call adds to its params.
type retryParams struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
	Meta           struct {
		Capabilities map[string]json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

func readRetry(params json.RawMessage) retryParams {
	var p retryParams
	_ = json.Unmarshal(params, &p)
	return p
}

// withoutRetry are params without inputResponses and requestState, as the
// upstream (which issued neither) must get them.
func withoutRetry(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	if _, a := p["inputResponses"]; !a {
		if _, b := p["requestState"]; !b {
			return params
		}
	}
	delete(p, "inputResponses")
	delete(p, "requestState")
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}

// inputKey is the input request's key for the question at event index n.
func inputKey(n int) string { return "input-" + strconv.Itoa(n) }

// upstreamRequest is a request of the upstream's own (a method and an id).
type upstreamRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func asRequest(msg []byte) (upstreamRequest, bool) {
	var q upstreamRequest
	if json.Unmarshal(msg, &q) != nil || q.Method == "" || len(q.ID) == 0 || string(q.ID) == "null" {
		return q, false
	}
	return q, true
}

// inputRequired is the result that asks the client q (the question at
// event index at of the call rec).
func inputRequired(id json.RawMessage, call string, at int, q upstreamRequest) []byte {
	params := q.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	res, _ := json.Marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": map[string]any{inputKey(at): map[string]any{"method": q.Method, "params": params}},
		"requestState":  inputToken{Call: call, At: at}.String(),
	})
	return append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...), res...), '}')
}

// response is a JSON-RPC response to the upstream's request id.
func response(id json.RawMessage, result json.RawMessage, e *jsonrpc.Error) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if e != nil {
		eb, _ := json.Marshal(e)
		return append(append(append(b, `,"error":`...), eb...), '}')
	}
	return append(append(append(b, `,"result":`...), result...), '}')
}

// answerUpstream answers a request of the upstream's that no client is
// asked: ping, and the questions the client cannot answer.
func (s *passSession) answerUpstream(ctx context.Context, q upstreamRequest, why string) {
	var msg []byte
	if q.Method == "ping" {
		msg = response(q.ID, json.RawMessage(`{}`), nil)
	} else {
		code := int64(jsonrpc.CodeMethodNotFound)
		if inputCapability[q.Method] != "" {
			code = jsonrpc.CodeInvalidParams // a question this client cannot take, as go-sdk's client refuses it
		}
		msg = response(q.ID, nil, &jsonrpc.Error{Code: code, Message: why})
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	_ = s.link.send(ctx, outHeader{version: s.versionNow()}, msg)
}

// whyNot says why the client of a call cannot be asked q ("" when it
// can).
func whyNot(method string, q upstreamRequest, caps map[string]json.RawMessage) string {
	need, ok := inputCapability[q.Method]
	switch {
	case !ok:
		return strconv.Quote(q.Method) + " is not a request the gateway's clients take"
	case !retriable[method]:
		return "the gateway's client cannot be asked during " + method
	case caps[need] == nil:
		return "the gateway's client did not declare the " + need + " capability"
	}
	return ""
}

// exchangeInput is exchange for a stateless client's request on the
// gateway's session with a legacy upstream: the upstream's questions are
// translated, and the call parked, as the comment above says.
func (s *passSession) exchangeInput(w http.ResponseWriter, r *http.Request, m *message, up upReq, final func([]byte) []byte, caps map[string]json.RawMessage) (gone bool) {
	// The call outlives the request once it is parked: its context is the
	// session's, cancelled with the request until then.
	callCtx, cancelCall := context.WithCancel(context.WithoutCancel(r.Context()))
	stopLife := context.AfterFunc(s.life, cancelCall)
	unbind := context.AfterFunc(r.Context(), cancelCall)
	release := func() { stopLife(); cancelCall() }
	s.busy.Add(1)
	held := false
	defer func() {
		if !held {
			unbind()
			release()
			s.busy.Add(-1)
		}
	}()
	msgs, err := s.link.call(callCtx, up.out, up.body, up.id)
	if err != nil {
		var ra *rpcAnswer
		switch {
		case errors.As(err, &ra) && responseTo(ra.msg, up.id):
			msg := final(ra.msg)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(ra.status)
			_, _ = w.Write(msg)
		case errors.Is(err, errGone):
			return true
		default:
			final(nil)
			s.failed(r.Context(), w, m, err, ra, false)
		}
		return false
	}
	next, stop := iter.Pull(msgs)
	defer func() {
		if !held {
			stop()
		}
	}()
	var sw *sse.Writer
	for {
		msg, ok := next()
		if !ok {
			break
		}
		if responseTo(msg, up.id) {
			msg = final(msg)
			writeAnswer(w, sw, msg, up.status)
			return false
		}
		if q, ok := asRequest(msg); ok {
			if why := whyNot(m.Method, q, caps); why != "" {
				s.answerUpstream(r.Context(), q, why)
				continue
			}
			// The request ends here and the call goes on: it is no longer
			// cancelled with the request.
			if !unbind() {
				break // the request ended meanwhile, and the call with it
			}
			call, err := s.park(r.Context(), m.Method, up.id, msg, next, stop, release)
			if err != nil {
				unbind = context.AfterFunc(r.Context(), cancelCall)
				s.answerUpstream(r.Context(), q, err.Error())
				continue
			}
			held = true
			writeAnswer(w, sw, final(inputRequired(m.ID, call, 0, q)), up.status)
			return false
		}
		if sw == nil {
			sw = sse.NewDeferredWriter(w)
			w.Header().Set("Cache-Control", "no-cache, no-transform")
		}
		if sw.Send(sseMessage(msg)) != nil {
			break
		}
	}
	final(nil)
	if r.Context().Err() == nil {
		s.failed(r.Context(), w, m, nil, nil, sw != nil)
	}
	return false
}

// writeAnswer writes the response msg: an event of the stream sw when it
// was started, else plain JSON with its status.
func writeAnswer(w http.ResponseWriter, sw *sse.Writer, msg []byte, status func([]byte) int) {
	if sw != nil {
		_ = sw.Send(sseMessage(msg))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	if status != nil {
		w.WriteHeader(status(msg))
	}
	_, _ = w.Write(msg)
}

// park stores the record of the call upID (the client's method), whose
// upstream just asked question, with the question as its event 0, and
// hands the rest of the call to a goroutine that stores what the upstream
// sends on it until its response, or until Options.InputTimeout. It
// returns the record's id.
func (s *passSession) park(ctx context.Context, method string, upID json.RawMessage, question []byte,
	next func() ([]byte, bool), stop, release func()) (string, error) {
	rt, h := s.route, s.route.h
	rt.mu.Lock()
	if rt.inputs == nil {
		rt.inputs = map[string]*passSession{}
	}
	n := 0
	for _, o := range rt.inputs {
		if o.owner == s.owner {
			n++
		}
	}
	rt.mu.Unlock()
	if n >= maxInputCalls {
		return "", errors.New("the gateway holds " + strconv.Itoa(maxInputCalls) + " calls of this user waiting for input (the bound)")
	}
	st := inputRecord{Method: method, Request: upID, Version: s.versionNow()}
	if hl, ok := s.link.(*httpLink); ok {
		st.Upstream = hl.upstreamID()
	}
	raw, _ := json.Marshal(st)
	id := "input_" + rand.Text()
	now := time.Now()
	store := h.opts.Sessions
	bg := context.WithoutCancel(ctx)
	if err := store.CreateMCPSession(bg, &mcpsession.Session{ID: id, UserID: s.owner, Route: rt.name + inputRouteSuffix,
		ProtocolVersion: versionStateless, InitParams: json.RawMessage(`{}`), State: raw, CreatedAt: now, UsedAt: now}); err != nil {
		return "", errors.New("the gateway could not keep the call waiting for input: " + err.Error())
	}
	if err := store.AppendMCPEvent(bg, id, inputStream, question, 0); err != nil {
		_ = store.CloseMCPSession(bg, id)
		return "", errors.New("the gateway could not keep the call waiting for input: " + err.Error())
	}
	rt.mu.Lock()
	rt.inputs[id] = s
	rt.mu.Unlock()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer s.busy.Add(-1)
		defer release()
		defer stop()
		defer func() {
			rt.mu.Lock()
			delete(rt.inputs, id)
			rt.mu.Unlock()
		}()
		var expired atomic.Bool
		timer := time.AfterFunc(h.opts.InputTimeout, func() {
			// Stop reading first: what the upstream says after it heard
			// the cancellation is not the call's answer.
			expired.Store(true)
			release()
			s.cancelUpstream(upID)
		})
		defer timer.Stop()
		// end stops the call here and upstream, for why.
		why := ""
		end := func(reason string) {
			why = reason
			release()
			s.cancelUpstream(upID)
		}
		for stored := 1; ; {
			msg, ok := next()
			if !ok {
				break
			}
			if q, ok := asRequest(msg); ok && inputCapability[q.Method] == "" {
				s.answerUpstream(bg, q, strconv.Quote(q.Method)+" is not a request the gateway's clients take")
				continue
			}
			if stored >= maxInputEvents {
				end("the upstream sent more than " + strconv.Itoa(maxInputEvents) + " messages on a call waiting for input (the bound); it was cancelled upstream")
				break
			}
			if err := appendEvent(bg, store, id, msg); err != nil {
				// No follower could see the call go on: it ends, and the
				// retry is told as far as the store lets it be.
				h.opts.Logger.Error("mcp pass-through: storing a parked call's message", "route", rt.name, "err", err)
				end("the gateway could not keep the call's messages: " + err.Error())
				break
			}
			stored++
			if responseTo(msg, upID) {
				return
			}
			_ = store.TouchMCPSession(bg, id, time.Now())
		}
		// The call ended without its response: the client's retry is told.
		switch {
		case expired.Load():
			why = "the call waited longer than " + h.opts.InputTimeout.String() + " for its input and was cancelled upstream"
		case why == "":
			why = "upstream " + rt.name + " ended the call without an answer"
		}
		if err := appendEvent(bg, store, id, response(upID, nil, internalError(why))); err != nil {
			h.opts.Logger.Error("mcp pass-through: storing a parked call's end", "route", rt.name, "err", err)
		}
	}()
	return id, nil
}

// appendEvent stores msg as the parked call's next event, trying three
// times: a follower on any replica reads the call only from the store.
func appendEvent(ctx context.Context, store mcpsession.Store, call string, msg []byte) error {
	var err error
	for try, wait := 0, 10*time.Millisecond; try < 3; try, wait = try+1, 4*wait {
		if err = store.AppendMCPEvent(ctx, call, inputStream, msg, 0); err == nil {
			return nil
		}
		if try < 2 {
			time.Sleep(wait) // a busy store's next try, not synchronisation
		}
	}
	return err
}

// resumeInput serves a stateless client's retry of a parked call: its
// answer to the question the requestState names goes upstream, and the
// call's stored events are followed to its response or next question.
func (rt *passRoute) resumeInput(w http.ResponseWriter, r *http.Request, m *message, s *passSession, tok inputToken, retry retryParams, final func([]byte) []byte) {
	ctx := r.Context()
	store := rt.h.opts.Sessions
	refuse := func(msg string) {
		final(nil)
		writeErrorStatus(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg})
	}
	rec, err := store.MCPSession(ctx, tok.Call)
	owner := ""
	if p, _ := orchestrator.PrincipalFrom(ctx); p != nil {
		owner = p.UserID
	}
	if err != nil || rec.UserID != owner || rec.Route != rt.name+inputRouteSuffix {
		refuse("requestState names no call of yours waiting for input (it ended, expired, or is another's): call again without it")
		return
	}
	var st inputRecord
	_ = json.Unmarshal(rec.State, &st)
	if st.Method != m.Method {
		refuse("requestState is of a " + st.Method + " call, not of " + m.Method)
		return
	}
	evs, err := store.MCPEvents(ctx, tok.Call, inputStream, tok.At-1)
	if err != nil || len(evs) == 0 || evs[0].Index != tok.At {
		refuse("requestState names no question of the call")
		return
	}
	q, ok := asRequest(evs[0].Data)
	if !ok {
		refuse("requestState names no question of the call")
		return
	}
	answer := retry.InputResponses[inputKey(tok.At)]
	if len(answer) == 0 {
		// Not answered: asked again.
		writeAnswer(w, nil, final(inputRequired(m.ID, tok.Call, tok.At, q)), nil)
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(answer, &obj) != nil {
		refuse("inputResponses[" + strconv.Quote(inputKey(tok.At)) + "] is not a JSON object")
		return
	}
	if err := rt.answerParked(ctx, tok.Call, st, response(q.ID, answer, nil)); err != nil {
		final(nil)
		writeError(w, m.ID, internalError("upstream "+rt.name+" did not take the answer: "+err.Error()))
		return
	}
	_ = store.TouchMCPSession(ctx, tok.Call, time.Now())
	var sw *sse.Writer
	after := tok.At
	// The holder ends the call at its timeout, and says so in the events;
	// a holder that died says nothing, so the wait is bounded here too.
	deadline := time.Now().Add(rt.h.opts.InputTimeout)
	for wait := time.Millisecond; ; {
		if time.Now().After(deadline) {
			final(nil)
			writeError(w, m.ID, internalError("the call waiting for input did not go on within "+rt.h.opts.InputTimeout.String()))
			return
		}
		evs, err := store.MCPEvents(ctx, tok.Call, inputStream, after)
		if err != nil {
			if ctx.Err() == nil {
				final(nil)
				writeError(w, m.ID, internalError("the call waiting for input is gone: "+err.Error()))
			}
			return
		}
		for _, ev := range evs {
			after = ev.Index
			if responseTo(ev.Data, st.Request) {
				writeAnswer(w, sw, final(modernAnswer(ev.Data, m.ID)), errorStatus)
				_ = store.CloseMCPSession(context.WithoutCancel(ctx), tok.Call)
				return
			}
			if q, ok := asRequest(ev.Data); ok {
				if why := whyNot(m.Method, q, retry.Meta.Capabilities); why != "" {
					_ = rt.answerParked(ctx, tok.Call, st, response(q.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why}))
					continue
				}
				writeAnswer(w, sw, final(inputRequired(m.ID, tok.Call, ev.Index, q)), nil)
				return
			}
			if sw == nil {
				sw = sse.NewDeferredWriter(w)
				w.Header().Set("Cache-Control", "no-cache, no-transform")
			}
			if sw.Send(sseMessage(ev.Data)) != nil {
				return
			}
		}
		if len(evs) > 0 {
			wait = time.Millisecond
			continue
		}
		// The store is read again after a pause that grows to 100ms: the
		// holder may be another replica, which only the store connects.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// answerParked sends msg (a response to the upstream's question) on the
// parked call's upstream session: on the holder's connection when this
// replica holds the call, else to the HTTP upstream session by its id.
func (rt *passRoute) answerParked(ctx context.Context, call string, st inputRecord, msg []byte) error {
	rt.mu.RLock()
	s := rt.inputs[call]
	rt.mu.RUnlock()
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if s != nil {
		return s.link.send(ctx, outHeader{version: st.Version}, msg)
	}
	url, client, ok := rt.h.opts.Upstreams.HTTPEndpoint(rt.name)
	if !ok || st.Upstream == "" {
		return errors.New("the call is held by another replica, and its upstream is not reachable from this one (stdio or SSE)")
	}
	l := &httpLink{url: url, client: client}
	hd := initialHeader.Clone()
	hd.Set(headerSession, st.Upstream)
	l.header.Store(&hd)
	return l.send(ctx, outHeader{version: st.Version}, msg)
}
