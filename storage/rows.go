package storage

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// Row models: one per table, unexported, converted to and from the core's
// types here and nowhere else. JSON is stored as text, byte for byte; an
// empty JSON value is NULL and reads back as nil. Every string, JSON text
// included, is kept as [orchestrator.StoredText] gives it (text.go).

type sessionRow struct {
	bun.BaseModel `bun:"table:sessions"`

	ID        string    `bun:"id,pk"`
	UserID    string    `bun:"user_id,notnull"`
	Title     string    `bun:"title,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

type messageRow struct {
	bun.BaseModel `bun:"table:messages"`

	ID               int64     `bun:"id,pk,autoincrement"`
	SessionID        string    `bun:"session_id,notnull"`
	RunID            string    `bun:"run_id,notnull"`
	Role             string    `bun:"role,notnull"`
	Content          string    `bun:"content,notnull"`
	ReasoningContent string    `bun:"reasoning_content,notnull"`
	ToolCalls        *string   `bun:"tool_calls"`
	ToolCallID       string    `bun:"tool_call_id,notnull"`
	Name             string    `bun:"name,notnull"`
	CreatedAt        time.Time `bun:"created_at,notnull"`
	// Attachments is the JSON of the message's attachments; nil for none.
	Attachments *string `bun:"attachments"`
}

type runRow struct {
	bun.BaseModel `bun:"table:runs"`

	ID           string     `bun:"id,pk"`
	SessionID    string     `bun:"session_id,notnull"`
	UserID       string     `bun:"user_id,notnull"`
	State        string     `bun:"state,notnull"`
	StopReason   string     `bun:"stop_reason,notnull"`
	Question     string     `bun:"question,notnull"`
	Answer       string     `bun:"answer,notnull"`
	Error        string     `bun:"error,notnull"`
	ModelName    string     `bun:"model_name,notnull"`
	Owner        string     `bun:"owner,notnull"`
	Spec         *string    `bun:"spec"`
	Pending      *string    `bun:"pending"`
	InputTokens  int64      `bun:"input_tokens,notnull"`
	OutputTokens int64      `bun:"output_tokens,notnull"`
	TotalTokens  int64      `bun:"total_tokens,notnull"`
	LastSeq      int64      `bun:"last_seq,notnull"`
	CreatedAt    time.Time  `bun:"created_at,notnull"`
	StartedAt    *time.Time `bun:"started_at"`
	FinishedAt   *time.Time `bun:"finished_at"`
}

type eventRow struct {
	bun.BaseModel `bun:"table:events"`

	RunID     string    `bun:"run_id,pk"`
	Seq       int64     `bun:"seq,pk"`
	SessionID string    `bun:"session_id,notnull"`
	Type      string    `bun:"type,notnull"`
	Data      *string   `bun:"data"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

type toolLogRow struct {
	bun.BaseModel `bun:"table:tool_logs"`

	ID         int64     `bun:"id,pk,autoincrement"`
	RunID      string    `bun:"run_id,notnull"`
	SessionID  string    `bun:"session_id,notnull"`
	UserID     string    `bun:"user_id,notnull"`
	CallID     string    `bun:"call_id,notnull"`
	Tool       string    `bun:"tool,notnull"`
	Arguments  *string   `bun:"arguments"`
	Result     string    `bun:"result,notnull"`
	IsError    bool      `bun:"is_error,notnull"`
	DurationMS int64     `bun:"duration_ms,notnull"`
	CreatedAt  time.Time `bun:"created_at,notnull"`
	FrontEnd   string    `bun:"front_end,notnull"`
	Via        string    `bun:"via,notnull"`
	Outcome    string    `bun:"outcome,notnull"`
	Reason     string    `bun:"reason,notnull"`
}

// stamp is t as stored: microseconds (truncated), UTC; zero becomes now.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.Round(0).Truncate(time.Microsecond).UTC()
}

func stampPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Round(0).Truncate(time.Microsecond).UTC()
	return &v
}

