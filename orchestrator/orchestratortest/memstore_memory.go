package orchestratortest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.MemoryStore = (*memStore)(nil)

// memMemory is the memory part of memStore, guarded by memStore.mu.
type memMemory struct {
	enabled map[string]bool
	records []orchestrator.MemoryRecord
	tasks   []orchestrator.MemoryTask // in queue order
}

// MemoryEnabled implements [orchestrator.MemoryStore].
func (m *memStore) MemoryEnabled(_ context.Context, userID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mem.enabled[userID], nil
}

// SetMemoryEnabled implements [orchestrator.MemoryStore].
func (m *memStore) SetMemoryEnabled(_ context.Context, userID string, enabled bool, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mem.enabled == nil {
		m.mem.enabled = map[string]bool{}
	}
	m.mem.enabled[userID] = enabled
	return nil
}

// ListMemoryUsers implements [orchestrator.MemoryStore].
func (m *memStore) ListMemoryUsers(context.Context) ([]orchestrator.MemoryUser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	users := map[string]*orchestrator.MemoryUser{}
	get := func(id string) *orchestrator.MemoryUser {
		if users[id] == nil {
			users[id] = &orchestrator.MemoryUser{UserID: id}
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
	out := make([]orchestrator.MemoryUser, 0, len(users))
	for _, u := range users {
		out = append(out, *u)
	}
	slices.SortFunc(out, func(a, b orchestrator.MemoryUser) int { return cmp.Compare(a.UserID, b.UserID) })
	return out, nil
}

func newestFirst(a, b orchestrator.MemoryRecord) int {
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// PutMemoryRecord implements [orchestrator.MemoryStore].
func (m *memStore) PutMemoryRecord(_ context.Context, r *orchestrator.MemoryRecord, maxRecords int) error {
	if r.ID == "" || r.UserID == "" || r.SessionID == "" {
		return fmt.Errorf("%w: memory record id, user id and session id are required", orchestrator.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r.CreatedAt, r.UpdatedAt = stamp(r.CreatedAt), stamp(cmp.Or(r.UpdatedAt, r.CreatedAt))
	m.mem.records = slices.DeleteFunc(m.mem.records, func(x orchestrator.MemoryRecord) bool {
		return x.UserID == r.UserID && x.SessionID == r.SessionID
	})
	m.mem.records = append(m.mem.records, *r)
	var mine []orchestrator.MemoryRecord
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
		m.mem.records = slices.DeleteFunc(m.mem.records, func(x orchestrator.MemoryRecord) bool { return drop[x.ID] })
	}
	return nil
}

// ListMemoryRecords implements [orchestrator.MemoryStore].
func (m *memStore) ListMemoryRecords(_ context.Context, userID string) ([]orchestrator.MemoryRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []orchestrator.MemoryRecord{}
	for _, r := range m.mem.records {
		if r.UserID == userID {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, newestFirst)
	return out, nil
}

// UpdateMemoryRecord implements [orchestrator.MemoryStore].
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

// DeleteMemoryRecords implements [orchestrator.MemoryStore].
func (m *memStore) DeleteMemoryRecords(_ context.Context, userID, sessionID string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.mem.records)
	m.mem.records = slices.DeleteFunc(m.mem.records, func(x orchestrator.MemoryRecord) bool {
		return x.UserID == userID && (sessionID == "" || x.SessionID == sessionID)
	})
	return n - len(m.mem.records), nil
}

// EnqueueMemoryTask implements [orchestrator.MemoryStore].
func (m *memStore) EnqueueMemoryTask(_ context.Context, t *orchestrator.MemoryTask, maxQueued int) error {
	if t.ID == "" || t.UserID == "" || t.SessionID == "" {
		return fmt.Errorf("%w: memory task id, user id and session id are required", orchestrator.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	queued := 0
	for _, x := range m.mem.tasks {
		if x.State != orchestrator.MemoryQueued {
			continue
		}
		if x.UserID == t.UserID && x.SessionID == t.SessionID {
			*t = x
			return nil
		}
		queued++
	}
	t.QueuedAt, t.State, t.Owner, t.LeaseUntil = stamp(t.QueuedAt), orchestrator.MemoryQueued, "", nil
	if maxQueued > 0 && queued >= maxQueued {
		now := t.QueuedAt
		t.State, t.Error, t.FinishedAt = orchestrator.MemoryFailed, "queue full", &now
		m.mem.tasks = append(m.mem.tasks, *t)
		return fmt.Errorf("%w: the memory queue is full (%d tasks)", orchestrator.ErrBusy, maxQueued)
	}
	m.mem.tasks = append(m.mem.tasks, *t)
	return nil
}

// ClaimMemoryTask implements [orchestrator.MemoryStore].
func (m *memStore) ClaimMemoryTask(_ context.Context, owner string, now time.Time, lease time.Duration) (*orchestrator.MemoryTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now = stamp(now)
	best := -1
	for i, x := range m.mem.tasks {
		ok := x.State == orchestrator.MemoryQueued ||
			(x.State == orchestrator.MemoryRunning && x.LeaseUntil != nil && x.LeaseUntil.Before(now))
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
	t.State, t.Owner, t.LeaseUntil, t.StartedAt = orchestrator.MemoryRunning, owner, &until, &started
	t.Attempts++
	out := *t
	return &out, nil
}

// EndMemoryTask implements [orchestrator.MemoryStore].
func (m *memStore) EndMemoryTask(_ context.Context, t *orchestrator.MemoryTask) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.mem.tasks {
		if x.ID != t.ID {
			continue
		}
		if x.State != orchestrator.MemoryRunning || x.Owner != t.Owner {
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

// ReleaseMemoryTask implements [orchestrator.MemoryStore].
func (m *memStore) ReleaseMemoryTask(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.mem.tasks {
		if x.ID == id && x.State == orchestrator.MemoryRunning && x.Owner == owner {
			m.mem.tasks[i].State, m.mem.tasks[i].Owner, m.mem.tasks[i].LeaseUntil = orchestrator.MemoryQueued, "", nil
			return nil
		}
	}
	return fmt.Errorf("%w: memory task %s held by %s", orchestrator.ErrNotFound, id, owner)
}

// ListMemoryTasks implements [orchestrator.MemoryStore].
func (m *memStore) ListMemoryTasks(_ context.Context, f orchestrator.MemoryTaskFilter) ([]orchestrator.MemoryTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	limit := f.Limit
	if limit <= 0 {
		limit = memDefaultLimit
	}
	out := []orchestrator.MemoryTask{}
	for i := len(m.mem.tasks) - 1; i >= 0 && len(out) < limit; i-- {
		x := m.mem.tasks[i]
		if (f.UserID == "" || x.UserID == f.UserID) && (len(f.States) == 0 || slices.Contains(f.States, x.State)) {
			out = append(out, x)
		}
	}
	slices.SortStableFunc(out, func(a, b orchestrator.MemoryTask) int { return b.QueuedAt.Compare(a.QueuedAt) })
	return out, nil
}

// GetMemoryTask implements [orchestrator.MemoryStore].
func (m *memStore) GetMemoryTask(_ context.Context, id string) (*orchestrator.MemoryTask, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.mem.tasks {
		if x.ID == id {
			return &x, nil
		}
	}
	return nil, fmt.Errorf("%w: memory task %s", orchestrator.ErrNotFound, id)
}
