package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Stateless requests on the pass-through: a 2026-07-28 client sends no
// initialize and holds no session; each request carries its revision in
// the Mcp-Protocol-Version header and its client's identity and
// capabilities in _meta (SEP-2575). Such a request is served by a session
// the gateway holds for the user (one per user and upstream), through the
// same policy and relay as any other:
//
//   - an upstream that speaks the revision (asked once per route with
//     server/discover) gets the request unchanged, without a session:
//     nothing to hold but the user's policy;
//   - an upstream that does not (a 2025-11-25 or older server, and every
//     upstream reached over stdio or SSE) gets it on a session the gateway
//     opened with initialize, as a client of that revision: the request's
//     id is the gateway's own there (the user's requests come from many
//     clients, whose ids may be alike), the SEP-2575 keys of its _meta are
//     left out, and the answer gets its id back and resultType "complete".
//     The gateway answers server/discover from the upstream's initialize,
//     and the methods the revision removed with 404 -32601, as a server of
//     the revision does. When the upstream forgets the session (404), the
//     gateway opens a new one and sends the request again: a 404 says it
//     was not run.

// versionStateless is the first revision without sessions; revisions are
// dates, compared as strings, as the SDK does.
const versionStateless = "2026-07-28"

// legacyVersion is the revision the gateway's own sessions ask for.
const legacyVersion = "2025-11-25"

// The SEP-2575 error codes (go-sdk's).
const (
	codeHeaderMismatch     = mcp.CodeHeaderMismatch
	codeUnsupportedVersion = mcp.CodeUnsupportedProtocolVersion
)

// metaKeys are the SEP-2575 keys of a request's _meta, which a session's
// upstream must not see (a go-sdk server refuses a request that has them
// on a session).
//
//lint:ignore SA1019 the key is deprecated with logging, and still sent: it must not reach a session
var metaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel}

// specMethods are the requests a client sends a server in the MCP
// revisions the gateway speaks. Another method of a stateless client is
// answered 404 -32601 in front of a legacy upstream, as a 2026-07-28
// server answers it: such an upstream refuses what it does not know in
// its own way (go-sdk's with a plain-text HTTP 400).
var specMethods = map[string]bool{
	"tools/list": true, "tools/call": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "prompts/list": true, "prompts/get": true, "completion/complete": true,
	"tasks/get": true, "tasks/result": true, "tasks/cancel": true, "tasks/list": true, "tasks/update": true,
	"server/discover": true, "subscriptions/listen": true,
}

// removed are the methods 2026-07-28 no longer has.
var removed = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

func stateless(version string) bool { return version >= versionStateless }

// sharedSlot holds the session the gateway keeps for one user's stateless
// requests; mu serialises opening it.
type sharedSlot struct {
	mu sync.Mutex
	s  *passSession
}

// serveStateless serves a POST of a stateless client.
func (rt *passRoute) serveStateless(w http.ResponseWriter, r *http.Request, m *message, body []byte) {
	version := r.Header.Get(headerProtocol)
	s, err := rt.shared(r, version)
	if err != nil {
		writeErrorStatus(w, http.StatusBadGateway, m.ID, internalError(err.Error()))
		return
	}
	if s.modern {
		s.serve(w, r, m, body) // as it came; the upstream holds no session
		return
	}
	if m.kind() != kindRequest {
		// Nothing of a stateless client's notifications has a meaning on
		// the gateway's session (it cancels by ending its request).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if rpcErr, status := checkMeta(m, version); rpcErr != nil {
		writeErrorStatus(w, status, m.ID, rpcErr)
		return
	}
	switch {
	case removed[m.Method]:
		writeErrorStatus(w, http.StatusNotFound, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: strconv.Quote(m.Method) + " is not supported in protocol version " + version})
		return
	case !specMethods[m.Method]:
		writeErrorStatus(w, http.StatusNotFound, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: "method " + strconv.Quote(m.Method) + " not found"})
		return
	case m.Method == "server/discover":
		s.discover(w, m.ID, version)
		return
	}
	final, rpcErr := s.admit(r.Context(), m)
	if rpcErr != nil {
		writeError(w, m.ID, rpcErr)
		return
	}
	// A retry with the client's answers to its upstream's questions
	// (passthrough_input.go): the legacy upstream issued no requestState,
	// so any is the gateway's.
	retry := readRetry(m.Params)
	if retry.RequestState != nil {
		tok, ok := parseInputToken(*retry.RequestState)
		if !ok {
			final(nil)
			writeErrorStatus(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: "requestState is not one the gateway issued: call again without it"})
			return
		}
		rt.resumeInput(w, r, m, s, tok, retry, final)
		return
	}
	params := legacyParams(withoutRetry(m.Params))
	for try := 0; ; try++ {
		upID := json.RawMessage(strconv.AppendInt(nil, s.nextID(), 10))
		up := upReq{body: withTraceContext(r.Context(), envelope(upID, m.Method, params)), id: upID, out: outHeader{version: s.versionNow()}, status: errorStatus}
		back := func(resp []byte) []byte { return final(modernAnswer(resp, m.ID)) }
		// A stateless client cancels by ending its request; the upstream
		// session hears it as notifications/cancelled.
		stop := context.AfterFunc(r.Context(), func() { s.cancelUpstream(upID) })
		gone := s.exchangeInput(w, r, m, up, back, retry.Meta.Capabilities)
		stop()
		if !gone {
			return
		}
		s.close() // the upstream forgot it: open another, once
		if try == 1 {
			final(nil)
			writeError(w, m.ID, internalError("upstream "+rt.name+" lost the gateway's session twice"))
			return
		}
		if s, err = rt.shared(r, version); err != nil {
			final(nil)
			writeErrorStatus(w, http.StatusBadGateway, m.ID, internalError(err.Error()))
			return
		}
	}
}

