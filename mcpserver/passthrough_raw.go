package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// The raw path: once a pass-through session is initialized, a POST of one
// of the hot methods (rawMethods) is forwarded as bytes on the upstream
// session, over HTTP, instead of being decoded by the SDK server, called
// through the SDK client and encoded again. Only the JSON-RPC envelope is
// read (params, results and notifications travel as json.RawMessage) and
// only the request ids are rewritten:
//
//   - a downstream request goes upstream as "wunder-N" (the SDK client of the
//     same upstream session numbers its requests, so they never collide),
//     and its response comes back with the downstream id;
//   - a request of the upstream on that response stream (sampling,
//     elicitation, roots) goes downstream as "wunder-sN", and the
//     downstream's answer, POSTed here, goes upstream with the upstream's id;
//   - notifications/cancelled of a forwarded request goes upstream with the
//     upstream id.
//
// The upstream's SSE responses are relayed event by event as they arrive
// (progress and logging stay on the request's stream); their event ids are
// dropped, since this route keeps no event store to resume from.
//
// Anything else, and every request the raw path is unsure of (another
// protocol version, another user, a malformed progress token, a body it
// cannot read, an upstream status other than 200), goes to the SDK
// handler unchanged, which answers it as before: the raw path is an
// optimisation, never a second set of rules.

// HTTPUpstreams is implemented by Upstreams that can name the endpoint and
// HTTP client of a streamable-HTTP upstream (adapters/mcptools.Set); with
// it the pass-through forwards the hot methods' bytes. ok is false for
// upstreams reached otherwise (stdio, SSE, OAuth).
type HTTPUpstreams interface {
	HTTPEndpoint(name string) (url string, client *http.Client, ok bool)
}

// rawMethods are forwarded as bytes: they have no side effect on the proxy
// server (subscribe and logging/setLevel do: they stay on the SDK path),
// and their answers go out as they came (the list methods' answers are
// filtered per principal: they stay on the SDK path, passthrough_policy.go).
var rawMethods = map[string]bool{
	"tools/call": true, "resources/read": true, "prompts/get": true, "completion/complete": true,
}

const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
	// maxRawBody is the SDK handler's request limit, applied alike.
	maxRawBody = mcp.DefaultMaxRequestBodyBytes
	// maxRawAnswer bounds an upstream's answer (or one SSE event of it)
	// held in memory; a larger one is an error to the caller.
	maxRawAnswer = 32 << 20
	// notifyTimeout bounds forwarding a notification upstream.
	notifyTimeout = 30 * time.Second
)

// passRoute serves /wunder/mcp/{name}: the raw path for the sessions that
// have one, the SDK handler for everything else.
type passRoute struct {
	h    *Handler
	name string
	sdk  http.Handler

	mu       sync.RWMutex
	sessions map[string]*proxy // downstream session id -> proxy with a raw upstream
}

func (rt *passRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if sid := r.Header.Get(headerSession); sid != "" {
			rt.mu.RLock()
			p := rt.sessions[sid]
			rt.mu.RUnlock()
			if p != nil && p.serveRaw(w, r) {
				return
			}
		}
	}
	rt.sdk.ServeHTTP(w, r)
}

func (rt *passRoute) add(sid string, p *proxy) {
	rt.mu.Lock()
	rt.sessions[sid] = p
	rt.mu.Unlock()
}

func (rt *passRoute) remove(sid string) {
	rt.mu.Lock()
	delete(rt.sessions, sid)
	rt.mu.Unlock()
}

// rawUpstream is the HTTP side of a proxy's upstream session.
type rawUpstream struct {
	url, session, version string
	client                *http.Client
	header                http.Header // of every request to the upstream
	user                  string      // the downstream session's user, as the SDK handler checks it

	mu    sync.Mutex
	seq   uint64
	calls map[string]*rawCall        // downstream request id -> the call, while forwarded
	asked map[string]json.RawMessage // downstream-facing id -> upstream request id, until answered

	// life ends with the downstream session (close), and with it every
	// forwarded call still waiting for its answer.
	life  context.Context
	close context.CancelFunc
}

// rawCall is a request forwarded on the raw path.
type rawCall struct {
	upID   string
	cancel context.CancelFunc // stops waiting for the upstream's answer
}

