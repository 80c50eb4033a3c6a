package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/orchestrator"
)

// Sessions on every replica. The session-based revisions of /wunder/mcp
// (2025-11-25 and older) are served by sessionFront, wunder's own small
// stateful handler over go-sdk's exported pieces: a session is an
// mcp.StreamableServerTransport connected to the one *mcp.Server, as in
// the SDK's StreamableHTTPHandler, but its record lives in the store
// (Options.Sessions, package mcpsession) and not only in this process:
//
//	initialize        a local session; the record (owner, negotiated
//	                  version, the client's initialize params) is stored
//	                  before the answer goes out (sessionMiddleware)
//	a session's POST/GET   the record read: gone or idle past the timeout
//	                  is 404, another user's is 403; a session this
//	                  replica does not hold is connected here with the
//	                  stored state (ServerSessionState), unseen by the client
//	logging/setLevel  stored in the record's state
//	DELETE            the record deleted (every replica then answers 404)
//	                  and the local session closed
//
// Each stream's events go to the store (storeEvents), so that a client
// resumes a response stream with Last-Event-ID on any replica; the
// standalone GET stream's events stay in the memory of the replica that
// holds the GET. A session this replica took over and no one used for a
// while is dropped here (its record stays): localIdle.

// Session defaults.
const (
	// DefaultSessionTimeout is Options.SessionTimeout's default.
	DefaultSessionTimeout = 24 * time.Hour
	// localIdle is how long this replica keeps a session no request used.
	localIdle = 10 * time.Minute
	// touchEvery is how stale the record's UsedAt may be before a request
	// writes it anew (at most one write a minute per session).
	touchEvery = time.Minute
	// purgeEvery is how often a replica deletes the records idle past the
	// timeout.
	purgeEvery = 10 * time.Minute
	// streamKeep is how many of a stream's newest events are kept for
	// resumption.
	streamKeep = 1024
)

// sessionState is a record's mutable state (mcpsession.Session.State).
type sessionState struct {
	// LogLevel is the client's logging/setLevel (/wunder/mcp).
	LogLevel string `json:"logLevel,omitempty"`
	// Upstream is the pass-through's upstream session id.
	Upstream string `json:"upstream,omitempty"`
	// Elicits are the approvals being asked with elicitation/create, by
	// the request's wire id (elicit_replicas.go).
	Elicits map[string]pendingElicit `json:"elicits,omitempty"`
}

func readState(raw json.RawMessage) sessionState {
	var st sessionState
	_ = json.Unmarshal(raw, &st)
	return st
}

// sessionFront serves /wunder/mcp's session-based requests.
type sessionFront struct {
	h      *Handler
	store  mcpsession.Store
	events mcp.EventStore
	ttl    time.Duration
	// probe is an SDK handler that serves no session: it checks a
	// request's Mcp-Protocol-Version and gives back the request's context
	// with the version on it, which the transport reads (stampVersion).
	probe http.Handler

	mu     sync.Mutex
	local  map[string]*localSession
	closed bool
}

// localSession is a session this replica holds.
type localSession struct {
	id, owner string
	ss        *mcp.ServerSession
	t         *mcp.StreamableServerTransport
	conn      *replicaConn
	// guarded by sessionFront.mu:
	refs  int
	timer *time.Timer
}

func newSessionFront(h *Handler) *sessionFront {
	f := &sessionFront{h: h, store: h.opts.Sessions, ttl: h.opts.SessionTimeout, local: map[string]*localSession{}}
	f.events = &storeEvents{store: f.store, mem: mcp.NewMemoryEventStore(nil)}
	f.probe = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if c, ok := r.Context().Value(probeKey{}).(*context.Context); ok {
			*c = r.Context()
		}
		return nil
	}, &mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, MaxRequestBodyBytes: -1})
	return f
}

type probeKey struct{}

