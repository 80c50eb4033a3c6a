package a2a

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// answerArtifactID names the artifact that carries a run's answer.
const answerArtifactID = "answer"

// stateOf maps a run state to a task state (DESIGN.md section 2).
func stateOf(s orchestrator.RunState) w.State {
	switch s {
	case orchestrator.RunQueued:
		return w.StateSubmitted
	case orchestrator.RunRunning, orchestrator.RunCancelling:
		return w.StateWorking
	case orchestrator.RunWaitingApproval, orchestrator.RunWaitingInput:
		return w.StateInputRequired
	case orchestrator.RunFinished:
		return w.StateCompleted
	case orchestrator.RunCancelled:
		return w.StateCanceled
	case orchestrator.RunFailed:
		return w.StateFailed
	}
	return w.StateUnknown
}

// runStates maps a task state filter back to run states.
func runStates(s w.State) []orchestrator.RunState {
	var out []orchestrator.RunState
	for _, rs := range []orchestrator.RunState{orchestrator.RunQueued, orchestrator.RunRunning, orchestrator.RunCancelling,
		orchestrator.RunWaitingApproval, orchestrator.RunWaitingInput, orchestrator.RunFinished, orchestrator.RunCancelled, orchestrator.RunFailed} {
		if stateOf(rs) == s {
			out = append(out, rs)
		}
	}
	return out
}

func agentText(taskID, contextID, id, text string) *w.Message {
	return &w.Message{MessageID: id, TaskID: taskID, ContextID: contextID, Role: w.RoleAgent, Parts: []w.Part{w.TextPart(text)}}
}

func stamp(t time.Time) *time.Time { t = t.UTC(); return &t }

// statusOf is a run's task status. A finished run's status message carries
// the answer (so clients that read only the status see it), a failed one's
// the error.
func statusOf(r *orchestrator.Run) w.TaskStatus {
	st := w.TaskStatus{State: stateOf(r.State), Timestamp: stamp(r.CreatedAt)}
	switch {
	case r.FinishedAt != nil:
		st.Timestamp = stamp(*r.FinishedAt)
	case r.StartedAt != nil:
		st.Timestamp = stamp(*r.StartedAt)
	}
	switch r.State {
	case orchestrator.RunFinished:
		st.Message = agentText(r.ID, contextOf(r.SessionID), r.ID+"-answer", r.Answer)
	case orchestrator.RunFailed, orchestrator.RunCancelled:
		if r.Error != "" {
			st.Message = agentText(r.ID, contextOf(r.SessionID), r.ID+"-error", r.Error)
		}
	}
	return st
}

func answerArtifact(answer string) w.Artifact {
	return w.Artifact{ArtifactID: answerArtifactID, Name: "answer", Parts: []w.Part{w.TextPart(answer)}}
}

// taskOf builds the task of a run. Its history is the request and, once
// the run finished, its answer (historyLength: nil = both, 0 = none, n =
// the last n): both are in the run, so building a task reads no message
// of its session — whose history grows with every run, and which a
// blocking send would otherwise read back for every answer. The messages
// in between (tool calls and their results) are the run's work, which its
// events and the session's history tell.
//
// vw says how its A2UI batches are shown (a2ui.go).
func (h *Handler) taskOf(ctx context.Context, userID string, r *orchestrator.Run, historyLength *int, artifacts bool, vw view) (*w.Task, error) {
	return h.taskWith(ctx, userID, r, historyLength, artifacts, nil, vw)
}

