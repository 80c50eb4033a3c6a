package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// NewMemStore returns a Store in memory: the sessions of one process.
func NewMemStore() Store {
	return &memStore{sessions: map[string]*Session{}, streams: map[[2]string][]Event{}}
}

type memStore struct {
	mu       sync.Mutex
	sessions map[string]*Session
	streams  map[[2]string][]Event // (session, stream) -> events, oldest first
}

func clone(s *Session) *Session {
	c := *s
	c.InitParams = slices.Clone(s.InitParams)
	c.State = slices.Clone(s.State)
	return &c
}

func notFound(id string) error { return fmt.Errorf("%w: MCP session %q", orchestrator.ErrNotFound, id) }

func (m *memStore) CreateMCPSession(_ context.Context, s *Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[s.ID]; ok {
		return fmt.Errorf("%w: MCP session %q already exists", orchestrator.ErrConflict, s.ID)
	}
	c := clone(s)
	c.CreatedAt, c.UsedAt = c.CreatedAt.UTC().Truncate(time.Microsecond), c.UsedAt.UTC().Truncate(time.Microsecond)
	m.sessions[s.ID] = c
	return nil
}

func (m *memStore) MCPSession(_ context.Context, id string) (*Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, notFound(id)
	}
	return clone(s), nil
}

func (m *memStore) TouchMCPSession(_ context.Context, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return notFound(id)
	}
	if at = at.UTC().Truncate(time.Microsecond); at.After(s.UsedAt) {
		s.UsedAt = at
	}
	return nil
}

func (m *memStore) SetMCPSessionState(_ context.Context, id string, state json.RawMessage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return notFound(id)
	}
	s.State = slices.Clone(state)
	return nil
}

func (m *memStore) CloseMCPSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deleteLocked(id)
	return nil
}

func (m *memStore) deleteLocked(id string) {
	delete(m.sessions, id)
	for k := range m.streams {
		if k[0] == id {
			delete(m.streams, k)
		}
	}
}

func (m *memStore) PurgeMCPSessions(_ context.Context, before time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, s := range m.sessions {
		if s.UsedAt.Before(before) {
			m.deleteLocked(id)
			n++
		}
	}
	return n, nil
}

func (m *memStore) TrimMCPSessions(_ context.Context, userID, route string, keep int) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var mine []*Session
	for _, s := range m.sessions {
		if s.UserID == userID && s.Route == route {
			mine = append(mine, s)
		}
	}
	if len(mine) <= max(keep, 0) {
		return nil, nil
	}
	slices.SortFunc(mine, func(a, b *Session) int {
		if newer(a, b) {
			return -1
		}
		return 1
	})
	var ids []string
	for _, s := range mine[max(keep, 0):min(len(mine), max(keep, 0)+MaxTrim)] {
		m.deleteLocked(s.ID)
		ids = append(ids, s.ID)
	}
	return ids, nil
}

func (m *memStore) AppendMCPEvent(_ context.Context, sessionID, streamID string, data []byte, keep int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{sessionID, streamID}
	evs := m.streams[k]
	next := 0
	if len(evs) > 0 {
		next = evs[len(evs)-1].Index + 1
	}
	evs = append(evs, Event{Index: next, Data: slices.Clone(data)})
	if keep > 0 && len(evs) > keep {
		evs = slices.Delete(evs, 0, len(evs)-keep)
	}
	m.streams[k] = evs
	return nil
}

func (m *memStore) MCPEvents(_ context.Context, sessionID, streamID string, after int) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Event
	for _, e := range m.streams[[2]string{sessionID, streamID}] {
		if e.Index > after {
			out = append(out, Event{Index: e.Index, Data: slices.Clone(e.Data)})
		}
	}
	return out, nil
}
