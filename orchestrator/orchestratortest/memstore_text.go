package orchestratortest

import "github.com/wunder/wunder/orchestrator"

// The in-memory store keeps text as the SQL stores do: every string it
// writes or looks up by goes through [orchestrator.StoredText], JSON through
// [orchestrator.StoredJSON]. These return copies; the caller's values are
// never changed (only CreatedAt is written back, as on SQL).

var txt = orchestrator.StoredText

func storedSession(s orchestrator.Session) orchestrator.Session {
	s.ID, s.UserID, s.Title = txt(s.ID), txt(s.UserID), txt(s.Title)
	return s
}

func storedMessage(m orchestrator.Message) orchestrator.Message {
	m = cloneMessage(m)
	m.Role, m.Content, m.ReasoningContent = txt(m.Role), txt(m.Content), txt(m.ReasoningContent)
	m.ToolCallID, m.Name, m.RunID = txt(m.ToolCallID), txt(m.Name), txt(m.RunID)
	for i, c := range m.ToolCalls {
		m.ToolCalls[i] = orchestrator.ToolCall{ID: txt(c.ID), Name: txt(c.Name), Arguments: orchestrator.StoredJSON(c.Arguments)}
	}
	return m
}

// storedRun normalises every text field of r, the immutable ones included
// (CreateRun writes them; UpdateRun ignores them).
func storedRun(r orchestrator.Run) orchestrator.Run {
	r.ID, r.SessionID, r.UserID = txt(r.ID), txt(r.SessionID), txt(r.UserID)
	r.State, r.StopReason = orchestrator.RunState(txt(string(r.State))), orchestrator.StopReason(txt(string(r.StopReason)))
	r.Question, r.Answer, r.Error, r.ModelName = txt(r.Question), txt(r.Answer), txt(r.Error), txt(r.ModelName)
	return r
}

func storedEvent(e orchestrator.Event) orchestrator.Event {
	e.RunID, e.SessionID, e.Type, e.Data = txt(e.RunID), txt(e.SessionID), txt(e.Type), orchestrator.StoredJSON(e.Data)
	return e
}

func storedToolLog(l orchestrator.ToolLog) orchestrator.ToolLog {
	l.RunID, l.SessionID, l.UserID, l.CallID = txt(l.RunID), txt(l.SessionID), txt(l.UserID), txt(l.CallID)
	l.Tool, l.Result, l.Arguments = txt(l.Tool), txt(l.Result), orchestrator.StoredJSON(l.Arguments)
	return l
}

func storedFilter(f orchestrator.RunFilter) orchestrator.RunFilter {
	f.UserID, f.SessionID = txt(f.UserID), txt(f.SessionID)
	states := make([]orchestrator.RunState, len(f.States))
	for i, s := range f.States {
		states[i] = orchestrator.RunState(txt(string(s)))
	}
	f.States = states
	return f
}