// taskWith is taskOf for a run whose final event the caller already read
// (final; nil = read it when the task's artifacts are asked for).
func (h *Handler) taskWith(ctx context.Context, userID string, r *orchestrator.Run, historyLength *int, artifacts bool, final *orchestrator.FinalData, vw view) (*w.Task, error) {
	t := &w.Task{ID: r.ID, ContextID: contextOf(r.SessionID), Status: statusOf(r)}
	if r.State == orchestrator.RunRunning || r.State.Waiting() {
		// The store says what the task waits for: a run still suspending
		// already asks, a waiting one whose approvals are all decided is
		// about to go on.
		pending, err := h.pendingOf(ctx, userID, r.ID)
		if err != nil {
			return nil, err
		}
		if len(pending) > 0 {
			t.Status.State, t.Status.Message = w.StateInputRequired, inputMessage(r, pending)
		} else if r.State.Waiting() {
			t.Status.State = w.StateWorking
		}
	}
	if artifacts && r.State == orchestrator.RunFinished {
		// In the order a stream announces them: what the run attached as
		// it went, then its answer.
		if final == nil {
			final = h.finalOf(ctx, userID, r)
		}
		if final != nil {
			for _, ad := range final.Artifacts {
				t.Artifacts = append(t.Artifacts, h.artifactOf(r.UserID, ad))
			}
			for _, ud := range final.A2UI {
				t.Artifacts = append(t.Artifacts, a2uiArtifact(ud, vw))
			}
		}
		t.Artifacts = append(t.Artifacts, answerArtifact(r.Answer))
	}
	if historyLength != nil && *historyLength == 0 {
		return t, nil
	}
	if r.Question != "" {
		t.History = append(t.History, w.Message{MessageID: r.ID + "-request", TaskID: r.ID, ContextID: contextOf(r.SessionID),
			Role: w.RoleUser, Parts: []w.Part{w.TextPart(r.Question)}})
	}
	if r.State == orchestrator.RunFinished && r.Answer != "" {
		t.History = append(t.History, w.Message{MessageID: r.ID + "-answer", TaskID: r.ID, ContextID: contextOf(r.SessionID),
			Role: w.RoleAgent, Parts: []w.Part{w.TextPart(r.Answer)}})
	}
	if historyLength != nil && len(t.History) > *historyLength {
		t.History = t.History[len(t.History)-*historyLength:]
	}
	return t, nil
}

// eventsOf converts one core event into the A2A stream events it means.
// Events the client does not need (deltas, token usage) give none; vw says
// how A2UI batches are shown (a2ui.go).
func (h *Handler) eventsOf(r *orchestrator.Run, ev orchestrator.Event, started *bool, vw view) []w.Event {
	status := func(s w.State, msg *w.Message, final bool) w.Event {
		return w.Event{Status: &w.StatusUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Final: final,
			Status: w.TaskStatus{State: s, Message: msg, Timestamp: stamp(ev.Time)}}}
	}
	switch ev.Type {
	case orchestrator.EventProgress:
		var p orchestrator.ProgressData
		_ = json.Unmarshal(ev.Data, &p)
		if p.Stage == "started" && !*started {
			*started = true
			return []w.Event{status(w.StateWorking, nil, false)}
		}
	case orchestrator.EventToolCall:
		if h.opts.ToolActivity {
			var c orchestrator.ToolCallData
			_ = json.Unmarshal(ev.Data, &c)
			return []w.Event{status(w.StateWorking, agentText(r.ID, contextOf(r.SessionID), r.ID+"-ev"+strconv.FormatInt(ev.Seq, 10), "calling tool "+c.Name), false)}
		}
	case orchestrator.EventApprovalDecided:
		// The task goes on after a person's decision.
		var d orchestrator.ApprovalDecidedData
		_ = json.Unmarshal(ev.Data, &d)
		return []w.Event{status(w.StateWorking, agentText(r.ID, contextOf(r.SessionID), r.ID+"-ev"+strconv.FormatInt(ev.Seq, 10), d.Tool+": "+string(d.State)), false)}
	case orchestrator.EventArtifact:
		var ad orchestrator.ArtifactData
		if json.Unmarshal(ev.Data, &ad) == nil && ad.ArtifactID != "" {
			return []w.Event{{Artifact: &w.ArtifactUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Artifact: h.artifactOf(r.UserID, ad), LastChunk: true}}}
		}
	case orchestrator.EventA2UI:
		var ud orchestrator.A2UIData
		if json.Unmarshal(ev.Data, &ud) == nil && ud.ID != "" {
			return []w.Event{{Artifact: &w.ArtifactUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Artifact: a2uiArtifact(ud, vw), LastChunk: true}}}
		}
	case orchestrator.EventUserInputAnswered:
		// The task goes on after the person's answer.
		return []w.Event{status(w.StateWorking, agentText(r.ID, contextOf(r.SessionID), r.ID+"-ev"+strconv.FormatInt(ev.Seq, 10), "answered"), false)}
	case orchestrator.EventFinal:
		var f orchestrator.FinalData
		_ = json.Unmarshal(ev.Data, &f)
		fr := *r
		fr.State, fr.Answer, fr.Error = f.State, f.Answer, f.Error
		var out []w.Event
		if f.State == orchestrator.RunFinished {
			out = append(out, w.Event{Artifact: &w.ArtifactUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Artifact: answerArtifact(f.Answer), LastChunk: true}})
		}
		st := statusOf(&fr)
		st.Timestamp = stamp(ev.Time)
		out = append(out, w.Event{Status: &w.StatusUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Status: st, Final: true}})
		return out
	}
	return nil
}
