package usertools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
)

// maxDiscovery bounds the background opening and first tools/list of a
// server (a listing waits only Options.DiscoveryTimeout of it).
const maxDiscovery = 30 * time.Second

var (
	errDisabled = errors.New("the server is disabled")
	errRetired  = errors.New("the server's configuration changed or was removed")
)

// ownerServer names a server in the pool: one configuration per owner and
// name at a time.
type ownerServer struct{ owner, name string }

// entry is one pooled connection: an owner's server under one
// configuration (hash).
type entry struct {
	set     *Set
	key     ownerServer
	hash    string
	config  json.RawMessage
	secrets []string
	// retry entries replace a failed one; listings do not wait for them.
	retry bool
	// done is closed once opening and the first discovery have ended.
	done chan struct{}

	// mu guards the fields below; never held across I/O.
	mu       sync.Mutex
	conn     Conn
	err      error // of opening or the first discovery
	finished time.Time
	lastUsed time.Time
	inflight int
	retired  bool // out of the pool; closed once no call is in flight
}

func hashOf(config json.RawMessage) string {
	sum := sha256.Sum256(config)
	return hex.EncodeToString(sum[:12])
}

// get returns the pooled entry of owner's server, starting one when there
// is none, when the configuration changed (the old one is retired) or when
// a failed one is due for a retry. Nil once the Set is closed.
func (s *Set) get(owner string, srv toolconfig.MCPServer) *entry {
	key, hash, now := ownerServer{owner, srv.Name}, hashOf(srv.Config), s.now()
	var old *entry
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	e := s.pool[key]
	retry := false
	switch {
	case e == nil:
	case e.hash != hash:
		old, e = e, nil
	case e.dueForRetry(now):
		old, e, retry = e, nil, true
	}
	if e == nil {
		e = &entry{set: s, key: key, hash: hash, config: srv.Config, secrets: secretsOf(srv.Config),
			retry: retry, done: make(chan struct{}), lastUsed: now}
		s.pool[key] = e
		s.wg.Add(1)
		go e.open()
	}
	s.mu.Unlock()
	e.touch(now)
	if old != nil {
		old.retire()
	}
	return e
}

// open connects and runs the first discovery, in a goroutine of the Set.
func (e *entry) open() {
	s := e.set
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.base, max(s.opts.DiscoveryTimeout, maxDiscovery))
	defer cancel()
	err := e.connect(ctx)
	e.mu.Lock()
	e.err, e.finished = err, s.now()
	retired := e.retired
	e.mu.Unlock()
	close(e.done)
	if err != nil && !errors.Is(err, errDisabled) && !retired {
		s.log.Warn("user mcp server unavailable; its tools are left out", "owner", e.key.owner, "server", e.key.name,
			"retry_in", RetryInterval, "err", redact(err.Error(), e.secrets))
	}
}

func (e *entry) connect(ctx context.Context) error {
	s := e.set
	info, err := s.conn.Check(ctx, e.config)
	if err != nil {
		return err
	}
	if !info.Enabled {
		return errDisabled
	}
	c, err := s.conn.Open(ctx, e.config)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.retired {
		e.mu.Unlock()
		s.goClose(c)
		return errRetired
	}
	e.conn = c
	e.mu.Unlock()
	_, err = c.Tools(ctx)
	return err
}

// dueForRetry reports whether the entry failed (not by being disabled)
// at least RetryInterval ago.
func (e *entry) dueForRetry(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err != nil && !errors.Is(e.err, errDisabled) && now.Sub(e.finished) >= RetryInterval
}

func (e *entry) touch(now time.Time) {
	e.mu.Lock()
	e.lastUsed = now
	e.mu.Unlock()
}

// acquire counts a call in; false once the entry is retired.
func (e *entry) acquire() (Conn, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.retired || e.conn == nil {
		return nil, false
	}
	e.inflight++
	e.lastUsed = e.set.now()
	return e.conn, true
}