// shared is the session that serves the caller's stateless requests at
// version, opened when there is none (or it ended).
func (rt *passRoute) shared(r *http.Request, version string) (*passSession, error) {
	owner := ""
	if p, _ := orchestrator.PrincipalFrom(r.Context()); p != nil {
		owner = p.UserID
	}
	rt.mu.Lock()
	if rt.slots == nil {
		rt.slots = map[string]*sharedSlot{}
	}
	slot := rt.slots[owner]
	if slot == nil {
		slot = new(sharedSlot)
		rt.slots[owner] = slot
	}
	rt.mu.Unlock()
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if s := slot.s; s != nil && s.life.Err() == nil {
		return s, nil
	}
	s, err := rt.open(r, rand.Text())
	if err != nil {
		return nil, err
	}
	s.shared = true
	if hl, ok := s.link.(*httpLink); ok && rt.speaks(r.Context(), hl, version) {
		s.modern = true
	} else if err := s.handshake(r.Context()); err != nil {
		s.close()
		return nil, err
	}
	slot.s = s
	return s, nil
}

// speaks reports whether the upstream serves version without a session,
// asked once per route and version with server/discover.
func (rt *passRoute) speaks(ctx context.Context, l *httpLink, version string) bool {
	rt.mu.RLock()
	known, ok := rt.modes[version]
	rt.mu.RUnlock()
	if ok {
		return known
	}
	meta, _ := json.Marshal(map[string]any{
		mcp.MetaKeyProtocolVersion:    version,
		mcp.MetaKeyClientInfo:         map[string]string{"name": "wunder", "version": rt.h.opts.Version},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	})
	params := append(append([]byte(`{"_meta":`), meta...), '}')
	res, err := rt.ask(ctx, l, outHeader{version: version, mcp: http.Header{headerMethod: {"server/discover"}}}, "server/discover", params)
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	speaks := err == nil && json.Unmarshal(res, &d) == nil && slices.Contains(d.SupportedVersions, version)
	if err == nil || errors.As(err, new(*jsonrpc.Error)) || errors.As(err, new(statusError)) {
		// An answer, not a failure to reach it: remembered.
		rt.mu.Lock()
		if rt.modes == nil {
			rt.modes = map[string]bool{}
		}
		rt.modes[version] = speaks
		rt.mu.Unlock()
	}
	return speaks
}

// ask sends the gateway's own request on l and returns its result (a
// JSON-RPC error as *jsonrpc.Error).
func (rt *passRoute) ask(ctx context.Context, l link, out outHeader, method string, params []byte) (json.RawMessage, error) {
	id := json.RawMessage(`0`)
	msgs, err := l.call(ctx, out, envelope(id, method, params), id)
	var ra *rpcAnswer
	if errors.As(err, &ra) {
		msgs, err = func(yield func([]byte) bool) { yield(ra.msg) }, nil
	}
	if err != nil {
		return nil, err
	}
	for msg := range msgs {
		if !responseTo(msg, id) {
			continue
		}
		var ans struct {
			Result json.RawMessage `json:"result"`
			Error  *jsonrpc.Error  `json:"error"`
		}
		if err := json.Unmarshal(msg, &ans); err != nil {
			return nil, err
		}
		if ans.Error != nil {
			return nil, ans.Error
		}
		return ans.Result, nil
	}
	return nil, errors.New("no answer to " + method)
}

// handshake opens the gateway's session with the upstream: initialize as a
// client of legacyVersion that declares elicitation (form and URL),
// sampling and roots, whose requests during a call go to the calling
// client as input requests (passthrough_input.go) when it declared the
// same, and are refused otherwise; then notifications/initialized.
func (s *passSession) handshake(ctx context.Context) error {
	rt := s.route
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": legacyVersion,
		"capabilities": map[string]any{
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"sampling":    map[string]any{},
			"roots":       map[string]any{},
		},
		"clientInfo": map[string]string{"name": "wunder", "version": rt.h.opts.Version},
	})
	res, err := rt.ask(ctx, s.link, outHeader{}, "initialize", params)
	if err != nil {
		return errors.New("upstream " + rt.name + " refused the gateway's session: " + err.Error())
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		return errors.New("upstream " + rt.name + " answered initialize with " + err.Error())
	}
	s.mu.Lock()
	s.version, s.init = init.ProtocolVersion, res
	s.mu.Unlock()
	return s.link.send(ctx, outHeader{version: init.ProtocolVersion}, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
}

