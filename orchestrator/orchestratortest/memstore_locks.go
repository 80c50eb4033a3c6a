package orchestratortest

// The in-memory store's locks and tool logs.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (m *memStore) AppendToolLog(_ context.Context, l *orchestrator.ToolLog) error {
	if l == nil {
		return fmt.Errorf("%w: tool log is nil", orchestrator.ErrInvalidArgument)
	}
	l.CreatedAt = stamp(l.CreatedAt)
	c := storedToolLog(*l)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastLogID++
	c.ID = m.lastLogID
	m.toolLogs = append(m.toolLogs, c)
	return nil
}

func checkLockArgs(key, owner string, ttl time.Duration) error {
	if key == "" || owner == "" || ttl <= 0 {
		return fmt.Errorf("%w: lock needs a key, an owner and a positive ttl (key %q, owner %q, ttl %v)",
			orchestrator.ErrInvalidArgument, key, owner, ttl)
	}
	return nil
}

func (m *memStore) AcquireLock(_ context.Context, key, owner string, ttl time.Duration) error {
	if err := checkLockArgs(key, owner, ttl); err != nil {
		return err
	}
	key, owner = txt(key), txt(owner)
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.locks[key]; ok && l.owner != owner && !l.expires.Before(now) {
		return fmt.Errorf("%w: lock %s is held", orchestrator.ErrBusy, key)
	}
	m.locks[key] = memLock{owner: owner, expires: now.Add(ttl)}
	return nil
}

func (m *memStore) RenewLock(_ context.Context, key, owner string, ttl time.Duration) error {
	if err := checkLockArgs(key, owner, ttl); err != nil {
		return err
	}
	key, owner = txt(key), txt(owner)
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.locks[key]; !ok || l.owner != owner {
		return fmt.Errorf("%w: lock %s is not held by %s", orchestrator.ErrNotFound, key, owner)
	}
	m.locks[key] = memLock{owner: owner, expires: time.Now().Add(ttl)}
	return nil
}

func (m *memStore) ReleaseLock(_ context.Context, key, owner string) error {
	key, owner = txt(key), txt(owner)
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.locks[key]; ok && l.owner == owner {
		delete(m.locks, key)
	}
	return nil
}

func (m *memStore) ReleaseLocksOf(_ context.Context, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, l := range m.locks {
		if l.owner == owner {
			delete(m.locks, k)
		}
	}
	return nil
}

func (m *memStore) LockOwner(_ context.Context, key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[txt(key)]
	if !ok || l.expires.Before(time.Now()) {
		return "", fmt.Errorf("%w: lock %s", orchestrator.ErrNotFound, key)
	}
	return l.owner, nil
}

func (m *memStore) LockHeld(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.locks[txt(key)]
	return ok, nil
}

func (m *memStore) ToolCallStats(_ context.Context, f orchestrator.ToolLogFilter) ([]orchestrator.ToolCallStat, error) {
	tool, user := txt(f.Tool), txt(f.UserID)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []orchestrator.ToolCallStat
	for _, l := range m.toolLogs {
		if (tool == "" || l.Tool == tool) && (user == "" || l.UserID == user) && (f.Since.IsZero() || !l.CreatedAt.Before(stamp(f.Since))) {
			out = append(out, orchestrator.ToolCallStat{Tool: l.Tool, UserID: l.UserID, IsError: l.IsError, DurationMS: l.DurationMS, CreatedAt: l.CreatedAt})
		}
	}
	slices.SortStableFunc(out, func(a, b orchestrator.ToolCallStat) int { return b.CreatedAt.Compare(a.CreatedAt) })
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