// rawFor sets up the raw path of an initialized proxy, nil when the
// upstream is not reachable as bytes or the two sides speak different
// protocol versions.
func (p *proxy) rawFor(up *mcp.ClientSession, downVersion string, extra *mcp.RequestExtra) *rawUpstream {
	hu, ok := p.h.opts.Upstreams.(HTTPUpstreams)
	if !ok {
		return nil
	}
	url, client, ok := hu.HTTPEndpoint(p.name)
	uir := up.InitializeResult()
	if !ok || up.ID() == "" || uir == nil || uir.ProtocolVersion != downVersion {
		return nil
	}
	u := &rawUpstream{url: url, session: up.ID(), version: downVersion, client: client,
		calls: map[string]*rawCall{}, asked: map[string]json.RawMessage{}}
	u.header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
		headerSession:  {u.session},
		headerProtocol: {u.version},
	}
	u.life, u.close = context.WithCancel(context.Background())
	if extra != nil && extra.TokenInfo != nil {
		u.user = extra.TokenInfo.UserID
	}
	return u
}

// envelope is a JSON-RPC message with its parts still raw.
type envelope map[string]json.RawMessage

// serveRaw forwards r when it can and reports whether it did; when it did
// not, r (body included) is as it came.
func (p *proxy) serveRaw(w http.ResponseWriter, r *http.Request) bool {
	u := p.raw
	// Without the version header the SDK handler takes the session's
	// version, which is u.version; with another one, the SDK path answers.
	if v := r.Header.Get(headerProtocol); (v != "" && v != u.version) || !sameUser(r, u.user) || !plainJSON(r) || (!p.h.opts.HostsChecked && rebinding(r)) {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRawBody+1))
	if err != nil || len(body) > maxRawBody {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		return false
	}
	handled := false
	var msg envelope
	if json.Unmarshal(body, &msg) == nil && msg.valid() {
		var method string
		if m, ok := msg["method"]; ok {
			if json.Unmarshal(m, &method) != nil {
				method = "\x00" // not a string: not ours
			}
		}
		_, hasID := msg["id"]
		switch {
		case method != "" && hasID:
			handled = p.forwardRequest(w, r, u, method, msg)
		case method == "notifications/cancelled":
			handled = p.forwardCancel(w, r, u, msg)
		case method == "" && hasID && !hasKey(msg, "method"):
			handled = p.forwardAnswer(w, r, u, msg)
		}
	}
	if !handled {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return handled
}

// valid reports whether m has only JSON-RPC 2.0 members.
func (m envelope) valid() bool {
	for k := range m {
		switch k {
		case "jsonrpc", "id", "method", "params", "result", "error":
		default:
			return false
		}
	}
	return string(m["jsonrpc"]) == `"2.0"`
}

func hasKey(m envelope, k string) bool { _, ok := m[k]; return ok }

