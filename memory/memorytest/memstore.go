package memorytest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// NewMemStore returns an in-memory [memory.Store] for tests. It passes
// [RunStoreTests] with the same rules as the SQL store; its DeleteUserData
// forgets a user's memory, as a store that keeps the user's other data
// does with it.
func NewMemStore() memory.Store { return &memStore{} }

type memStore struct {
	mu  sync.Mutex
	mem struct {
		enabled map[string]bool
		records []memory.Record
		tasks   []memory.Task // in queue order
	}
}

// DeleteUserData removes the user's switch, records and tasks.
func (m *memStore) DeleteUserData(_ context.Context, userID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mem.enabled, userID)
	m.mem.records = slices.DeleteFunc(m.mem.records, func(r memory.Record) bool { return r.UserID == userID })
	m.mem.tasks = slices.DeleteFunc(m.mem.tasks, func(t memory.Task) bool { return t.UserID == userID })
	return nil
}

// MemoryEnabled implements [memory.Store].
func (m *memStore) MemoryEnabled(_ context.Context, userID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mem.enabled[userID], nil
}

// SetMemoryEnabled implements [memory.Store].
func (m *memStore) SetMemoryEnabled(_ context.Context, userID string, enabled bool, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mem.enabled == nil {
		m.mem.enabled = map[string]bool{}
	}
	m.mem.enabled[userID] = enabled
	return nil
}

// ListMemoryUsers implements [memory.Store].
func (m *memStore) ListMemoryUsers(context.Context) ([]memory.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	users := map[string]*memory.User{}
	get := func(id string) *memory.User {
		if users[id] == nil {
			users[id] = &memory.User{UserID: id}
		}
		return users[id]
	}
	for id, on := range m.mem.enabled {
		get(id).Enabled = on
	}
	for _, r := range m.mem.records {
		u := get(r.UserID)
		u.Records++
		if u.LastUpdated == nil || r.UpdatedAt.After(*u.LastUpdated) {
			at := r.UpdatedAt
			u.LastUpdated = &at
		}
	}
	out := make([]memory.User, 0, len(users))
	for _, u := range users {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b memory.User) int { return cmp.Compare(a.UserID, b.UserID) })
	return out, nil
}