// stampVersion checks r's Mcp-Protocol-Version as the SDK handler does and
// returns r with the context the SDK's transport expects (the version on
// it); false when the version is refused, the answer written. The SDK puts
// the version on the context under a key of its own: the probe, an SDK
// handler asked to open a session without a server, hands that context
// back before it fails.
func (f *sessionFront) stampVersion(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	var got context.Context
	probe := &http.Request{Method: http.MethodPost, URL: r.URL, Host: r.Host, Body: http.NoBody,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}}
	if v := r.Header.Values(headerProtocol); len(v) > 0 {
		probe.Header[headerProtocol] = v
	}
	mine := context.WithValue(r.Context(), probeKey{}, &got)
	rec := &recorder{header: http.Header{}}
	f.probe.ServeHTTP(rec, probe.WithContext(mine))
	if got == nil || got == mine {
		// The version was refused: relay the SDK's answer.
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.code)
		_, _ = w.Write(rec.body.Bytes())
		return nil, false
	}
	return r.WithContext(got), true
}

// recorder keeps a response.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (f *sessionFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.h.opts.HostsChecked && rebinding(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	limit := f.h.opts.MaxBodyBytes
	if limit == 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	if r.Body != nil && limit > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	r, ok := f.stampVersion(w, r)
	if !ok {
		return
	}
	switch r.Method {
	case http.MethodGet:
		if _, streamOK := accepts(r); !streamOK {
			http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
			return
		}
		if s := f.lookup(w, r); s != nil {
			s.t.ServeHTTP(w, r)
		}
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
			return
		}
		if jsonOK, streamOK := accepts(r); !jsonOK || !streamOK {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
			return
		}
		if r.Header.Get(headerSession) == "" {
			f.open(w, r)
			return
		}
		if s := f.lookup(w, r); s != nil {
			f.begin(s)
			defer f.end(s)
			if f.answeredElsewhere(w, r, s) || f.servedTask(w, r, s) {
				return
			}
			s.t.ServeHTTP(w, r)
		}
	case http.MethodDelete:
		if s := f.lookup(w, r); s != nil {
			if err := f.store.CloseMCPSession(r.Context(), s.id); err != nil {
				f.h.opts.Logger.Error("closing an MCP session in the store", "err", err)
				http.Error(w, "the session could not be closed: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
			f.drop(s)
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// open serves a POST without a session id: a new session, kept once its
// initialize stored the record (sessionMiddleware), closed otherwise.
func (f *sessionFront) open(w http.ResponseWriter, r *http.Request) {
	t := &replicaTransport{StreamableServerTransport: &mcp.StreamableServerTransport{SessionID: rand.Text(), EventStore: f.events}, h: f.h}
	// The request's context, as the SDK handler passes it: the session
	// detaches from it.
	ss, err := f.h.server.Connect(r.Context(), t, nil)
	if err != nil {
		f.h.opts.Logger.Error("connecting an MCP session", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	s := &localSession{id: t.SessionID, ss: ss, t: t.StreamableServerTransport, conn: t.conn, owner: tokenUser(r)}
	if !f.add(s) {
		_ = ss.Close()
		http.Error(w, "wunder is shutting down", http.StatusServiceUnavailable)
		return
	}
	f.begin(s)
	defer f.end(s)
	t.ServeHTTP(w, r)
	if _, err := f.store.MCPSession(context.WithoutCancel(r.Context()), s.id); err != nil {
		f.drop(s) // not initialized, or its record could not be stored
	}
}

// tokenUser is the user of the request's principal, as the SDK reads it.
func tokenUser(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// lookup is the session the request names, held here or taken over from
// its record; nil when there is none (404: unknown, deleted, idle past
// the timeout) or it is not the caller's (403), the answer written.
func (f *sessionFront) lookup(w http.ResponseWriter, r *http.Request) *localSession {
	sid := r.Header.Get(headerSession)
	if sid == "" {
		http.Error(w, "Bad Request: "+r.Method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
		return nil
	}
	rec, status := f.h.record(r, sid, "")
	if status != 0 {
		if status == http.StatusNotFound {
			f.mu.Lock()
			s := f.local[sid]
			f.mu.Unlock()
			if s != nil {
				f.drop(s) // ended on another replica, or expired
			}
		}
		http.Error(w, sessionProblem[status], status)
		return nil
	}
	f.mu.Lock()
	s := f.local[sid]
	f.mu.Unlock()
	if s != nil {
		return s
	}
	s, err := f.takeOver(r, rec)
	if err != nil {
		f.h.opts.Logger.Error("taking over an MCP session", "err", err)
		http.Error(w, "the session could not be resumed here: "+err.Error(), http.StatusInternalServerError)
		return nil
	}
	return s
}

// sessionProblem says why a session's request was refused, by status.
var sessionProblem = map[int]string{
	http.StatusNotFound:           "session not found",
	http.StatusForbidden:          "session user mismatch",
	http.StatusServiceUnavailable: "the session store is unavailable",
}

// record reads the record of session sid on route and checks it for the
// request: 0 and the record, else the status to answer (404, 403, 503).
// It deletes a record idle past the timeout, and moves UsedAt on.
func (h *Handler) record(r *http.Request, sid, route string) (*mcpsession.Session, int) {
	ctx := r.Context()
	store := h.opts.Sessions
	rec, err := store.MCPSession(ctx, sid)
	if errors.Is(err, orchestrator.ErrNotFound) || (err == nil && rec.Route != route) {
		return nil, http.StatusNotFound
	}
	if err != nil {
		h.opts.Logger.Error("reading an MCP session", "err", err)
		return nil, http.StatusServiceUnavailable
	}
	now := time.Now()
	if rec.Expired(now, h.opts.SessionTimeout) {
		_ = store.CloseMCPSession(context.WithoutCancel(ctx), sid)
		return nil, http.StatusNotFound
	}
	if rec.UserID != "" {
		if p, _ := orchestrator.PrincipalFrom(ctx); p == nil || p.UserID != rec.UserID {
			return nil, http.StatusForbidden
		}
	}
	if now.Sub(rec.UsedAt) > touchEvery {
		if err := store.TouchMCPSession(context.WithoutCancel(ctx), sid, now); err != nil {
			h.opts.Logger.Warn("touching an MCP session", "err", err)
		}
	}
	return rec, 0
}

// takeOver connects a local session with the record's state.
func (f *sessionFront) takeOver(r *http.Request, rec *mcpsession.Session) (*localSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.local[rec.ID]; s != nil { // taken over by a request meanwhile
		return s, nil
	}
	if f.closed {
		return nil, errors.New("wunder is shutting down")
	}
	init := new(mcp.InitializeParams)
	if err := json.Unmarshal(rec.InitParams, init); err != nil {
		return nil, fmt.Errorf("stored initialize params: %w", err)
	}
	state := &mcp.ServerSessionState{InitializeParams: init, NegotiatedProtocolVersion: rec.ProtocolVersion,
		//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 from 2026-07-28) is part of the session revisions served here
		LogLevel: mcp.LoggingLevel(readState(rec.State).LogLevel)}
	t := &replicaTransport{StreamableServerTransport: &mcp.StreamableServerTransport{SessionID: rec.ID, EventStore: f.events}, h: f.h}
	ss, err := f.h.server.Connect(r.Context(), t, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		return nil, err
	}
	s := &localSession{id: rec.ID, owner: rec.UserID, ss: ss, t: t.StreamableServerTransport, conn: t.conn}
	f.local[s.id] = s
	f.idleLocked(s)
	return s, nil
}

// add registers a new local session, refused once closed.
func (f *sessionFront) add(s *localSession) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.local[s.id] = s
	return true
}

// begin and end bracket a POST of s: a session is not dropped for
// idleness while a request of it runs.
func (f *sessionFront) begin(s *localSession) {
	f.mu.Lock()
	s.refs++
	if s.timer != nil {
		s.timer.Stop()
	}
	f.mu.Unlock()
}

func (f *sessionFront) end(s *localSession) {
	f.mu.Lock()
	s.refs--
	if s.refs == 0 {
		f.idleLocked(s)
	}
	f.mu.Unlock()
}

// idleLocked (re)starts the timer that drops s here once idle.
func (f *sessionFront) idleLocked(s *localSession) {
	idle := localIdle
	if f.ttl > 0 && f.ttl < idle {
		idle = f.ttl
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(idle, func() {
			f.mu.Lock()
			busy := s.refs > 0
			f.mu.Unlock()
			if !busy {
				f.drop(s)
			}
		})
		return
	}
	s.timer.Reset(idle)
}

// drop closes the local session s; its record is not touched.
func (f *sessionFront) drop(s *localSession) {
	f.mu.Lock()
	if f.local[s.id] == s {
		delete(f.local, s.id)
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	f.mu.Unlock()
	_ = s.ss.Close()
}

// close drops every local session (the records stay: other replicas
// serve them) and refuses new ones.
func (f *sessionFront) close() {
	f.mu.Lock()
	f.closed = true
	live := make([]*localSession, 0, len(f.local))
	for _, s := range f.local {
		live = append(live, s)
	}
	f.mu.Unlock()
	for _, s := range live {
		f.drop(s)
	}
}

// created stores the record of a session whose initialize succeeded; an
// error fails the initialize.
func (f *sessionFront) created(ctx context.Context, ss *mcp.ServerSession, user string, params *mcp.InitializeParams, version string) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	now := time.Now()
	ctx = context.WithoutCancel(ctx)
	rec := &mcpsession.Session{ID: ss.ID(), UserID: user, ProtocolVersion: version, InitParams: raw,
		State: json.RawMessage(`{}`), CreatedAt: now, UsedAt: now}
	if err := f.store.CreateMCPSession(ctx, rec); err != nil {
		return fmt.Errorf("storing the session: %w", err)
	}
	f.h.capSessions(ctx, user, "", func(id string) {
		f.mu.Lock()
		s := f.local[id]
		f.mu.Unlock()
		if s != nil {
			f.drop(s)
		}
	})
	f.h.purge(ctx, now)
	return nil
}

// DefaultMaxSessionsPerUser is Options.MaxSessionsPerUser's default.
const DefaultMaxSessionsPerUser = 64

// capSessions ends user's least recently used sessions on route beyond
// Options.MaxSessionsPerUser, in the store (every replica then answers
// them 404, and the client initializes anew) and here, through drop: a
// user who opens session after session cannot fill the store and the
// replicas' memory, nor hold an upstream session each. Sessions of no
// user (the API key, the anonymous operator) are not capped.
func (h *Handler) capSessions(ctx context.Context, user, route string, drop func(id string)) {
	if user == "" {
		return
	}
	ids, err := h.opts.Sessions.TrimMCPSessions(ctx, user, route, h.opts.MaxSessionsPerUser)
	if err != nil {
		h.opts.Logger.Warn("MCP sessions over the cap not ended", "user_id", user, "route", route, "err", err)
		return
	}
	for _, id := range ids {
		drop(id)
	}
	if len(ids) > 0 {
		h.opts.Logger.Info("MCP sessions over the cap ended", "user_id", user, "route", route,
			"ended", len(ids), "max_sessions_per_user", h.opts.MaxSessionsPerUser)
	}
}

// purge deletes the records idle past the timeout, at most every
// purgeEvery per process.
func (h *Handler) purge(ctx context.Context, now time.Time) {
	if h.opts.SessionTimeout <= 0 {
		return
	}
	h.purgeMu.Lock()
	due := now.Sub(h.lastPurge) > purgeEvery
	if due {
		h.lastPurge = now
	}
	h.purgeMu.Unlock()
	if !due {
		return
	}
	if _, err := h.opts.Sessions.PurgeMCPSessions(ctx, now.Add(-h.opts.SessionTimeout)); err != nil {
		h.opts.Logger.Warn("purging idle MCP sessions", "err", err)
	}
}

// setState changes a stored session's state.
func (h *Handler) setState(ctx context.Context, sid string, change func(*sessionState)) {
	ctx = context.WithoutCancel(ctx)
	rec, err := h.opts.Sessions.MCPSession(ctx, sid)
	if err == nil {
		st := readState(rec.State)
		change(&st)
		raw, _ := json.Marshal(st)
		err = h.opts.Sessions.SetMCPSessionState(ctx, sid, raw)
	}
	if err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
		h.opts.Logger.Warn("storing an MCP session's state", "err", err)
	}
}

// sessionMiddleware keeps the records of /wunder/mcp's sessions: stored
// when initialize succeeds (before its answer goes out, so that the
// client's next request finds it on any replica), the log level when
// logging/setLevel succeeds. Sessionless requests (no session id) pass.
func (h *Handler) sessionMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || h.front == nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil || ss.ID() == "" {
			return res, err
		}
		switch method {
		case "initialize":
			p, _ := req.GetParams().(*mcp.InitializeParams)
			r, _ := res.(*mcp.InitializeResult)
			if p == nil || r == nil {
				break
			}
			user := ""
			if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
				user = ex.TokenInfo.UserID
			}
			if err := h.front.created(ctx, ss, user, p, r.ProtocolVersion); err != nil {
				h.opts.Logger.Error("storing an MCP session", "err", err)
				return nil, internalError("the session could not be stored: " + err.Error())
			}
		case "logging/setLevel":
			//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 from 2026-07-28) is part of the session revisions served here
			if p, _ := req.GetParams().(*mcp.SetLoggingLevelParams); p != nil {
				h.setState(ctx, ss.ID(), func(st *sessionState) { st.LogLevel = string(p.Level) })
			}
		}
		return res, err
	}
}

// storeEvents is the EventStore of /wunder/mcp's sessions: the events of
// a request's stream go to the store, readable by every replica; those of
// the standalone stream ("", served by the replica holding the GET, whose
// indexes only that replica's session counts) to memory.
type storeEvents struct {
	store mcpsession.Store
	mem   *mcp.MemoryEventStore
}

func (e *storeEvents) Open(ctx context.Context, sessionID, streamID string) error {
	if streamID == "" {
		return e.mem.Open(ctx, sessionID, streamID)
	}
	return nil
}

func (e *storeEvents) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if streamID == "" {
		return e.mem.Append(ctx, sessionID, streamID, data)
	}
	// A message written after its request was cancelled is still kept for
	// a client that resumes.
	return e.store.AppendMCPEvent(context.WithoutCancel(ctx), sessionID, streamID, data, streamKeep)
}

func (e *storeEvents) After(ctx context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	if streamID == "" {
		return e.mem.After(ctx, sessionID, streamID, index)
	}
	return func(yield func([]byte, error) bool) {
		evs, err := e.store.MCPEvents(ctx, sessionID, streamID, index)
		if err == nil && len(evs) > 0 && evs[0].Index != index+1 {
			err = fmt.Errorf("events %d to %d of stream %s were dropped", index+1, evs[0].Index-1, streamID)
		}
		if err != nil {
			yield(nil, err)
			return
		}
		for _, ev := range evs {
			if !yield(ev.Data, nil) {
				return
			}
		}
	}
}

// SessionClosed forgets the memory's events only: a session closed here
// may live on at another replica (its record and events are deleted with
// the record, on DELETE).
func (e *storeEvents) SessionClosed(ctx context.Context, sessionID string) error {
	return e.mem.SessionClosed(ctx, sessionID)
}
