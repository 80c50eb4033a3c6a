package a2a

import (
	"context"
	"sync"
)

// MemoryPeerIDStore is an in-memory [PeerIDStore] (tests, one process);
// its ids never expire.
type MemoryPeerIDStore struct {
	// mu guards owners.
	mu     sync.Mutex
	owners map[[3]string]string // peer, kind, id -> user
}

var _ PeerIDStore = (*MemoryPeerIDStore)(nil)

// ClaimPeerIDs implements [PeerIDStore].
func (m *MemoryPeerIDStore) ClaimPeerIDs(_ context.Context, peer, userID string, kinds, ids []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owners == nil {
		m.owners = map[[3]string]string{}
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		k := [3]string{peer, kinds[i], id}
		if o, ok := m.owners[k]; ok {
			out[i] = o
			continue
		}
		m.owners[k] = userID
		out[i] = userID
	}
	return out, nil
}

// PeerIDOwners implements [PeerIDStore].
func (m *MemoryPeerIDStore) PeerIDOwners(_ context.Context, peer, kind string, ids []string, _ string) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		if o, ok := m.owners[[3]string{peer, kind, id}]; ok {
			out[id] = o
		}
	}
	return out, nil
}
