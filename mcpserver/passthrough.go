package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// The pass-through route /wunder/mcp/{name} is a streamable-HTTP endpoint
// of wunder's own in front of one upstream session per downstream session.
// Every message goes one way: read as a JSON-RPC envelope (params, results
// and notifications stay raw bytes), checked against the policy
// (passthrough_policy.go), forwarded unchanged, ids included, on the
// session's link (passthrough_http.go for a streamable-HTTP upstream,
// passthrough_conn.go for stdio and SSE), and answered with what the
// upstream sent, relayed event by event (passthrough_relay.go). This file
// keeps the sessions and the transport's rules; passthrough_forward.go
// serves a session's messages.

const (
	headerSession  = "Mcp-Session-Id"
	headerProtocol = "Mcp-Protocol-Version"
	headerMethod   = "Mcp-Method"
	headerName     = "Mcp-Name"
	headerParam    = "Mcp-Param-"
	// maxBody is the SDK handler's request limit, applied alike.
	maxBody = mcp.DefaultMaxRequestBodyBytes
)

// passRoute serves /wunder/mcp/{name}. The route is stateful even with
// Options.Stateless: forwarding needs the session.
type passRoute struct {
	h    *Handler
	name string

	// mu guards the fields below.
	mu       sync.RWMutex
	sessions map[string]*passSession // downstream session id -> session
	// swept is when idle sessions were last dropped (sweep).
	swept time.Time
	// slots hold the sessions serving stateless requests, by user
	// (passthrough_stateless.go); modes whether the upstream serves a
	// stateless revision itself.
	slots map[string]*sharedSlot
	modes map[string]bool
	// inputs are the calls this replica holds parked, waiting for their
	// client's input, by record id (passthrough_input.go), and the
	// session each is on.
	inputs map[string]*passSession
}

func (h *Handler) passThrough(name string) http.Handler {
	return &passRoute{h: h, name: name, sessions: map[string]*passSession{}}
}

// passSession is one downstream session and its link to its own upstream
// session.
type passSession struct {
	id    string // the downstream's Mcp-Session-Id, wunder's own
	route *passRoute
	link  link
	// owner is the user of the principal that opened the session ("" for
	// none: the API key, the local operator): only that user may use it,
	// the SDK handler's rule.
	owner string
	// user is whom the policy decides for: the owner, else Options.UserID.
	user string
	// shared marks a session the gateway holds for stateless downstream
	// requests (passthrough_stateless.go), no downstream's own; modern
	// that its upstream serves them without a session, as they came.
	shared, modern bool
	// initParams are the downstream's initialize params, with which an
	// upstream session is opened anew (passthrough_replicas.go); reinit
	// makes one request at a time do that.
	initParams json.RawMessage
	reinit     sync.Mutex
	// busy counts the requests being served, used is when the last one
	// ended (unix nanoseconds): an idle session is dropped here (sweep).
	busy, used atomic.Int64
	// life ends with the session, and with it every exchange in flight.
	life context.Context
	end  context.CancelFunc
	once sync.Once

	// mu guards the fields below.
	mu sync.Mutex
	// version is the protocol version the upstream answered initialize
	// with; requests without the version header go with it.
	version string
	calls   map[string]*context.CancelFunc // request id in flight -> ends its exchange
	// init is the upstream's initialize result and ids the last request id
	// the gateway gave upstream, on a shared session of its own.
	init json.RawMessage
	ids  int64
}

