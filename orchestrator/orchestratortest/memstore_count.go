package orchestratortest

import (
	"context"
	"slices"

	"github.com/wunder/wunder/orchestrator"
)

var _ orchestrator.RunCounter = (*memStore)(nil)

// CountRuns implements [orchestrator.RunCounter] with ListRuns' filter.
func (m *memStore) CountRuns(_ context.Context, f orchestrator.RunFilter) (int, error) {
	f = storedFilter(f)
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.runs {
		if (f.UserID == "" || r.UserID == f.UserID) && (f.SessionID == "" || r.SessionID == f.SessionID) &&
			(len(f.States) == 0 || slices.Contains(f.States, r.State)) {
			n++
		}
	}
	return n, nil
}