// forwardRequest forwards a request of rawMethods and relays the answer.
func (p *proxy) forwardRequest(w http.ResponseWriter, r *http.Request, u *rawUpstream, method string, msg envelope) bool {
	id := msg["id"]
	params, hasParams := msg["params"]
	if !rawMethods[method] || !idLike(id) || hasKey(msg, "result") || hasKey(msg, "error") ||
		(hasParams && !rawProgressTokenOK(params)) {
		return false
	}
	// The policy decides before anything goes upstream
	// (passthrough_policy.go); a tools/call is audited with its outcome.
	audit, allowed := p.rawDecide(r.Context(), w, method, id, params)
	if !allowed {
		return true
	}
	outcome := orchestrator.OutcomeError
	defer func() { audit(outcome) }()
	// As on the SDK path, a request lives until its answer, its
	// notifications/cancelled or the end of the session, not just as long
	// as the downstream's connection: the upstream is told of a
	// cancellation only by the notification, which finds the call here.
	ctx, upID, done := u.begin(r.Context(), string(id))
	defer done()
	b := make([]byte, 0, 64+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":"`...)
	b = append(b, upID...)
	b = append(b, `","method":"`...)
	b = append(b, method...) // one of rawMethods: nothing to escape
	b = append(b, '"')
	if hasParams {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	b = append(b, '}')
	resp, err := u.post(ctx, b)
	if err != nil {
		if !u.cancelled(ctx) {
			writeRawError(w, id, "upstream "+p.name+" is unavailable: "+err.Error())
		}
		return true
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			// Refused before it ran (say, the upstream session ended): the
			// SDK path answers it the way it answers everything else.
			return false
		}
		// The upstream may have run it (a 5xx after a tool's side
		// effect): never send it again.
		writeRawError(w, id, "upstream "+p.name+" answered HTTP "+strconv.Itoa(resp.StatusCode))
		return true
	}
	want := `"` + upID + `"`
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		if ans := p.relayStream(ctx, w, resp.Body, u, want, id); ans != nil {
			outcome = answerOutcome(ans)
		}
		return true
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRawAnswer+1))
	if err == nil && len(data) > maxRawAnswer {
		err = errors.New("answer too large")
	}
	var ans envelope
	if u.cancelled(ctx) {
		return true
	}
	if ctx.Err() != nil {
		writeRawError(w, id, "the pass-through session to "+p.name+" ended")
		return true
	}
	if err != nil || json.Unmarshal(data, &ans) != nil || string(ans["id"]) != want {
		writeRawError(w, id, "upstream "+p.name+" answered out of protocol")
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	_, _ = w.Write(response(nil, id, ans))
	outcome = answerOutcome(ans)
	return true
}

// relayStream copies the upstream's SSE answer to w event by event until
// the response with id want, rewriting ids as the package doc says, and
// returns that response (nil when none came). When the answer is the
// first event (a call without progress, logging or questions), it goes
// out as a plain JSON response instead: one write, no stream to frame, as
// the downstream accepts either.
func (p *proxy) relayStream(ctx context.Context, w http.ResponseWriter, body io.Reader, u *rawUpstream, want string, id json.RawMessage) envelope {
	rd := sse.NewReader(body, maxRawAnswer)
	var sw *sse.Writer // once the answer is a stream
	var out []byte
	for {
		in, err := rd.Next()
		if err != nil {
			break // an event cut or past the bound is dropped, and the relay ends
		}
		var ev envelope
		if json.Unmarshal(in.Data, &ev) != nil {
			continue
		}
		_, hasMethod := ev["method"]
		_, hasID := ev["id"]
		switch {
		case hasMethod && hasID: // a request of the upstream
			out = request(out[:0], u.ask(ev["id"]), ev)
		case hasMethod: // a notification
			out = append(out[:0], in.Data...)
		case string(ev["id"]) == want:
			if sw == nil {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Cache-Control", "no-cache, no-transform")
				_, _ = w.Write(response(out[:0], id, ev))
			} else {
				// Sent with the end of the response, when the handler returns.
				_ = sw.Buffer(message(response(out[:0], id, ev)))
			}
			// The upstream ends the stream after its answer: read to the
			// end, so that the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
			return ev
		default:
			continue
		}
		if sw == nil {
			sw = sse.NewDeferredWriter(w)
			w.Header().Set("Cache-Control", "no-cache, no-transform")
		}
		if sw.Send(message(out)) != nil {
			return nil
		}
	}
	if sw == nil && !u.cancelled(ctx) {
		writeRawError(w, id, "upstream "+p.name+" ended its stream without an answer")
	}
	// Else the upstream ended the stream without an answer; so does this one.
	return nil
}

// forwardAnswer forwards the downstream's answer to a request the upstream
// made on a raw stream.
func (p *proxy) forwardAnswer(w http.ResponseWriter, r *http.Request, u *rawUpstream, msg envelope) bool {
	_, hasResult := msg["result"]
	_, hasError := msg["error"]
	if hasResult == hasError || hasKey(msg, "params") {
		return false
	}
	u.mu.Lock()
	upID, ok := u.asked[string(msg["id"])]
	delete(u.asked, string(msg["id"]))
	u.mu.Unlock()
	if !ok {
		return false
	}
	p.notifyUpstream(w, r, u, response(nil, upID, msg))
	return true
}

// forwardCancel forwards notifications/cancelled of a request in flight on
// the raw path.
func (p *proxy) forwardCancel(w http.ResponseWriter, r *http.Request, u *rawUpstream, msg envelope) bool {
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    json.RawMessage `json:"reason,omitempty"`
	}
	if hasKey(msg, "id") || json.Unmarshal(msg["params"], &params) != nil {
		return false
	}
	u.mu.Lock()
	call, ok := u.calls[string(params.RequestID)]
	u.mu.Unlock()
	if !ok {
		return false
	}
	defer call.cancel() // after the upstream got the notification
	b := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`), call.upID...)
	b = append(b, '"')
	if len(params.Reason) > 0 {
		b = append(b, `,"reason":`...)
		b = append(b, params.Reason...)
	}
	b = append(b, "}}"...)
	p.notifyUpstream(w, r, u, b)
	return true
}

// notifyUpstream posts a message that expects no answer and tells the
// downstream 202, as the SDK handler does; a failure is only logged, as
// the SDK client would.
func (p *proxy) notifyUpstream(w http.ResponseWriter, r *http.Request, u *rawUpstream, b []byte) {
	// Not cancelled with the downstream's request, but bounded, and ended
	// with the session.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), notifyTimeout)
	defer cancel()
	defer context.AfterFunc(u.life, cancel)()
	resp, err := u.post(ctx, b)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if resp.StatusCode >= 300 {
			err = errors.New(resp.Status)
		}
	}
	if err != nil {
		p.h.opts.Logger.Warn("pass-through message not forwarded", "server", p.name, "err", err)
	}
	w.WriteHeader(http.StatusAccepted)
}

