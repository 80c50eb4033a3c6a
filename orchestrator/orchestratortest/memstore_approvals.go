package orchestratortest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wunder/wunder/orchestrator"
)

// Approvals of the in-memory store: kept per run in creation order, as
// copies normalised the way the SQL stores keep them.

func storedApproval(a orchestrator.Approval) orchestrator.Approval {
	a.ID, a.RunID, a.SessionID, a.UserID, a.CallID = txt(a.ID), txt(a.RunID), txt(a.SessionID), txt(a.UserID), txt(a.CallID)
	a.Kind, a.Tool, a.Reason, a.Execution = txt(a.Kind), txt(a.Tool), txt(a.Reason), txt(a.Execution)
	a.State = orchestrator.ApprovalState(txt(string(a.State)))
	a.Arguments, a.Missing = orchestrator.StoredJSON(a.Arguments), orchestrator.StoredJSON(a.Missing)
	a.Decisions = slices.Clone(a.Decisions)
	for i, d := range a.Decisions {
		a.Decisions[i] = txt(d)
	}
	if a.Decision != nil {
		d := *a.Decision
		d.Decision, d.Reason, d.By, d.Arguments = txt(d.Decision), txt(d.Reason), txt(d.By), orchestrator.StoredJSON(d.Arguments)
		a.Decision = &d
	}
	if a.Result != nil {
		res := *a.Result
		res.Content = txt(res.Content)
		a.Result = &res
	}
	a.CreatedAt = stamp(a.CreatedAt)
	a.ExpiresAt, a.DecidedAt = stampPtr(a.ExpiresAt), stampPtr(a.DecidedAt)
	return a
}

func cloneApproval(a orchestrator.Approval) *orchestrator.Approval {
	out := storedApproval(a) // copies every reference
	if len(out.Arguments) == 0 {
		out.Arguments = nil
	}
	return &out
}

func clonePending(p *orchestrator.PendingRound) *orchestrator.PendingRound {
	if p == nil {
		return nil
	}
	b, _ := json.Marshal(p)
	out := new(orchestrator.PendingRound)
	_ = json.Unmarshal(orchestrator.StoredJSON(b), out)
	return out
}

func (m *memStore) ClaimWaiting(_ context.Context, runID, to string) (*orchestrator.Run, error) {
	if runID == "" || to == "" {
		return nil, fmt.Errorf("%w: claim needs a run id and a new owner", orchestrator.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.runs[txt(runID)]
	if !ok {
		return nil, fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, runID)
	}
	if !cur.State.Waiting() {
		return nil, fmt.Errorf("%w: run %s is %s, not waiting", orchestrator.ErrConflict, runID, cur.State)
	}
	cur.State, cur.Owner = orchestrator.RunRunning, to
	m.runs[cur.ID] = cur
	return cloneRun(cur), nil
}

func (m *memStore) CreateApprovals(_ context.Context, approvals []*orchestrator.Approval) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkApprovalsLocked(approvals); err != nil {
		return err
	}
	m.createApprovalsLocked(approvals)
	return nil
}

// checkApprovalsLocked checks new approvals as CreateApprovals stores
// them: ids present, runs stored, no id repeated.
func (m *memStore) checkApprovalsLocked(approvals []*orchestrator.Approval) error {
	seen := map[string]bool{}
	for _, a := range approvals {
		if a == nil || a.ID == "" || a.RunID == "" {
			return fmt.Errorf("%w: approval id and run id are required", orchestrator.ErrInvalidArgument)
		}
		if _, ok := m.runs[txt(a.RunID)]; !ok {
			return fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, a.RunID)
		}
		key := txt(a.RunID) + "\x00" + txt(a.ID)
		if seen[key] || slices.ContainsFunc(m.approvals[txt(a.RunID)], func(x orchestrator.Approval) bool { return x.ID == txt(a.ID) }) {
			return fmt.Errorf("%w: approval %s exists", orchestrator.ErrConflict, a.ID)
		}
		seen[key] = true
	}
	return nil
}

func (m *memStore) createApprovalsLocked(approvals []*orchestrator.Approval) {
	for _, a := range approvals {
		a.CreatedAt = stamp(a.CreatedAt)
		row := storedApproval(*a)
		m.approvals[row.RunID] = append(m.approvals[row.RunID], row)
	}
}

func (m *memStore) GetApproval(_ context.Context, runID, approvalID string) (*orchestrator.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.approvals[txt(runID)] {
		if a.ID == txt(approvalID) {
			return cloneApproval(a), nil
		}
	}
	return nil, fmt.Errorf("%w: approval %s of run %s", orchestrator.ErrNotFound, approvalID, runID)
}

func (m *memStore) ListApprovals(_ context.Context, runID string) ([]*orchestrator.Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := m.approvals[txt(runID)]
	out := make([]*orchestrator.Approval, len(all))
	for i, a := range all {
		out[i] = cloneApproval(a)
	}
	return out, nil
}

func (m *memStore) UpdateApproval(_ context.Context, a *orchestrator.Approval, from orchestrator.ApprovalState, fromExecution string) error {
	if a == nil {
		return fmt.Errorf("%w: approval is nil", orchestrator.ErrInvalidArgument)
	}
	in := storedApproval(*a)
	m.mu.Lock()
	defer m.mu.Unlock()
	list := m.approvals[in.RunID]
	i := slices.IndexFunc(list, func(x orchestrator.Approval) bool { return x.ID == in.ID })
	if i < 0 {
		return fmt.Errorf("%w: approval %s of run %s", orchestrator.ErrNotFound, a.ID, a.RunID)
	}
	cur := list[i]
	if cur.State != from || cur.Execution != fromExecution {
		return fmt.Errorf("%w: approval %s is %s (execution %q)", orchestrator.ErrConflict, a.ID, cur.State, cur.Execution)
	}
	cur.State, cur.Decision, cur.DecidedAt, cur.Execution, cur.Result = in.State, in.Decision, in.DecidedAt, in.Execution, in.Result
	list[i] = cur
	return nil
}

func (m *memStore) SuspendRun(_ context.Context, r *orchestrator.Run, approvals []*orchestrator.Approval, tail orchestrator.RunTail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Everything is checked before anything is written: all or nothing.
	if r == nil {
		return fmt.Errorf("%w: run is nil", orchestrator.ErrInvalidArgument)
	}
	cur, ok := m.runs[txt(r.ID)]
	if !ok {
		return fmt.Errorf("%w: run %s", orchestrator.ErrNotFound, r.ID)
	}
	if cur.Owner != txt(r.Owner) {
		return m.updateRunLocked(r) // the fence's error
	}
	if err := m.checkApprovalsLocked(approvals); err != nil {
		return err
	}
	if len(tail.Messages) > 0 {
		if _, ok := m.sessions[txt(r.SessionID)]; !ok {
			return fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, r.SessionID)
		}
	}
	evs, err := m.checkEventsLocked(tail.Events)
	if err != nil {
		return err
	}
	if err := m.updateRunLocked(r); err != nil {
		return err
	}
	m.createApprovalsLocked(approvals)
	m.appendMessagesLocked(txt(r.SessionID), tail.Messages)
	m.appendEventsLocked(evs)
	return nil
}
