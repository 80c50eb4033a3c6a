package telemetry

import (
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Per-user series carry the user id as a label, so their number grows with
// the users: past Options.MaxUsers distinct users on this instance, the
// others are counted together as user="_other". GET /wunder/admin/usage
// has every user's figures from the store; these are for dashboards and
// alerts.

// otherUsers is the label of the users past the bound.
const otherUsers = "_other"

// userLabels hands out the user label.
type userLabels struct {
	max int // <= 0: per-user series off
	// mu guards seen.
	mu   sync.Mutex
	seen map[string]struct{}
}

// of is the label of user; "" when per-user series are off.
func (u *userLabels) of(user string) string {
	if u.max <= 0 {
		return ""
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.seen[user]; ok {
		return user
	}
	if len(u.seen) >= u.max {
		return otherUsers
	}
	if u.seen == nil {
		u.seen = map[string]struct{}{}
	}
	u.seen[user] = struct{}{}
	return user
}

// ToolDecision counts a decision the audit records, and the user's call.
func (t *Telemetry) ToolDecision(l *orchestrator.ToolLog) {
	t.m.toolDecisions.WithLabelValues(l.Outcome, l.Via, frontendLabel(l.FrontEnd)).Inc()
	if user := t.users.of(l.UserID); user != "" {
		t.m.userToolCalls.WithLabelValues(user, l.Outcome).Inc()
	}
}

// userRunEnded counts an execution of a user's run: its time, and, when
// the run ended, the run and its tokens.
func (t *Telemetry) userRunEnded(r orchestrator.RunInfo, e orchestrator.RunEnd, took time.Duration) {
	user := t.users.of(r.UserID)
	if user == "" || e.State == "" {
		return
	}
	t.m.userRunSeconds.WithLabelValues(user).Add(took.Seconds())
	if e.State.Waiting() {
		return
	}
	t.m.userRuns.WithLabelValues(user).Inc()
	t.m.userTokens.WithLabelValues(user, "input").Add(float64(e.Usage.InputTokens))
	t.m.userTokens.WithLabelValues(user, "output").Add(float64(e.Usage.OutputTokens))
}