// begin assigns the upstream id of a forwarded request and the context of
// its upstream exchange: rctx's values, ended by the call's cancellation or
// the session's end; done forgets the call.
func (u *rawUpstream) begin(rctx context.Context, downID string) (ctx context.Context, upID string, done func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(rctx))
	stop := context.AfterFunc(u.life, cancel)
	u.mu.Lock()
	u.seq++
	upID = "wunder-" + strconv.FormatUint(u.seq, 10)
	call := &rawCall{upID: upID, cancel: cancel}
	u.calls[downID] = call
	u.mu.Unlock()
	return ctx, upID, func() {
		u.mu.Lock()
		if u.calls[downID] == call {
			delete(u.calls, downID)
		}
		u.mu.Unlock()
		stop()
		cancel()
	}
}

// cancelled reports whether a forwarded request's exchange was ended by
// its caller's cancellation (it is not answered), not by the session's
// end (the caller is told).
func (u *rawUpstream) cancelled(ctx context.Context) bool {
	return ctx.Err() != nil && u.life.Err() == nil
}

// ask assigns the downstream-facing id of an upstream request; the SDK
// server numbers its own requests, so a string never collides.
func (u *rawUpstream) ask(upID json.RawMessage) json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seq++
	id := json.RawMessage(`"wunder-s` + strconv.FormatUint(u.seq, 10) + `"`)
	u.asked[string(id)] = upID
	return id
}

func (u *rawUpstream) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = u.header // never written to: net/http does not, headerTransport clones first
	return u.client.Do(req)
}

// response is a JSON-RPC response with id and msg's result or error.
func response(b []byte, id json.RawMessage, msg envelope) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if e, ok := msg["error"]; ok {
		b = append(b, `,"error":`...)
		b = append(b, e...)
	} else {
		b = append(b, `,"result":`...)
		if res, ok := msg["result"]; ok {
			b = append(b, res...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// request is msg, a JSON-RPC request, with id.
func request(b []byte, id json.RawMessage, msg envelope) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = append(b, msg["method"]...)
	if params, ok := msg["params"]; ok {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// message is msg as the event of a stream: type message, its data on one
// line.
func message(msg []byte) sse.Event {
	return sse.Event{Type: "message", Data: compact(msg)}
}

// compact strips the insignificant whitespace of msg when it spans lines.
func compact(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg
	}
	var b bytes.Buffer
	if json.Compact(&b, msg) != nil {
		return nil
	}
	return b.Bytes()
}

func writeRawError(w http.ResponseWriter, id json.RawMessage, message string) {
	writeRawErrorCode(w, id, jsonrpc.CodeInternalError, message)
}

func writeRawErrorCode(w http.ResponseWriter, id json.RawMessage, code int64, message string) {
	msg, _ := json.Marshal(message)
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = append(b, msg...)
	b = append(b, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// idLike reports whether id is a JSON-RPC request id: a string or a number.
func idLike(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// rawProgressTokenOK reports whether params is an object whose progress
// token, if any, is a string or a number (else the SDK path answers with
// invalid params).
func rawProgressTokenOK(params json.RawMessage) bool {
	var obj envelope
	if json.Unmarshal(params, &obj) != nil || obj == nil {
		return false
	}
	raw, ok := obj["_meta"]
	if !ok {
		return true
	}
	var meta envelope
	if json.Unmarshal(raw, &meta) != nil || meta == nil {
		return false
	}
	token, ok := meta["progressToken"]
	return !ok || idLike(token)
}

// sameUser applies the SDK handler's session rule: a session opened with a
// user's token is used with that user's token only.
func sameUser(r *http.Request, user string) bool {
	if user == "" {
		return true
	}
	ti := auth.TokenInfoFromContext(r.Context())
	return ti != nil && ti.UserID == user
}

// plainJSON reports whether r is a POST the SDK handler accepts as it is:
// a JSON body, and both answer types accepted.
func plainJSON(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if !strings.EqualFold(strings.TrimSpace(ct), "application/json") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range r.Header.Values("Accept") {
		for t := range strings.SplitSeq(v, ",") {
			t, _, _ = strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(t)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// rebinding reports a request the SDK handler refuses as DNS rebinding: to a
// loopback address under a name that is not.
func rebinding(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && loopback(la.String()) && !loopback(r.Host)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
