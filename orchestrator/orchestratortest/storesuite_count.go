package orchestratortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// countRuns checks [orchestrator.RunCounter] against the ListRuns filters;
// a store that does not count is skipped.
func (st *storeSuite) countRuns(t *testing.T) {
	s, ctx := st.open(t), t.Context()
	c, ok := s.(orchestrator.RunCounter)
	if !ok {
		t.Skip("the store does not implement orchestrator.RunCounter")
	}
	createSession(t, s, "s1", "u1", at(0))
	createSession(t, s, "s2", "u1", at(0))
	createSession(t, s, "s3", "u2", at(0))
	for i, r := range []struct {
		id, sess, user string
		state          orchestrator.RunState
	}{
		{"r1", "s1", "u1", orchestrator.RunFinished}, {"r2", "s1", "u1", orchestrator.RunRunning},
		{"r3", "s2", "u1", orchestrator.RunQueued}, {"r4", "s3", "u2", orchestrator.RunFailed},
		{"r5", "s3", "u2", orchestrator.RunRunning},
	} {
		run := &orchestrator.Run{ID: r.id, SessionID: r.sess, UserID: r.user, State: r.state, CreatedAt: at(time.Duration(i) * time.Second)}
		mustDo(t, "CreateRun", s.CreateRun(ctx, run))
	}
	running, failed := orchestrator.RunRunning, orchestrator.RunFailed
	for _, cs := range []struct {
		f    orchestrator.RunFilter
		want int
	}{
		{orchestrator.RunFilter{}, 5},
		{orchestrator.RunFilter{UserID: "u1"}, 3},
		{orchestrator.RunFilter{SessionID: "s1"}, 2},
		{orchestrator.RunFilter{UserID: "u1", SessionID: "s3"}, 0},
		{orchestrator.RunFilter{States: []orchestrator.RunState{running}}, 2},
		{orchestrator.RunFilter{UserID: "u2", States: []orchestrator.RunState{running, failed}}, 2},
		{orchestrator.RunFilter{States: []orchestrator.RunState{orchestrator.RunCancelled}}, 0},
		// The page is ignored.
		{orchestrator.RunFilter{UserID: "u1", Page: orchestrator.Page{Limit: 1}}, 3},
		{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 1, After: &orchestrator.PageKey{At: at(4 * time.Second), ID: "r5"}}}, 5},
	} {
		n, err := c.CountRuns(ctx, cs.f)
		mustDo(t, "CountRuns", err)
		if n != cs.want {
			t.Errorf("CountRuns(%s) = %d, want %d", fmt.Sprintf("%+v", cs.f), n, cs.want)
		}
	}
}
