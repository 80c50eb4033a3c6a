package orchestratortest

// The in-memory store's per-user reads and deletions.

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (m *memStore) ListUserStats(_ context.Context, p orchestrator.Page) ([]orchestrator.UserStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	by := map[string]*orchestrator.UserStats{}
	for _, s := range m.sessions {
		u := by[s.UserID]
		if u == nil {
			u = &orchestrator.UserStats{UserID: s.UserID}
			by[s.UserID] = u
		}
		u.Sessions++
		if s.UpdatedAt.After(u.LastActive) {
			u.LastActive = s.UpdatedAt
		}
	}
	for _, r := range m.runs {
		if u := by[r.UserID]; u != nil {
			u.Runs++
		}
	}
	out := make([]orchestrator.UserStats, 0, len(by))
	for _, u := range by {
		// Most recently active first, then by id: after the key, the
		// less recently active, and those as recent with a greater id.
		if k := p.After; k == nil || cmp.Or(k.At.Truncate(time.Microsecond).Compare(u.LastActive), cmp.Compare(u.UserID, k.ID)) > 0 {
			out = append(out, *u)
		}
	}
	slices.SortFunc(out, func(a, b orchestrator.UserStats) int {
		return cmp.Or(b.LastActive.Compare(a.LastActive), cmp.Compare(a.UserID, b.UserID))
	})
	return out[:pageLen(p, len(out))], nil
}

func (m *memStore) DeleteUserData(ctx context.Context, userID string) error {
	userID = txt(userID)
	m.mu.Lock()
	var ids []string
	for id, s := range m.sessions {
		if s.UserID == userID {
			ids = append(ids, id)
		}
	}
	m.mu.Unlock()
	for _, id := range ids {
		if err := m.DeleteSession(ctx, id); err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.toolLogs = slices.DeleteFunc(m.toolLogs, func(l orchestrator.ToolLog) bool { return l.UserID == userID })
	return nil
}
