package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// Approvals ([orchestrator.Store]) and the waiting runs they belong to.

type approvalRow struct {
	bun.BaseModel `bun:"table:approvals"`

	RunID     string     `bun:"run_id,pk"`
	ID        string     `bun:"id,pk"`
	SessionID string     `bun:"session_id,notnull"`
	UserID    string     `bun:"user_id,notnull"`
	Round     int        `bun:"round,notnull"`
	CallID    string     `bun:"call_id,notnull"`
	Kind      string     `bun:"kind,notnull"`
	Tool      string     `bun:"tool,notnull"`
	Arguments *string    `bun:"arguments"`
	Reason    string     `bun:"reason,notnull"`
	Missing   *string    `bun:"missing"`
	Decisions string     `bun:"decisions,notnull"`
	State     string     `bun:"state,notnull"`
	Decision  *string    `bun:"decision"`
	Execution string     `bun:"execution,notnull"`
	Result    *string    `bun:"result"`
	CreatedAt time.Time  `bun:"created_at,notnull"`
	ExpiresAt *time.Time `bun:"expires_at"`
	DecidedAt *time.Time `bun:"decided_at"`
}

// jsonText encodes v as stored (nil stays NULL).
func jsonText(v any) *string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return nil
	}
	return rawToText(b)
}

func toApprovalRow(a *orchestrator.Approval) *approvalRow {
	decisions, _ := json.Marshal(a.Decisions)
	row := &approvalRow{RunID: a.RunID, ID: a.ID, SessionID: a.SessionID, UserID: a.UserID, Round: a.Round,
		CallID: a.CallID, Kind: a.Kind, Tool: a.Tool, Arguments: rawToText(a.Arguments), Reason: a.Reason,
		Missing: rawToText(a.Missing), Decisions: string(decisions), State: string(a.State), Execution: a.Execution,
		CreatedAt: stamp(a.CreatedAt), ExpiresAt: stampPtr(a.ExpiresAt), DecidedAt: stampPtr(a.DecidedAt)}
	if a.Decision != nil {
		row.Decision = jsonText(a.Decision)
	}
	if a.Result != nil {
		row.Result = jsonText(a.Result)
	}
	return row
}

func fromApprovalRow(r *approvalRow) *orchestrator.Approval {
	a := &orchestrator.Approval{ID: r.ID, RunID: r.RunID, SessionID: r.SessionID, UserID: r.UserID, Round: r.Round,
		CallID: r.CallID, Kind: r.Kind, Tool: r.Tool, Arguments: textToRaw(r.Arguments), Reason: r.Reason,
		Missing: textToRaw(r.Missing), State: orchestrator.ApprovalState(r.State), Execution: r.Execution,
		CreatedAt: r.CreatedAt.UTC(), ExpiresAt: stampPtr(r.ExpiresAt), DecidedAt: stampPtr(r.DecidedAt)}
	_ = json.Unmarshal([]byte(r.Decisions), &a.Decisions)
	if r.Decision != nil {
		a.Decision = new(orchestrator.ApprovalDecision)
		if json.Unmarshal([]byte(*r.Decision), a.Decision) != nil {
			a.Decision = nil
		}
	}
	if r.Result != nil {
		a.Result = new(orchestrator.ApprovalResult)
		if json.Unmarshal([]byte(*r.Result), a.Result) != nil {
			a.Result = nil
		}
	}
	return a
}

// pendingText encodes a waiting run's round (nil stays NULL).
func pendingText(p *orchestrator.PendingRound) *string {
	if p == nil {
		return nil
	}
	return jsonText(p)
}

// textPending decodes a stored round; an unreadable one reads as none
// (the run then cannot be resumed, only ended).
func textPending(t *string) *orchestrator.PendingRound {
	if t == nil || *t == "" {
		return nil
	}
	p := new(orchestrator.PendingRound)
	if json.Unmarshal([]byte(*t), p) != nil {
		return nil
	}
	return p
}

