package a2a

import (
	"context"
	"fmt"
	"sync"

	"github.com/wunder/wunder/orchestrator"
)

// MemoryPushStore is an in-memory [PushStore] (tests, single process).
type MemoryPushStore struct {
	// mu guards cfgs.
	mu   sync.Mutex
	cfgs map[string][]*PushConfig // by task, oldest first
}

var _ PushStore = (*MemoryPushStore)(nil)

// SavePushConfig implements [PushStore].
func (m *MemoryPushStore) SavePushConfig(_ context.Context, c *PushConfig) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cfgs == nil {
		m.cfgs = map[string][]*PushConfig{}
	}
	cp := *c
	list := m.cfgs[c.TaskID]
	for i, old := range list {
		if old.ID == c.ID {
			list[i] = &cp
			return nil
		}
	}
	m.cfgs[c.TaskID] = append(list, &cp)
	return nil
}

// GetPushConfig implements [PushStore].
func (m *MemoryPushStore) GetPushConfig(_ context.Context, taskID, id string) (*PushConfig, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.cfgs[taskID] {
		if c.ID == id {
			cp := *c
			return &cp, nil
		}
	}
	return nil, fmt.Errorf("%w: push config %s/%s", orchestrator.ErrNotFound, taskID, id)
}

// ListPushConfigs implements [PushStore].
func (m *MemoryPushStore) ListPushConfigs(_ context.Context, taskID string) ([]*PushConfig, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*PushConfig, 0, len(m.cfgs[taskID]))
	for _, c := range m.cfgs[taskID] {
		cp := *c
		out = append(out, &cp)
	}
	return out, nil
}

// DeletePushConfig implements [PushStore].
func (m *MemoryPushStore) DeletePushConfig(_ context.Context, taskID, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.cfgs[taskID]
	for i, c := range list {
		if c.ID == id {
			m.cfgs[taskID] = append(list[:i:i], list[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("%w: push config %s/%s", orchestrator.ErrNotFound, taskID, id)
}