// release counts a call out, closing a retired entry's connection after
// its last call.
func (e *entry) release() {
	e.mu.Lock()
	e.inflight--
	c := e.takeIfIdle()
	e.mu.Unlock()
	if c != nil {
		e.set.goClose(c)
	}
}

// retire takes the entry out of use; its connection closes now, or after
// the calls in flight.
func (e *entry) retire() {
	e.mu.Lock()
	e.retired = true
	c := e.takeIfIdle()
	e.mu.Unlock()
	if c != nil {
		e.set.goClose(c)
	}
}

// takeIfIdle returns the connection to close, if the entry is retired
// and no call is in flight; e.mu is held.
func (e *entry) takeIfIdle() Conn {
	if !e.retired || e.inflight > 0 || e.conn == nil {
		return nil
	}
	c := e.conn
	e.conn = nil
	return c
}

// goClose closes c in a goroutine of the Set (a stdio child takes a
// while to stop).
func (s *Set) goClose(c Conn) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := c.Close(); err != nil {
			s.log.Debug("user mcp connection not closed cleanly", "err", err)
		}
	}()
}

// sweep retires the entries no listing or call used for IdleTTL.
func (s *Set) sweep() {
	now := s.now()
	var idle []*entry
	s.mu.Lock()
	for k, e := range s.pool {
		e.mu.Lock()
		stale := e.inflight == 0 && now.Sub(e.lastUsed) >= s.opts.IdleTTL
		e.mu.Unlock()
		if stale {
			idle = append(idle, e)
			delete(s.pool, k)
		}
	}
	s.mu.Unlock()
	for _, e := range idle {
		e.retire()
	}
}

// forget retires the owner's entries of servers that are no longer in the
// owner's (usable) configuration c.
func (s *Set) forget(owner string, servers []toolconfig.MCPServer) {
	keep := map[string]bool{}
	for _, sv := range servers {
		keep[sv.Name] = true
	}
	var gone []*entry
	s.mu.Lock()
	for k, e := range s.pool {
		if k.owner == owner && !keep[k.name] {
			gone = append(gone, e)
			delete(s.pool, k)
		}
	}
	s.mu.Unlock()
	for _, e := range gone {
		e.retire()
	}
}

// discover returns the tools of each wanted server, waiting for first
// discoveries under one deadline of Options.DiscoveryTimeout; a server
// not discovered by then (or failed) gives none.
func (s *Set) discover(ctx context.Context, wants []want, viewer string) [][]orchestrator.Tool {
	entries := make([]*entry, len(wants))
	for i, w := range wants {
		entries[i] = s.get(w.owner, w.srv)
	}
	expired := make(chan struct{})
	t := time.AfterFunc(s.opts.DiscoveryTimeout, func() { close(expired) })
	defer t.Stop()
	out := make([][]orchestrator.Tool, len(wants))
	for i, e := range entries {
		if e == nil {
			continue
		}
		if !e.retry {
			select {
			case <-e.done:
			case <-expired:
			case <-ctx.Done():
			}
		}
		select {
		case <-e.done:
		default:
			if !e.retry {
				s.log.WarnContext(ctx, "user mcp server still being discovered; its tools are left out of this listing",
					"owner", e.key.owner, "server", e.key.name, "discovery_timeout", s.opts.DiscoveryTimeout)
			}
			continue
		}
		out[i] = e.tools(ctx, viewer)
	}
	return out
}

// tools wraps the connection's tools as owner@server@tool, seen by
// viewer.
func (e *entry) tools(ctx context.Context, viewer string) []orchestrator.Tool {
	e.mu.Lock()
	c := e.conn
	e.mu.Unlock()
	if c == nil {
		return nil
	}
	inner, err := c.Tools(ctx)
	if err != nil && len(inner) == 0 {
		return nil
	}
	out := make([]orchestrator.Tool, 0, len(inner))
	for _, t := range inner {
		if ut := newUserTool(e, t, viewer); ut != nil {
			out = append(out, ut)
		}
	}
	return out
}
