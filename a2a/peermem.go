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

// ClaimPeerID implements [PeerIDStore].
func (m *MemoryPeerIDStore) ClaimPeerID(_ context.Context, peer, kind, id, userID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.owners == nil {
		m.owners = map[[3]string]string{}
	}
	k := [3]string{peer, kind, id}
	if o, ok := m.owners[k]; ok {
		return o, nil
	}
	m.owners[k] = userID
	return userID, nil
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