func (rt *passRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !rt.h.opts.HostsChecked && rebinding(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	switch r.Method {
	case http.MethodPost:
		rt.servePOST(w, r)
	case http.MethodGet, http.MethodDelete:
		if r.Header.Get(headerSession) == "" && stateless(r.Header.Get(headerProtocol)) {
			// A revision without sessions has no GET stream to listen on
			// and nothing to end.
			w.Header().Set("Allow", "POST")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		rt.serveSession(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// serveSession serves a GET or DELETE of a session.
func (rt *passRoute) serveSession(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if _, streamOK := accepts(r); !streamOK {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
		if s := rt.lookup(w, r); s != nil {
			defer s.use()()
			s.listen(w, r)
		}
	case http.MethodDelete:
		if s := rt.lookup(w, r); s != nil {
			if err := rt.h.opts.Sessions.CloseMCPSession(r.Context(), s.id); err != nil {
				rt.h.opts.Logger.Error("closing an MCP session in the store", "err", err)
				http.Error(w, "the session could not be closed: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			s.close()
			w.WriteHeader(http.StatusNoContent)
		}
	}
}

func (rt *passRoute) servePOST(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	if jsonOK, streamOK := accepts(r); !jsonOK || !streamOK {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "failed to read body", http.StatusBadRequest)
		}
		return
	}
	m, err := readMessage(body)
	if err != nil {
		http.Error(w, "malformed payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	if checkStandardHeaders(w, r, m) {
		return
	}
	if r.Header.Get(headerSession) == "" {
		if stateless(r.Header.Get(headerProtocol)) {
			rt.serveStateless(w, r, m, body)
			return
		}
		if m.kind() != kindRequest || m.Method != "initialize" {
			http.Error(w, "Bad Request: a session starts with initialize; other messages need an Mcp-Session-Id header", http.StatusBadRequest)
			return
		}
		rt.initialize(w, r, m, body)
		return
	}
	if s := rt.lookup(w, r); s != nil {
		defer s.use()()
		s.serve(w, r, m, body)
	}
}

// lookup is the session the request names, held here or taken over from
// its record (passthrough_replicas.go); nil when there is none (404:
// unknown, deleted, idle past the timeout) or it is not the caller's
// (403), the response written.
func (rt *passRoute) lookup(w http.ResponseWriter, r *http.Request) *passSession {
	sid := r.Header.Get(headerSession)
	if sid == "" {
		http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
		return nil
	}
	rt.sweep()
	rec, status := rt.h.record(r, sid, rt.name)
	rt.mu.RLock()
	s := rt.sessions[sid]
	rt.mu.RUnlock()
	if status != 0 {
		if s != nil && status == http.StatusNotFound {
			s.close() // ended on another replica, or expired
		}
		http.Error(w, sessionProblem[status], status)
		return nil
	}
	if s != nil {
		return s
	}
	s, err := rt.takeOver(r, rec)
	if err != nil {
		http.Error(w, "the session could not be resumed here: "+err.Error(), http.StatusBadGateway)
		return nil
	}
	return s
}

// initialize opens a session: its link to a new upstream session, then
// the downstream's initialize forwarded on it. The session exists once the
// upstream answered with a result (before the answer goes out, so the
// client's next request finds it); an error answer leaves none.
func (rt *passRoute) initialize(w http.ResponseWriter, r *http.Request, m *message, body []byte) {
	s, err := rt.open(r, rand.Text())
	if err != nil {
		writeError(w, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()})
		return
	}
	w.Header().Set(headerSession, s.id)
	opened := false
	gone := s.exchange(w, r, m, upReq{body: body, id: m.ID, out: s.outFor(r)}, func(resp []byte) []byte {
		var ans struct {
			Result *struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(resp, &ans) == nil && ans.Result != nil {
			s.mu.Lock()
			s.version = ans.Result.ProtocolVersion
			s.mu.Unlock()
			s.initParams = m.Params
			if err := rt.store(r.Context(), s); err != nil {
				rt.h.opts.Logger.Error("storing an MCP session", "err", err)
				return errorAnswer(m.ID, internalError("the session could not be stored: "+err.Error()))
			}
			rt.mu.Lock()
			if s.life.Err() == nil { // not closed meanwhile (Handler.Close)
				rt.sessions[s.id] = s
				opened = true
			}
			rt.mu.Unlock()
		}
		return resp
	})
	if gone {
		http.Error(w, "session not found", http.StatusNotFound)
	}
	if !opened {
		s.close()
	}
}

// open makes session id and its link, refused once the Handler is closed.
func (rt *passRoute) open(r *http.Request, id string) (*passSession, error) {
	h := rt.h
	s := &passSession{id: id, route: rt, user: h.opts.UserID, calls: map[string]*context.CancelFunc{}}
	s.used.Store(time.Now().UnixNano())
	if p, _ := orchestrator.PrincipalFrom(r.Context()); p != nil && p.UserID != "" {
		s.owner, s.user = p.UserID, p.UserID
	}
	s.life, s.end = context.WithCancel(context.Background())
	var cl *connLink
	if url, client, ok := h.opts.Upstreams.HTTPEndpoint(rt.name); ok {
		s.link = &httpLink{url: url, client: client}
	} else {
		conn, err := h.opts.Upstreams.Dial(r.Context(), rt.name)
		if err != nil {
			s.end()
			return nil, fmt.Errorf("upstream %s is unavailable: %v", rt.name, err)
		}
		cl = newConnLink(conn)
		s.link = cl
	}
	h.sessionsMu.Lock()
	defer h.sessionsMu.Unlock()
	if h.closed {
		s.end()
		s.link.close()
		return nil, errors.New("wunder is shutting down")
	}
	h.sessions[s] = true
	if cl != nil {
		// The reader ends with the connection, and the session with it.
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			cl.read()
			s.close()
		}()
	}
	return s, nil
}

// close ends the session, downstream and upstream, once.
func (s *passSession) close() {
	s.once.Do(func() {
		s.end() // first: initialize adds a session only while it lives
		s.route.mu.Lock()
		if s.route.sessions[s.id] == s {
			delete(s.route.sessions, s.id)
		}
		s.route.mu.Unlock()
		s.link.close()
		h := s.route.h
		h.sessionsMu.Lock()
		delete(h.sessions, s)
		h.sessionsMu.Unlock()
	})
}

// outFor is the headers a downstream request goes upstream with: the
// downstream's protocol version, else the session's, and its standard
// headers.
func (s *passSession) outFor(r *http.Request) outHeader {
	out := outHeader{version: r.Header.Get(headerProtocol), mcp: standardHeaders(r.Header)}
	if out.version == "" {
		s.mu.Lock()
		out.version = s.version
		s.mu.Unlock()
	}
	return out
}

// standardHeaders are the 2026-07-28 standard headers of h (Mcp-Method,
// Mcp-Name, Mcp-Param-*), nil when it has none.
func standardHeaders(h http.Header) http.Header {
	if len(h.Values(headerMethod)) == 0 {
		return nil // every request of the revision that has them has Mcp-Method
	}
	out := http.Header{}
	for k, v := range h {
		if k == headerMethod || k == headerName || strings.HasPrefix(k, headerParam) {
			out[k] = v
		}
	}
	return out
}

// accepts reads the Accept header as the SDK handler does.
func accepts(r *http.Request) (jsonOK, streamOK bool) {
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
	return jsonOK, streamOK
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