// ClaimWaiting implements [orchestrator.Store] with one conditional
// UPDATE: the state changes in the statement that checks it, and the run is
// answered as that statement left it (read again, a cancel from another
// replica could already show).
func (s *Store) ClaimWaiting(ctx context.Context, runID, to string) (*orchestrator.Run, error) {
	if runID == "" || to == "" {
		return nil, invalid("claim needs a run id and a new owner")
	}
	var claimed *runRow
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		claimed = nil // a group commit may run this again
		row := new(runRow)
		err := db.NewUpdate().Model(row).Set("owner = ?", to).Set("state = ?", string(orchestrator.RunRunning)).
			Where("id = ?", runID).Where("state IN (?)", bun.List(waitingStates)).Returning("*").Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: claim waiting run %s", orchestrator.ErrNotFound, runID)
		}
		if err != nil {
			return err
		}
		claimed = row
		return nil
	})
	if errors.Is(err, orchestrator.ErrNotFound) {
		r, gerr := s.GetRun(ctx, runID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("%w: run %s is %s, not waiting", orchestrator.ErrConflict, runID, r.State)
	}
	if err != nil {
		return nil, dbErr(err, "claim waiting run", "run "+runID)
	}
	return fromRunRow(claimed), nil
}

// CreateApprovals implements [orchestrator.Store]: all or none, in one
// statement.
func (s *Store) CreateApprovals(ctx context.Context, approvals []*orchestrator.Approval) error {
	if len(approvals) == 0 {
		return nil
	}
	rows := make([]*approvalRow, len(approvals))
	for i, a := range approvals {
		if a == nil || a.ID == "" || a.RunID == "" {
			return invalid("approval id and run id are required")
		}
		a.CreatedAt = stamp(a.CreatedAt)
		rows[i] = toApprovalRow(a)
	}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(&rows).Exec(ctx)
		if constraintOf(err) == foreignKeyViolation {
			return dbErr(err, "create approvals", "run "+approvals[0].RunID)
		}
		return dbErr(err, "create approvals", "approval of run "+approvals[0].RunID)
	})
}

// GetApproval implements [orchestrator.Store].
func (s *Store) GetApproval(ctx context.Context, runID, approvalID string) (*orchestrator.Approval, error) {
	row := new(approvalRow)
	err := s.db.NewSelect().Model(row).Where("run_id = ? AND id = ?", runID, approvalID).Scan(ctx)
	if err != nil {
		return nil, dbErr(err, "get approval", "approval "+approvalID+" of run "+runID)
	}
	return fromApprovalRow(row), nil
}

// ListApprovals implements [orchestrator.Store].
func (s *Store) ListApprovals(ctx context.Context, runID string) ([]*orchestrator.Approval, error) {
	var rows []approvalRow
	err := s.db.NewSelect().Model(&rows).Where("run_id = ?", runID).OrderExpr("created_at ASC, id ASC").Scan(ctx)
	if err != nil {
		return nil, dbErr(err, "list approvals", "of run "+runID)
	}
	out := make([]*orchestrator.Approval, len(rows))
	for i := range rows {
		out[i] = fromApprovalRow(&rows[i])
	}
	return out, nil
}

// UpdateApproval implements [orchestrator.Store]: one UPDATE conditioned
// on the state and execution it changes from.
func (s *Store) UpdateApproval(ctx context.Context, a *orchestrator.Approval, from orchestrator.ApprovalState, fromExecution string) error {
	if a == nil {
		return invalid("approval is nil")
	}
	row := toApprovalRow(a)
	err := s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model(row).Column("state", "decision", "decided_at", "execution", "result").WherePK().
			Where("state = ?", string(from)).Where("execution = ?", fromExecution).Exec(ctx)
		return affected(res, err, "update approval", "approval "+a.ID+" of run "+a.RunID)
	})
	if !errors.Is(err, orchestrator.ErrNotFound) {
		return err
	}
	cur, gerr := s.GetApproval(ctx, a.RunID, a.ID)
	if gerr != nil {
		return gerr
	}
	return fmt.Errorf("%w: approval %s is %s (execution %q)", orchestrator.ErrConflict, a.ID, cur.State, cur.Execution)
}