// cancelUpstream tells the gateway's upstream session that the request
// id is cancelled.
func (s *passSession) cancelUpstream(id json.RawMessage) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	msg := append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), id...), "}}"...)
	_ = s.link.send(ctx, outHeader{version: s.versionNow()}, msg)
}

func (s *passSession) versionNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func (s *passSession) nextID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return s.ids
}

// discover answers server/discover for an upstream that has no such
// method, from what it said at initialize.
func (s *passSession) discover(w http.ResponseWriter, id json.RawMessage, version string) {
	s.mu.Lock()
	raw := s.init
	s.mu.Unlock()
	var init struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ServerInfo   json.RawMessage `json:"serverInfo"`
		Instructions string          `json:"instructions,omitempty"`
	}
	_ = json.Unmarshal(raw, &init)
	if init.Capabilities == nil {
		init.Capabilities = json.RawMessage(`{}`)
	}
	res := map[string]any{
		"resultType":        "complete",
		"supportedVersions": []string{version},
		"capabilities":      init.Capabilities,
	}
	if init.Instructions != "" {
		res["instructions"] = init.Instructions
	}
	if init.ServerInfo != nil {
		res["_meta"] = map[string]json.RawMessage{mcp.MetaKeyServerInfo: init.ServerInfo}
	}
	result, _ := json.Marshal(res)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...), result...), '}'))
}

// checkMeta checks what a server of the revision checks of a request's
// _meta and version header; a refusal comes with its HTTP status.
func checkMeta(m *message, header string) (*jsonrpc.Error, int) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	var version string
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &version) != nil || version == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing or invalid _meta field "` + mcp.MetaKeyProtocolVersion + `"`}, http.StatusBadRequest
	}
	if version != header {
		return &jsonrpc.Error{Code: codeHeaderMismatch, Message: headerProtocol + " header " + strconv.Quote(header) +
			" does not match request " + mcp.MetaKeyProtocolVersion + " " + strconv.Quote(version)}, http.StatusBadRequest
	}
	if version != versionStateless {
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: []string{versionStateless}, Requested: version})
		return &jsonrpc.Error{Code: codeUnsupportedVersion, Message: "unsupported protocol version", Data: data}, http.StatusBadRequest
	}
	if _, ok := p.Meta[mcp.MetaKeyClientCapabilities]; !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `missing or invalid _meta field "` + mcp.MetaKeyClientCapabilities + `"`}, http.StatusBadRequest
	}
	return nil, 0
}

// legacyParams are params without the SEP-2575 keys of their _meta.
func legacyParams(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p["_meta"] == nil {
		return params
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(p["_meta"], &meta) != nil {
		return params
	}
	for _, k := range metaKeys {
		delete(meta, k)
	}
	if len(meta) == 0 {
		delete(p, "_meta")
	} else {
		p["_meta"], _ = json.Marshal(meta)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}

// envelope is a JSON-RPC request.
func envelope(id json.RawMessage, method string, params json.RawMessage) []byte {
	m, _ := json.Marshal(method)
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(append(b, `,"method":`...), m...)
	if len(params) > 0 {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}')
}

// modernAnswer is an upstream session's response as the stateless client
// gets it: its own id back, and a result marked complete.
func modernAnswer(resp []byte, id json.RawMessage) []byte {
	var ans map[string]json.RawMessage
	if resp == nil || json.Unmarshal(resp, &ans) != nil {
		return resp
	}
	ans["id"] = id
	if res := ans["result"]; len(res) > 0 && res[0] == '{' {
		var fields map[string]json.RawMessage
		if json.Unmarshal(res, &fields) == nil && fields["resultType"] == nil {
			fields["resultType"] = json.RawMessage(`"complete"`)
			ans["result"], _ = json.Marshal(fields)
		}
	}
	b, err := json.Marshal(ans)
	if err != nil {
		return resp
	}
	return b
}

// errorStatus is the HTTP status of a response as a 2026-07-28 server
// sends it: 404 for -32601, 400 for invalid params and the SEP-2575
// refusals, else 200.
func errorStatus(resp []byte) int {
	var ans struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(resp, &ans) != nil || ans.Error == nil {
		return http.StatusOK
	}
	switch ans.Error.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, codeUnsupportedVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// writeErrorStatus answers the request id with a JSON-RPC error and an
// HTTP status, as 2026-07-28 servers do.
func writeErrorStatus(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
