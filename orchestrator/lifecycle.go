package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The run lifecycle. A run's states and the moves between them are the
// table below and nothing else: every change of a run's state, in this
// process or in the store, goes through [Orchestrator.transition], which
// refuses a move the table does not list. docs/lifecycle.md shows the
// table as a diagram ([LifecycleMermaid]); a test keeps the two equal.

// stateNew is where a run is before its first state: not admitted yet.
const stateNew RunState = ""

// Transition is one legal move of a run: from one state to another, and
// the event that announces it to the run's followers ("" when none does:
// the move is the store's alone until the run's next event).
type Transition struct {
	From, To RunState
	Event    string
	// Why is when the move happens, in a few words.
	Why string
}

// lifecycle is the table: every legal move of a run. A run never leaves a
// terminal state, and never goes back to queued.
var lifecycle = []Transition{
	{stateNew, RunQueued, EventProgress, "admitted, no slot free"},
	{stateNew, RunRunning, EventProgress, "admitted to a free slot"},

	{RunQueued, RunRunning, EventProgress, "a slot is free"},
	{RunQueued, RunCancelling, "", "cancel asked on another replica"},
	{RunQueued, RunCancelled, EventFinal, "cancelled in the queue"},
	{RunQueued, RunFailed, EventFinal, "not admitted, or its process died"},

	{RunRunning, RunWaitingApproval, EventApprovalRequired, "a call needs a decision"},
	{RunRunning, RunWaitingInput, EventUserInputRequired, "the model asks the user"},
	{RunRunning, RunCancelling, "", "cancel asked"},
	{RunRunning, RunFinished, EventFinal, "answer, final tool or max rounds"},
	{RunRunning, RunCancelled, EventFinal, "stopped by the server's shutdown"},
	{RunRunning, RunFailed, EventFinal, "error, or its process died"},

	{RunWaitingApproval, RunRunning, EventProgress, "decided, resumed"},
	{RunWaitingApproval, RunCancelling, "", "cancel asked on another replica"},
	{RunWaitingApproval, RunCancelled, EventFinal, "cancelled while waiting"},
	{RunWaitingApproval, RunFailed, EventFinal, "cannot go on"},

	{RunWaitingInput, RunRunning, EventProgress, "answered, resumed"},
	{RunWaitingInput, RunCancelling, "", "cancel asked on another replica"},
	{RunWaitingInput, RunCancelled, EventFinal, "cancelled while waiting"},
	{RunWaitingInput, RunFailed, EventFinal, "cannot go on"},

	{RunCancelling, RunCancelled, EventFinal, "the cancel took"},
	{RunCancelling, RunFinished, EventFinal, "ended before the cancel took"},
	{RunCancelling, RunFailed, EventFinal, "failed before the cancel took"},
}