func rawToText(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func textToRaw(s *string) json.RawMessage {
	if s == nil || *s == "" {
		return nil
	}
	return json.RawMessage(*s)
}

func fromSessionRow(r *sessionRow) *orchestrator.Session {
	return &orchestrator.Session{ID: r.ID, UserID: r.UserID, Title: r.Title,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// storedToolCall is a ToolCall as kept in messages.tool_calls. Arguments is
// a string holding the model's bytes exactly, so arguments that are not
// valid JSON (a model's mistake the loop reports back) survive too.
type storedToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

func toMessageRow(sessionID string, m orchestrator.Message) (messageRow, error) {
	row := messageRow{SessionID: sessionID, RunID: m.RunID, Role: m.Role, Content: m.Content,
		ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID, Name: m.Name, CreatedAt: stamp(m.CreatedAt)}
	if len(m.ToolCalls) > 0 {
		calls := make([]storedToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			calls[i] = storedToolCall{ID: orchestrator.StoredText(c.ID), Name: orchestrator.StoredText(c.Name),
				Arguments: orchestrator.StoredText(string(c.Arguments))}
		}
		b, err := json.Marshal(calls)
		if err != nil {
			return row, fmt.Errorf("storage: encode tool calls: %w", err)
		}
		s := string(b)
		row.ToolCalls = &s
	}
	if len(m.Attachments) > 0 {
		as := make([]orchestrator.Attachment, len(m.Attachments))
		for i, a := range m.Attachments {
			a.Name, a.MimeType, a.Content = orchestrator.StoredText(a.Name), orchestrator.StoredText(a.MimeType), orchestrator.StoredText(a.Content)
			as[i] = a
		}
		b, err := json.Marshal(as)
		if err != nil {
			return row, fmt.Errorf("storage: encode attachments: %w", err)
		}
		s := string(b)
		row.Attachments = &s
	}
	return row, nil
}

func fromMessageRow(r *messageRow) (orchestrator.Message, error) {
	m := orchestrator.Message{Role: r.Role, Content: r.Content, ReasoningContent: r.ReasoningContent,
		ToolCallID: r.ToolCallID, Name: r.Name, RunID: r.RunID, CreatedAt: r.CreatedAt.UTC()}
	if r.ToolCalls != nil && *r.ToolCalls != "" {
		var calls []storedToolCall
		if err := json.Unmarshal([]byte(*r.ToolCalls), &calls); err != nil {
			return m, fmt.Errorf("storage: decode tool calls of message %d: %w", r.ID, err)
		}
		for _, c := range calls {
			tc := orchestrator.ToolCall{ID: c.ID, Name: c.Name}
			if c.Arguments != "" {
				tc.Arguments = json.RawMessage(c.Arguments)
			}
			m.ToolCalls = append(m.ToolCalls, tc)
		}
	}
	if r.Attachments != nil && *r.Attachments != "" {
		if err := json.Unmarshal([]byte(*r.Attachments), &m.Attachments); err != nil {
			return m, fmt.Errorf("storage: decode attachments of message %d: %w", r.ID, err)
		}
	}
	return m, nil
}

// specText encodes a run's spec as stored (nil stays NULL).
func specText(s *orchestrator.RunSpec) *string {
	if s == nil {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil // a RunSpec always encodes
	}
	return rawToText(b)
}

// textSpec decodes a stored spec; an unreadable one reads as none (the
// run then cannot be resumed, only ended).
func textSpec(t *string) *orchestrator.RunSpec {
	if t == nil || *t == "" {
		return nil
	}
	s := new(orchestrator.RunSpec)
	if json.Unmarshal([]byte(*t), s) != nil {
		return nil
	}
	return s
}

func toRunRow(r *orchestrator.Run) *runRow {
	return &runRow{Spec: specText(r.Spec), Pending: pendingText(r.Pending), ID: r.ID, SessionID: r.SessionID, UserID: r.UserID, State: string(r.State),
		StopReason: string(r.StopReason), Question: r.Question, Answer: r.Answer, Error: r.Error,
		ModelName: r.ModelName, Owner: r.Owner, InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
		TotalTokens: r.Usage.TotalTokens, LastSeq: r.LastSeq, CreatedAt: stamp(r.CreatedAt),
		StartedAt: stampPtr(r.StartedAt), FinishedAt: stampPtr(r.FinishedAt)}
}

func fromRunRow(r *runRow) *orchestrator.Run {
	return &orchestrator.Run{ID: r.ID, SessionID: r.SessionID, UserID: r.UserID,
		State: orchestrator.RunState(r.State), StopReason: orchestrator.StopReason(r.StopReason),
		Question: r.Question, Answer: r.Answer, Error: r.Error, ModelName: r.ModelName, Owner: r.Owner, Spec: textSpec(r.Spec), Pending: textPending(r.Pending),
		Usage:   orchestrator.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, TotalTokens: r.TotalTokens},
		LastSeq: r.LastSeq, CreatedAt: r.CreatedAt.UTC(), StartedAt: stampPtr(r.StartedAt), FinishedAt: stampPtr(r.FinishedAt)}
}

func toEventRow(e orchestrator.Event) eventRow {
	return eventRow{RunID: e.RunID, Seq: e.Seq, SessionID: e.SessionID, Type: e.Type,
		Data: rawToText(e.Data), CreatedAt: stamp(e.Time)}
}

func fromEventRow(r *eventRow) orchestrator.Event {
	return orchestrator.Event{RunID: r.RunID, SessionID: r.SessionID, Seq: r.Seq, Type: r.Type,
		Data: textToRaw(r.Data), Time: r.CreatedAt.UTC()}
}

func toToolLogRow(l *orchestrator.ToolLog) *toolLogRow {
	return &toolLogRow{RunID: l.RunID, SessionID: l.SessionID, UserID: l.UserID, CallID: l.CallID,
		Tool: l.Tool, Arguments: rawToText(l.Arguments), Result: l.Result, IsError: l.IsError,
		DurationMS: l.DurationMS, CreatedAt: stamp(l.CreatedAt),
		FrontEnd: l.FrontEnd, Via: l.Via, Outcome: l.Outcome, Reason: l.Reason}
}

func fromToolLogRow(r *toolLogRow) orchestrator.ToolLog {
	return orchestrator.ToolLog{ID: r.ID, RunID: r.RunID, SessionID: r.SessionID, UserID: r.UserID, CallID: r.CallID,
		Tool: r.Tool, Arguments: textToRaw(r.Arguments), Result: r.Result, IsError: r.IsError,
		DurationMS: r.DurationMS, CreatedAt: r.CreatedAt.UTC(),
		FrontEnd: r.FrontEnd, Via: r.Via, Outcome: r.Outcome, Reason: r.Reason}
}
