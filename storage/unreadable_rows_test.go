package storage

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// Stored JSON that no longer decodes (a row written by hand, or by a
// version that spelled it otherwise) reads as the doc comments say, on
// both backends: a run's spec and pending round as none (the run can then
// only be ended), an approval's decision and result as none; the rest of
// the row as stored, and no error that would hide the run from its lists.
func TestUnreadableJSONReadsAsNone(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: orchestrator.RunRunning,
				Question: "q", Spec: &orchestrator.RunSpec{}, Pending: &orchestrator.PendingRound{Round: 2}}))
			a := &orchestrator.Approval{ID: "a1", RunID: "r", SessionID: "s", UserID: "u", Tool: "write_file", Kind: "authorization",
				Arguments: json.RawMessage(`{"path":"x"}`), Decisions: []string{"approve", "reject"}, State: orchestrator.ApprovalPending}
			must(t, s.CreateApprovals(ctx, []*orchestrator.Approval{a}))
			a.State = orchestrator.ApprovalApproved
			a.Decision = &orchestrator.ApprovalDecision{Decision: "approve"}
			a.Result = &orchestrator.ApprovalResult{Content: "ok"}
			must(t, s.UpdateApproval(ctx, a, orchestrator.ApprovalPending, ""))

			// Both were stored and read back whole first.
			got, err := s.GetApproval(ctx, "r", "a1")
			must(t, err)
			if got.Decision == nil || got.Decision.Decision != "approve" || got.Result == nil || got.Result.Content != "ok" {
				t.Fatalf("approval before the damage = %+v", got)
			}
			run, err := s.GetRun(ctx, "r")
			must(t, err)
			if run.Spec == nil || run.Pending == nil || run.Pending.Round != 2 {
				t.Fatalf("run before the damage: spec %v, pending %+v", run.Spec, run.Pending)
			}

			_, err = s.db.ExecContext(ctx, `UPDATE runs SET spec = '{"broken', pending = '[1,2' WHERE id = 'r'`)
			must(t, err)
			_, err = s.db.ExecContext(ctx, `UPDATE approvals SET decision = 'not json', result = '{"content": 5}' WHERE id = 'a1'`)
			must(t, err)

			run, err = s.GetRun(ctx, "r")
			must(t, err)
			if run.Spec != nil || run.Pending != nil {
				t.Errorf("unreadable spec and pending read as %+v, %+v; want none", run.Spec, run.Pending)
			}
			if run.Question != "q" || run.State != orchestrator.RunRunning {
				t.Errorf("the rest of the run = %+v; want it as stored", run)
			}
			runs, err := s.ListRuns(ctx, orchestrator.RunFilter{UserID: "u"})
			if err != nil || len(runs) != 1 {
				t.Errorf("ListRuns with an unreadable spec = %d runs, %v; want the run", len(runs), err)
			}
			got, err = s.GetApproval(ctx, "r", "a1")
			must(t, err)
			if got.Decision != nil || got.Result != nil {
				t.Errorf("unreadable decision and result read as %+v, %+v; want none", got.Decision, got.Result)
			}
			if got.Tool != "write_file" || string(got.Arguments) != `{"path":"x"}` || len(got.Decisions) != 2 {
				t.Errorf("the rest of the approval = %+v; want it as stored", got)
			}
		})
	}
}

// A stored vector whose bytes do not match its dimensions is an error that
// names the hash and the model, never a vector of the wrong length; the
// float values at the edges (NaN, ±Inf, -0, the smallest subnormal)
// round-trip bit for bit.
func TestEmbeddingsBits(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			edge := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
				float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32}
			must(t, s.SaveEmbeddings(ctx, "m", map[string][]float32{"edge": edge, "empty": {}, "bad": {1, 2}}))
			got, err := s.LoadEmbeddings(ctx, "m", []string{"edge", "empty"})
			must(t, err)
			if len(got["edge"]) != len(edge) {
				t.Fatalf("edge = %v", got["edge"])
			}
			for i, x := range edge {
				if math.Float32bits(got["edge"][i]) != math.Float32bits(x) {
					t.Errorf("edge[%d] = %v (%#x); want %v (%#x)", i, got["edge"][i], math.Float32bits(got["edge"][i]), x, math.Float32bits(x))
				}
			}
			if v, ok := got["empty"]; !ok || len(v) != 0 {
				t.Errorf("an empty vector = %v, %v; want present and empty", v, ok)
			}
			_, err = s.db.ExecContext(ctx, `UPDATE knowledge_embeddings SET dims = 3 WHERE hash = 'bad'`)
			must(t, err)
			_, err = s.LoadEmbeddings(ctx, "m", []string{"edge", "bad"})
			if err == nil || !strings.Contains(err.Error(), "embedding bad of m") || !strings.Contains(err.Error(), "8 bytes for 3 dimensions") {
				t.Errorf("LoadEmbeddings of a damaged vector = %v; want an error naming it", err)
			}
		})
	}
}