// States returns every state of the lifecycle, in the order the table
// first names them.
func States() []RunState {
	var out []RunState
	for _, t := range lifecycle {
		for _, s := range []RunState{t.From, t.To} {
			if s != stateNew && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// ActiveStates returns the states of a run that has not ended.
func ActiveStates() []RunState {
	return slices.DeleteFunc(States(), RunState.Terminal)
}

// Sources returns the states the lifecycle lets a run leave for to, in
// the table's order: what a store's compare-and-set write of to accepts.
func Sources(to RunState) []RunState {
	var out []RunState
	for _, t := range lifecycle {
		if t.To == to && t.From != stateNew && !slices.Contains(out, t.From) {
			out = append(out, t.From)
		}
	}
	return out
}

// Lifecycle returns the table of legal moves, in its order.
func Lifecycle() []Transition { return slices.Clone(lifecycle) }

// ErrIllegalTransition is the error of a move the lifecycle does not
// list; it wraps ErrConflict (the run is not in a state that allows it).
var ErrIllegalTransition = fmt.Errorf("%w: illegal run state transition", ErrConflict)

// CheckTransition returns nil when the lifecycle lets a run move from one
// state to another, else an error wrapping ErrIllegalTransition that
// names both. Staying in a state is not a move: it is always allowed.
func CheckTransition(from, to RunState) error {
	if from == to || slices.ContainsFunc(lifecycle, func(t Transition) bool { return t.From == from && t.To == to }) {
		return nil
	}
	name := func(s RunState) string {
		if s == stateNew {
			return "(new)"
		}
		return string(s)
	}
	return fmt.Errorf("%w: %s -> %s", ErrIllegalTransition, name(from), name(to))
}

// LifecycleMermaid is the lifecycle as a Mermaid state diagram, the one
// docs/lifecycle.md shows.
func LifecycleMermaid() string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	node := func(s RunState) string {
		if s == stateNew {
			return "[*]"
		}
		return string(s)
	}
	for _, t := range lifecycle {
		label := t.Why
		if t.Event != "" {
			label += " (" + t.Event + ")"
		}
		fmt.Fprintf(&b, "    %s --> %s: %s\n", node(t.From), node(t.To), label)
	}
	for _, s := range []RunState{RunFinished, RunCancelled, RunFailed} {
		fmt.Fprintf(&b, "    %s --> [*]\n", s)
	}
	return b.String()
}

// change is one move of a run to another state.
type change struct {
	// lr is the run's live state when this process holds it: the move
	// starts from its state and shows there once stored. Else run is the
	// run as stored, which the move updates in place.
	lr  *liveRun
	run *Run
	// from, when set, is the state the move starts from as the store has
	// it, where the live run may have moved on alone (a cancel in this
	// process is the live run's until the run ends); else the move starts
	// from the live (or stored) run's state.
	from RunState
	to   RunState
	// set changes, with the state, the run's other fields.
	set func(r *Run)
	// store writes the move, with the event that announces it where the
	// store takes both in one write, and returns nil once stored. It may
	// change r's state to another the table allows (an end that cannot be
	// stored as it was is stored failed). nil: the move is the live run's
	// until a later write stores it (Start stores a run with its first
	// state; a cancel reaches the store through RequestCancel).
	store func(ctx context.Context, r *Run) error
}

// transition moves a run to another state: the one way a run's state
// changes. It checks the move against the lifecycle, stores it (c.store),
// then shows it on the live run and wakes the run's followers in this
// process; the store's write wakes other replicas' (PostgreSQL NOTIFY on
// its events). It returns the run as moved.
//
// The live run shows the move only if it is still in the state the move
// started from, or if the move ends the run (every state but a terminal
// one may end): a cancel that came while a wait was stored (the live run
// went cancelling) keeps the wait from showing, and moved is false.
func (o *Orchestrator) transition(ctx context.Context, c change) (r *Run, moved bool, err error) {
	var from RunState
	if c.lr != nil {
		r = c.lr.snapshot()
	} else {
		cp := *c.run // c.run changes only once the move is stored
		r = &cp
	}
	from = r.State
	if c.from != stateNew {
		from = c.from
	}
	if err := CheckTransition(from, c.to); err != nil {
		o.log.Error("illegal run state transition refused", "run_id", r.ID, "err", err)
		return r, false, err
	}
	r.State = c.to
	if c.set != nil {
		c.set(r)
	}
	if c.store != nil {
		if err := c.store(ctx, r); err != nil {
			return r, false, err
		}
		if r.State != c.to {
			if err := CheckTransition(from, r.State); err != nil {
				return r, false, err
			}
		}
	}
	if c.lr == nil {
		*c.run = *r
		o.follow.wake(r.ID)
		return c.run, true, nil
	}
	c.lr.update(func(cur *Run) {
		if cur.State != from && (!r.State.Terminal() || CheckTransition(cur.State, r.State) != nil) {
			return
		}
		moved = true
		// The fields a move changes; the rest (the pending round, the
		// log's seq) are the live run's own.
		cur.State, cur.StopReason, cur.Answer, cur.Error, cur.Usage = r.State, r.StopReason, r.Answer, r.Error, r.Usage
		cur.StartedAt, cur.FinishedAt = r.StartedAt, r.FinishedAt
		cur.LastSeq = max(cur.LastSeq, r.LastSeq)
	})
	if moved && c.store != nil {
		o.follow.wake(r.ID)
	}
	return r, moved, nil
}

// isIllegal reports whether err is a refused move.
func isIllegal(err error) bool { return errors.Is(err, ErrIllegalTransition) }

// claimWaiting takes a waiting run (r as stored) to execute it here or to
// end it: the store moves it to running under this instance, and of
// several claimants exactly one wins (the others get ErrConflict).
func (o *Orchestrator) claimWaiting(ctx context.Context, r *Run) (*Run, error) {
	claimed, _, err := o.transition(ctx, change{run: r, to: RunRunning, store: func(ctx context.Context, r *Run) error {
		c, err := o.store.ClaimWaiting(ctx, r.ID, o.instance)
		if err == nil {
			*r = *c
		}
		return err
	}})
	return claimed, err
}

// requestCancel flags a run another process executes (or nobody, if its
// process died) as cancelling in the store, where its owner's heartbeat
// or the reaper sees it. A run that ended meanwhile is returned as it
// ended.
func (o *Orchestrator) requestCancel(ctx context.Context, r *Run) (*Run, error) {
	moved, _, err := o.transition(ctx, change{run: r, to: RunCancelling, store: func(ctx context.Context, r *Run) error {
		stored, err := o.store.RequestCancel(ctx, r.ID)
		if err == nil {
			*r = *stored
		}
		return err
	}})
	return moved, err
}
