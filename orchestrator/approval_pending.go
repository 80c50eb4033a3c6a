package orchestrator

import "context"

// PendingRun is a run that waits for a person (waiting_approval or
// waiting_input) with what it waits for: its pending approvals and
// questions (approvals of kind question), oldest first. Pending may be
// empty for a run whose last decision landed between the two reads: it
// is about to go on.
type PendingRun struct {
	Run     *Run        `json:"run"`
	Pending []*Approval `json:"pending"`
}

// PendingKey is where a listing of pending runs goes on after p: the
// runs' own order.
func PendingKey(p PendingRun) *PageKey { return RunKey(p.Run) }

// Pending lists the runs of userID ("" = every user's) that wait for a
// decision or an answer, newest first, each with its pending approvals
// and questions: what a person has to decide, across runs and sessions
// (GET /wunder/pending, the console's badge). page pages the runs as
// [Orchestrator.ListRuns] does; the store reads one run list and one
// approval list per run, so page.Limit bounds the work.
func (o *Orchestrator) Pending(ctx context.Context, userID string, page Page) ([]PendingRun, error) {
	runs, err := o.ListRuns(ctx, RunFilter{UserID: userID, States: []RunState{RunWaitingApproval, RunWaitingInput}, Page: page})
	if err != nil {
		return nil, err
	}
	out := make([]PendingRun, 0, len(runs))
	for _, r := range runs {
		list, err := o.store.ListApprovals(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		p := PendingRun{Run: r, Pending: []*Approval{}}
		for _, a := range list {
			if a.State == ApprovalPending {
				p.Pending = append(p.Pending, a)
			}
		}
		out = append(out, p)
	}
	return out, nil
}
