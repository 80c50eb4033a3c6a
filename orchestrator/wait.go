package orchestrator

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Waited is where [Orchestrator.Wait] left a run: ended, or paused for a
// person.
type Waited struct {
	// Event is the last event Wait read: the run's final event when it
	// ended, or the event that announced its pause (approval_required,
	// user_input_required). It is zero when the log held nothing after
	// the seq Wait started from: the run had ended by then.
	Event Event
	// Run is the run as GetRun said when it paused (waiting_approval or
	// waiting_input, stored so), or when it had ended before the seq Wait
	// started from. It is nil when Wait read the final event, which says
	// how the run ended (a run's end is stored with its final event).
	Run *Run
	// Approvals are the pending approvals and questions (kind question)
	// of the paused run, oldest first, read after its pause was.
	Approvals []*Approval
}

// Paused reports whether the run waits for a person.
func (w Waited) Paused() bool { return w.Run != nil && w.Run.State.Waiting() }

// Wait follows a run from the event after seq after until it ends or
// pauses, and says where it left it. It is how every front-end waits for
// a run: each maps the end and the pause to its own shape (a JSON answer,
// an A2A input-required status, an MCP result or elicitation, a stream
// that goes on).
//
// each, when not nil, is called with every event after seq after, in
// order, with no gap and no duplicate (as [Orchestrator.Events] yields
// them), before Wait looks at it; an error of each stops Wait, which
// returns it. Wait returns:
//
//   - at the final event, after each had it (Waited.Event; Run nil);
//   - at a pause: an approval_required whose approval is still pending,
//     or a user_input_required, once GetRun says the run is stored in the
//     pause it announces. A run announces its pause before the pause is
//     stored, so a front-end that tells its client "waiting" tells what
//     GetRun says then, and what a restarted server would say. Waited
//     holds the announcing event (each had it; no later event has been
//     read), the run and its pending approvals. Call Wait again from
//     Waited.Event.Seq to follow the run on (the other approval_required
//     events of the same round then pause at once while they are pending);
//   - on ctx's end or a store error, with that error; the log ending
//     before any event after seq after (the run had ended) returns the
//     run as stored.
//
// An approval_required whose approval was decided is history, and Wait
// goes on past it; so it does when the approval is decided before the
// pause is seen stored (the run resumes, and its events follow), or when
// the run ends instead. A question (user_input_required) is an approval
// of kind question and is waited on the same way. Wait only reads: neither ctx's end nor each's error touches the
// run (a client that leaves never stops it). A run of another replica
// sharing the store is followed as Events follows it, and its stored
// pause polled every Options.FollowInterval. userID scopes the run
// ("" = any user).
func (o *Orchestrator) Wait(ctx context.Context, userID, runID string, after int64, each func(Event) error) (Waited, error) {
	var decided map[string]bool // approvals known decided: their announcements are history
	for ev, err := range o.Events(ctx, userID, runID, after) {
		if err != nil {
			return Waited{}, err
		}
		if each != nil {
			if err := each(ev); err != nil {
				return Waited{Event: ev}, err
			}
		}
		switch ev.Type {
		case EventFinal:
			return Waited{Event: ev}, nil
		case EventApprovalRequired, EventUserInputRequired:
			if w, paused, err := o.pauseAt(ctx, userID, runID, ev, &decided); err != nil || paused {
				return w, err
			}
		}
	}
	// Events ends without a final event (and without an error) only when
	// the run had ended at or before seq after.
	r, err := o.GetRun(ctx, userID, runID)
	if err != nil {
		return Waited{}, err
	}
	return Waited{Run: r}, nil
}

// pauseAt looks at ev, an event that announces a pause, and returns the
// pause once the run is stored in it, or false when the run goes on (or
// ends) without it. decided collects the approvals read as decided.
func (o *Orchestrator) pauseAt(ctx context.Context, userID, runID string, ev Event, decided *map[string]bool) (Waited, bool, error) {
	asked := ""
	switch ev.Type {
	case EventApprovalRequired:
		var d ApprovalRequiredData
		if json.Unmarshal(ev.Data, &d) != nil || d.ApprovalID == "" {
			return Waited{}, false, nil
		}
		asked = d.ApprovalID
	case EventUserInputRequired:
		var d UserInputRequiredData
		if json.Unmarshal(ev.Data, &d) != nil || d.QuestionID == "" {
			return Waited{}, false, nil
		}
		asked = d.QuestionID
	}
	if (*decided)[asked] {
		return Waited{}, false, nil
	}
	var pending []*Approval
	// stillAsked reads the run's pending approvals and reports whether the
	// one ev asks for is among them. (The run was read first: it is
	// visible to userID.)
	stillAsked := func(ctx context.Context) (bool, error) {
		all, err := o.store.ListApprovals(ctx, runID)
		if err != nil {
			return false, err
		}
		pending = pending[:0]
		for _, a := range all {
			if a.State == ApprovalPending {
				pending = append(pending, a)
				continue
			}
			if *decided == nil {
				*decided = map[string]bool{}
			}
			(*decided)[a.ID] = true
		}
		return slices.ContainsFunc(pending, func(a *Approval) bool { return a.ID == asked }), nil
	}
	wentOn := func(ctx context.Context) (bool, error) {
		ok, err := stillAsked(ctx)
		return !ok, err
	}
	r, err := o.settled(ctx, userID, runID, wentOn)
	if err != nil || !r.State.Waiting() {
		// Ended, or gone on: a pause it made since announces itself.
		return Waited{}, false, err
	}
	// Read after the pause: what is pending now.
	if ok, err := stillAsked(ctx); err != nil || !ok {
		return Waited{}, false, err
	}
	return Waited{Event: ev, Run: r, Approvals: pending}, true, nil
}

// settled waits until a run stops executing and returns it as GetRun then
// says: stored paused (waiting_approval, waiting_input) or ended. A run
// announces its pause before the pause is stored (suspendRun), and GetRun
// shows the pause only once it is stored. wentOn, when not nil, is asked
// while the run still executes whether it went on without pausing (the
// approval it announced was decided): then the run is returned as it is.
// Otherwise a run resumed meanwhile is waited for until it pauses again
// or ends. This process wakes the call when a run of its own suspends,
// resumes or ends; a run of another replica is polled every
// Options.FollowInterval.
func (o *Orchestrator) settled(ctx context.Context, userID, runID string, wentOn func(context.Context) (bool, error)) (*Run, error) {
	wake, done := o.follow.wait(runID)
	defer done()
	var timer *time.Timer
	for {
		r, err := o.GetRun(ctx, userID, runID)
		if err != nil {
			return nil, err
		}
		if r.State.Waiting() || r.State.Terminal() {
			return r, nil
		}
		if wentOn != nil {
			if on, err := wentOn(ctx); err != nil || on {
				return r, err
			}
		}
		if timer == nil {
			timer = time.NewTimer(o.opts.FollowInterval)
			defer timer.Stop()
		} else {
			timer.Reset(o.opts.FollowInterval)
		}
		select {
		case <-timer.C:
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
