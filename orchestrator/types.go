package orchestrator

import (
	"encoding/json"
	"time"
)

// RunState is the state of a run. The machine is
//
//	queued -> running <-> (waiting_approval | waiting_input) -> finished | cancelled | failed
//
// with cancelling before cancelled; lifecycle.go has the whole table.
type RunState string

// Run states.
const (
	RunQueued  RunState = "queued"
	RunRunning RunState = "running"
	// RunWaitingApproval: paused until a person decides the tool calls
	// the run asked approval for (approval.go).
	RunWaitingApproval RunState = "waiting_approval"
	// RunWaitingInput: paused until a person answers the question the
	// run asked (ask the user).
	RunWaitingInput RunState = "waiting_input"
	RunCancelling   RunState = "cancelling"
	RunFinished     RunState = "finished"
	RunCancelled    RunState = "cancelled"
	RunFailed       RunState = "failed"
)

// Waiting reports whether the run is paused for a person: it executes
// nowhere, holds no execution slot, and a decision or an answer on any
// replica resumes it.
func (s RunState) Waiting() bool { return s == RunWaitingApproval || s == RunWaitingInput }

// Terminal reports whether no further transition can happen.
func (s RunState) Terminal() bool {
	return s == RunFinished || s == RunCancelled || s == RunFailed
}

// StopReason says why a run ended.
type StopReason string

// Stop reasons, as users of wunder know them.
const (
	StopModelResponse StopReason = "model_response"
	StopFinalTool     StopReason = "final_tool"
	// StopReply: the model answered with the reply tool, a direct answer
	// that needs no task to follow (A2A answers it with a Message).
	StopReply     StopReason = "reply"
	StopMaxRounds StopReason = "max_rounds"
	StopCancelled StopReason = "cancelled"
	StopError     StopReason = "error"
	// StopInterrupted: the process executing the run stopped (crashed,
	// was killed, lost its lease) before the run ended; the run is failed.
	StopInterrupted StopReason = "interrupted"
)

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Add accumulates o into u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.TotalTokens += o.TotalTokens
}

// Session is a conversation (A2A contextId).
type Session struct {
	ID        string    `json:"session_id"`
	UserID    string    `json:"user_id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Run is one request executed in a session (A2A taskId).
type Run struct {
	ID         string     `json:"run_id"`
	SessionID  string     `json:"session_id"`
	UserID     string     `json:"user_id"`
	State      RunState   `json:"state"`
	StopReason StopReason `json:"stop_reason,omitempty"`
	Question   string     `json:"question"`
	Answer     string     `json:"answer,omitempty"`
	Error      string     `json:"error,omitempty"`
	ModelName  string     `json:"model_name,omitempty"`
	// Owner is the instance executing the run (see Options.InstanceID);
	// it fences the run's writes so a run taken over from a dead instance
	// cannot be written by that instance again.
	Owner string `json:"-"`
	// Spec is what the run was asked besides its question, kept so a run
	// interrupted by a crash can be resumed; nil for runs stored before it.
	Spec *RunSpec `json:"-"`
	// Pending is the round a waiting run suspended (approval.go); nil
	// otherwise.
	Pending *PendingRound `json:"-"`
	Usage   Usage         `json:"usage"`
	// LastSeq is the seq of the last event the run has logged.
	LastSeq    int64      `json:"last_seq"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// RunSpec is the part of a RunRequest a run is executed with, besides its
// user, session and question: what a resumed run needs to go on as it began.
type RunSpec struct {
	ToolNames     []string          `json:"tool_names,omitempty"`
	ExcludeTools  []string          `json:"exclude_tools,omitempty"`
	PreloadSkills []string          `json:"preload_skills,omitempty"`
	ModelName     string            `json:"model_name,omitempty"`
	ToolCallMode  string            `json:"tool_call_mode,omitempty"`
	Language      string            `json:"language,omitempty"`
	Caller        Caller            `json:"caller,omitempty"`
	MaxRounds     int               `json:"max_rounds,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
	MaxOutput     int               `json:"max_output,omitempty"`
	SkipToolCalls bool              `json:"skip_tool_calls,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	ApprovalMode  string            `json:"approval_mode,omitempty"`
	Frontend      string            `json:"frontend,omitempty"`
}

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of a session's history, in the shape models consume.
type Message struct {
	Role             string     `json:"role"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	// Name is the tool's canonical name on a tool message.
	Name string `json:"name,omitempty"`
	// Attachments came with a user's question (converted: text and
	// Markdown, images as data URLs). In a [ModelRequest] only images the
	// model can see remain: the rest is in Content (see withAttachments).
	Attachments []Attachment `json:"attachments,omitempty"`
	RunID       string       `json:"run_id,omitempty"`
	CreatedAt   time.Time    `json:"created_at"`
}

// ToolCall is a model's request to call a tool. Name is canonical (with @)
// once it has passed the registry; Arguments is the raw JSON object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolLog records one tool execution (for monitoring and the tool heatmap).
type ToolLog struct {
	// ID is the store's id of the record (set when read back); the audit
	// pages by it.
	ID         int64           `json:"id,omitempty"`
	RunID      string          `json:"run_id"`
	SessionID  string          `json:"session_id"`
	UserID     string          `json:"user_id"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     string          `json:"result"`
	IsError    bool            `json:"is_error"`
	DurationMS int64           `json:"duration_ms"`
	CreatedAt  time.Time       `json:"created_at"`
	// FrontEnd is the front-end the call came through (a run's
	// RunRequest.Frontend: http, a2a, mcp, connect; mcp for the catalog
	// and the pass-through); Via its path (ViaRun, ViaCatalog,
	// ViaPassthrough).
	FrontEnd string `json:"front_end,omitempty"`
	Via      string `json:"via,omitempty"`
	// Outcome is the policy's decision and how the call went:
	// OutcomeAllowed, OutcomeDenied or OutcomeError; Reason says why a
	// call was denied.
	Outcome string `json:"outcome,omitempty"`
	Reason  string `json:"reason,omitempty"`
}