func newestFirst(a, b memory.Record) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// PutMemoryRecord implements [memory.Store].
func (m *memStore) PutMemoryRecord(_ context.Context, r *memory.Record, maxRecords int) error {
	if r.ID == "" || r.UserID == "" || r.SessionID == "" {
		return fmt.Errorf("%w: memory record id, user id and session id are required", orchestrator.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r.CreatedAt, r.UpdatedAt = stamp(r.CreatedAt), stamp(cmp.Or(r.UpdatedAt, r.CreatedAt))
	m.mem.records = slices.DeleteFunc(m.mem.records, func(x memory.Record) bool {
		return x.UserID == r.UserID && x.SessionID == r.SessionID
	})
	m.mem.records = append(m.mem.records, *r)
	var mine []memory.Record
	for _, x := range m.mem.records {
		if x.UserID == r.UserID {
			mine = append(mine, x)
		}
	}
	slices.SortFunc(mine, newestFirst)
	if maxRecords > 0 && len(mine) > maxRecords {
		drop := map[string]bool{}
		for _, x := range mine[maxRecords:] {
			drop[x.ID] = true
		}
		m.mem.records = slices.DeleteFunc(m.mem.records, func(x memory.Record) bool { return drop[x.ID] })
	}
	return nil
}

// ListMemoryRecords implements [memory.Store].
func (m *memStore) ListMemoryRecords(_ context.Context, userID string) ([]memory.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []memory.Record{}
	for _, r := range m.mem.records {
		if r.UserID == userID {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, newestFirst)
	return out, nil
}

// UpdateMemoryRecord implements [memory.Store].
func (m *memStore) UpdateMemoryRecord(_ context.Context, userID, sessionID, summary string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.mem.records {
		if r.UserID == userID && r.SessionID == sessionID {
			m.mem.records[i].Summary, m.mem.records[i].UpdatedAt = summary, stamp(at)
			return nil
		}
	}
	return fmt.Errorf("%w: memory record of session %s", orchestrator.ErrNotFound, sessionID)
}

// DeleteMemoryRecords implements [memory.Store].
func (m *memStore) DeleteMemoryRecords(_ context.Context, userID, sessionID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.mem.records)
	m.mem.records = slices.DeleteFunc(m.mem.records, func(x memory.Record) bool {
		return x.UserID == userID && (sessionID == "" || x.SessionID == sessionID)
	})
	return n - len(m.mem.records), nil
}

// EnqueueMemoryTask implements [memory.Store].
func (m *memStore) EnqueueMemoryTask(_ context.Context, t *memory.Task, maxQueued int) error {
	if t.ID == "" || t.UserID == "" || t.SessionID == "" {
		return fmt.Errorf("%w: memory task id, user id and session id are required", orchestrator.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	queued := 0
	for _, x := range m.mem.tasks {
		if x.State != memory.Queued {
			continue
		}
		if x.UserID == t.UserID && x.SessionID == t.SessionID {
			*t = x
			return nil
		}
		queued++
	}
	t.QueuedAt, t.State, t.Owner, t.LeaseUntil = stamp(t.QueuedAt), memory.Queued, "", nil
	if maxQueued > 0 && queued >= maxQueued {
		now := t.QueuedAt
		t.State, t.Error, t.FinishedAt = memory.Failed, "queue full", &now
		m.mem.tasks = append(m.mem.tasks, *t)
		return fmt.Errorf("%w: the memory queue is full (%d tasks)", orchestrator.ErrBusy, maxQueued)
	}
	m.mem.tasks = append(m.mem.tasks, *t)
	return nil
}

// ClaimMemoryTask implements [memory.Store].
func (m *memStore) ClaimMemoryTask(_ context.Context, owner string, now time.Time, lease time.Duration) (*memory.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now = stamp(now)
	best := -1
	for i, x := range m.mem.tasks {
		ok := x.State == memory.Queued ||
			(x.State == memory.Running && x.LeaseUntil != nil && x.LeaseUntil.Before(now))
		if ok && (best < 0 || x.QueuedAt.Before(m.mem.tasks[best].QueuedAt)) {
			best = i
		}
	}
	if best < 0 {
		return nil, nil
	}
	t := &m.mem.tasks[best]
	until := stamp(now.Add(lease))
	started := now
	t.State, t.Owner, t.LeaseUntil, t.StartedAt = memory.Running, owner, &until, &started
	t.Attempts++
	out := *t
	return &out, nil
}

// EndMemoryTask implements [memory.Store].
func (m *memStore) EndMemoryTask(_ context.Context, t *memory.Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.mem.tasks {
		if x.ID != t.ID {
			continue
		}
		if x.State != memory.Running || x.Owner != t.Owner {
			return fmt.Errorf("%w: memory task %s is not running under %s", orchestrator.ErrConflict, t.ID, t.Owner)
		}
		fin := stamp(cmp.Or(derefTime(t.FinishedAt), time.Now()))
		m.mem.tasks[i].State, m.mem.tasks[i].Error, m.mem.tasks[i].Model = t.State, t.Error, t.Model
		m.mem.tasks[i].FinishedAt, m.mem.tasks[i].LeaseUntil = &fin, nil
		return nil
	}
	return fmt.Errorf("%w: memory task %s", orchestrator.ErrNotFound, t.ID)
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// ReleaseMemoryTask implements [memory.Store].
func (m *memStore) ReleaseMemoryTask(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.mem.tasks {
		if x.ID == id && x.State == memory.Running && x.Owner == owner {
			m.mem.tasks[i].State, m.mem.tasks[i].Owner, m.mem.tasks[i].LeaseUntil = memory.Queued, "", nil
			return nil
		}
	}
	return fmt.Errorf("%w: memory task %s held by %s", orchestrator.ErrNotFound, id, owner)
}

// ListMemoryTasks implements [memory.Store].
func (m *memStore) ListMemoryTasks(_ context.Context, f memory.TaskFilter) ([]memory.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = 100 // memory.TaskFilter's default
	}
	out := []memory.Task{}
	for i := len(m.mem.tasks) - 1; i >= 0 && len(out) < limit; i-- {
		x := m.mem.tasks[i]
		if (f.UserID == "" || x.UserID == f.UserID) && (len(f.States) == 0 || slices.Contains(f.States, x.State)) {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b memory.Task) int { return b.QueuedAt.Compare(a.QueuedAt) })
	return out, nil
}

// GetMemoryTask implements [memory.Store].
func (m *memStore) GetMemoryTask(_ context.Context, id string) (*memory.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.mem.tasks {
		if x.ID == id {
			return &x, nil
		}
	}
	return nil, fmt.Errorf("%w: memory task %s", orchestrator.ErrNotFound, id)
}
