package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wunder/wunder/mcpsession"
)

// The pass-through's sessions on every replica. A downstream session's
// record (Options.Sessions) is stored when its initialize succeeds: the
// owner, the route, the negotiated version, the client's initialize params
// and the upstream's session id. A replica that gets a request for a
// session it does not hold takes it over from the record (takeOver),
// unseen by the client:
//
//	streamable-HTTP upstream  the upstream session is reused (its id from
//	                          the record)
//	stdio or SSE upstream     a connection of this replica's own, initialized
//	                          with the client's stored params and
//	                          notifications/initialized
//
// Whichever replica serves it, a session whose upstream answers 404 (it
// forgot the session: restarted, or replicated itself) is initialized
// anew the same way, and the request goes again, once; the new upstream
// session id is stored for the other replicas. What the upstream session
// held beyond initialize (a log level, subscriptions) is not replayed.
// Only when that fails is the session ended, here and in the store, and
// the client told 404 (it starts anew).
//
// DELETE deletes the record (every replica then answers 404) and ends the
// upstream session.

// store stores the record of a session whose initialize succeeded.
func (rt *passRoute) store(ctx context.Context, s *passSession) error {
	now := time.Now()
	var st sessionState
	if hl, ok := s.link.(*httpLink); ok {
		st.Upstream = hl.upstreamID()
	}
	raw, _ := json.Marshal(st)
	ctx = context.WithoutCancel(ctx)
	err := rt.h.opts.Sessions.CreateMCPSession(ctx, &mcpsession.Session{ID: s.id, UserID: s.owner, Route: rt.name,
		ProtocolVersion: s.versionNow(), InitParams: s.initParams, State: raw, CreatedAt: now, UsedAt: now})
	if err == nil {
		rt.h.capSessions(ctx, s.owner, rt.name, func(id string) {
			rt.mu.RLock()
			old := rt.sessions[id]
			rt.mu.RUnlock()
			if old != nil {
				old.close() // its upstream session too
			}
		})
		rt.h.purge(ctx, now)
	}
	return err
}

// upstreamID is the upstream's session id, "" for none (yet).
func (l *httpLink) upstreamID() string {
	if h := l.header.Load(); h != nil {
		return h.Get(headerSession)
	}
	return ""
}

// takeOver makes the session of rec this replica's: its link, and the
// upstream session reused or initialized anew.
func (rt *passRoute) takeOver(r *http.Request, rec *mcpsession.Session) (*passSession, error) {
	rt.mu.Lock()
	if s := rt.sessions[rec.ID]; s != nil {
		rt.mu.Unlock()
		return s, nil
	}
	rt.mu.Unlock()
	s, err := rt.open(r, rec.ID)
	if err != nil {
		return nil, err
	}
	s.version, s.initParams = rec.ProtocolVersion, rec.InitParams
	if hl, ok := s.link.(*httpLink); ok {
		if up := readState(rec.State).Upstream; up != "" {
			h := initialHeader.Clone()
			h.Set(headerSession, up)
			hl.header.Store(&h)
		}
	} else if err := s.reinitialize(r.Context()); err != nil {
		s.close()
		return nil, err
	}
	rt.mu.Lock()
	other := rt.sessions[rec.ID]
	if other == nil && s.life.Err() == nil {
		rt.sessions[rec.ID] = s
	}
	rt.mu.Unlock()
	switch {
	case other != nil: // taken over by another request meanwhile: it serves
		s.detach() // the upstream session is the other's: not ended
		return other, nil
	case s.life.Err() != nil:
		return nil, errors.New("wunder is shutting down")
	}
	return s, nil
}

// reinitialize opens the session's upstream session anew: the client's
// stored initialize, then notifications/initialized, as the client sent
// them; the new upstream session id is stored.
func (s *passSession) reinitialize(ctx context.Context) error {
	rt := s.route
	if hl, ok := s.link.(*httpLink); ok {
		hl.header.Store(nil)
		hl.versioned.Store(nil)
	}
	res, err := rt.ask(ctx, s.link, outHeader{}, "initialize", s.initParams)
	if err != nil {
		return errors.New("upstream " + rt.name + " refused to open the session anew: " + err.Error())
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(res, &init); err != nil || init.ProtocolVersion == "" {
		return errors.New("upstream " + rt.name + " answered initialize without a protocol version")
	}
	s.mu.Lock()
	s.version = init.ProtocolVersion
	s.mu.Unlock()
	if err := s.link.send(ctx, outHeader{version: init.ProtocolVersion}, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return err
	}
	if hl, ok := s.link.(*httpLink); ok {
		up := hl.upstreamID()
		rt.h.setState(ctx, s.id, func(st *sessionState) { st.Upstream = up })
	}
	return nil
}

// again reports whether a request the upstream refused as of an unknown
// session may go again: the upstream session has been initialized anew.
// The caller tries again once.
func (s *passSession) again(ctx context.Context) bool {
	if s.shared || len(s.initParams) == 0 {
		return false
	}
	s.reinit.Lock()
	defer s.reinit.Unlock()
	if hl, ok := s.link.(*httpLink); ok {
		// Another replica (or request) may have opened it anew already:
		// its upstream session is in the record.
		if rec, err := s.route.h.opts.Sessions.MCPSession(ctx, s.id); err == nil {
			if up := readState(rec.State).Upstream; up != "" && up != hl.upstreamID() {
				h := initialHeader.Clone()
				h.Set(headerSession, up)
				hl.header.Store(&h)
				hl.versioned.Store(nil)
				return true
			}
		}
	}
	if err := s.reinitialize(ctx); err != nil {
		s.route.h.opts.Logger.Warn("pass-through session not re-established", "server", s.route.name, "err", err)
		return false
	}
	return true
}

// gone ends a session whose upstream session is gone, here and in the
// store, and answers 404: the client starts anew.
func (s *passSession) gone(w http.ResponseWriter, r *http.Request) {
	if err := s.route.h.opts.Sessions.CloseMCPSession(context.WithoutCancel(r.Context()), s.id); err != nil {
		s.route.h.opts.Logger.Warn("closing an MCP session in the store", "err", err)
	}
	s.close()
	http.Error(w, "session not found", http.StatusNotFound)
}

// errorAnswer is a JSON-RPC error answering id.
func errorAnswer(id json.RawMessage, e *jsonrpc.Error) []byte {
	msg, _ := json.Marshal(e.Message)
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = append(b, msg...)
	return append(b, "}}"...)
}

// use marks a request of the session being served; the func it returns
// marks its end.
func (s *passSession) use() func() {
	s.busy.Add(1)
	return func() {
		s.used.Store(time.Now().UnixNano())
		s.busy.Add(-1)
	}
}

// sweep drops the sessions no request used for localIdle, at most once a
// minute per route: a session taken over here lives on in its record and
// at other replicas, so a dropped one is detached from a reused upstream
// session, not ended (a connection of this replica's own is closed).
func (rt *passRoute) sweep() {
	now := time.Now()
	rt.mu.Lock()
	if now.Sub(rt.swept) < time.Minute {
		rt.mu.Unlock()
		return
	}
	rt.swept = now
	var idle []*passSession
	for _, s := range rt.sessions {
		if s.busy.Load() == 0 && now.Sub(time.Unix(0, s.used.Load())) > localIdle {
			idle = append(idle, s)
		}
	}
	rt.mu.Unlock()
	for _, s := range idle {
		s.detach()
	}
}

// detach ends the session here without ending its upstream session, which
// another replica may go on using.
func (s *passSession) detach() {
	if hl, ok := s.link.(*httpLink); ok {
		hl.header.Store(nil)
	}
	s.close()
}
