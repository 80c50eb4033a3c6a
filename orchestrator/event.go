package orchestrator

import (
	"encoding/json"
	"time"
)

// Event is one entry of a run's event log. Seq is dense and monotonic per run,
// starting at 1: a subscriber that has seen seq n and asks for events after n
// gets n+1, n+2, ... with no gap and no duplicate.
type Event struct {
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// Event types. The names are the ones users of wunder know.
const (
	EventProgress        = "progress"
	EventLLMRequest      = "llm_request"
	EventLLMOutputDelta  = "llm_output_delta"
	EventLLMStreamRetry  = "llm_stream_retry"
	EventLLMOutput       = "llm_output"
	EventTokenUsage      = "token_usage"
	EventToolCall        = "tool_call"
	EventToolOutputDelta = "tool_output_delta"
	EventToolResult      = "tool_result"
	EventFinal           = "final"
	// EventUserInputRequired announces a run that waits for a person's
	// answer to its question (RunWaitingInput).
	EventUserInputRequired = "user_input_required"
	// A2A delegation events, emitted by a2a@service tools through
	// ToolInvocation.Emit.
	EventA2ARequest = "a2a_request"
	EventA2AStatus  = "a2a_status"
	EventA2AResult  = "a2a_result"
	EventError      = "error"
)

// FinalData is the payload of the final event, the last event of every run.
type FinalData struct {
	Answer     string     `json:"answer"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
	State      RunState   `json:"state"`
	Error      string     `json:"error,omitempty"`
	// Artifacts are the ones the run attached (artifact.go), in order.
	Artifacts []ArtifactData `json:"artifacts,omitempty"`
	// A2UI are the A2UI batches the run sent (a2ui.go), in order.
	A2UI []A2UIData `json:"a2ui,omitempty"`
}

// ProgressData is the payload of a progress event.
type ProgressData struct {
	Stage   string `json:"stage"`
	Summary string `json:"summary"`
	Round   int    `json:"round,omitempty"`
}

// LLMRequestData is the payload of llm_request.
type LLMRequestData struct {
	Round    int    `json:"round"`
	Model    string `json:"model"`
	Messages int    `json:"messages"`
	Tools    int    `json:"tools"`
	Mode     string `json:"tool_call_mode"`
}

// LLMDeltaData is the payload of llm_output_delta.
type LLMDeltaData struct {
	Round          int    `json:"round"`
	Delta          string `json:"delta,omitempty"`
	ReasoningDelta string `json:"reasoning_delta,omitempty"`
}

// LLMRetryData is the payload of llm_stream_retry.
type LLMRetryData struct {
	Round   int    `json:"round"`
	Attempt int    `json:"attempt"`
	DelayMS int64  `json:"delay_ms"`
	Reason  string `json:"reason"`
}

// LLMOutputData is the payload of llm_output.
type LLMOutputData struct {
	Round            int        `json:"round"`
	Content          string     `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	FinishReason     string     `json:"finish_reason,omitempty"`
}

// TokenUsageData is the payload of token_usage.
type TokenUsageData struct {
	Round int `json:"round"`
	// Model is the configured model that answered (a fallback's name
	// after a failover).
	Model string `json:"model"`
	Usage Usage  `json:"usage"`
	Total Usage  `json:"total"`
}

// ToolCallData is the payload of tool_call.
type ToolCallData struct {
	Round     int             `json:"round"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolOutputDeltaData is the payload of tool_output_delta.
type ToolOutputDeltaData struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Stream string `json:"stream,omitempty"` // stdout | stderr | progress | log
	Delta  string `json:"delta"`
}

// ToolResultData is the payload of tool_result.
type ToolResultData struct {
	Round      int             `json:"round"`
	CallID     string          `json:"call_id"`
	Name       string          `json:"name"`
	Content    string          `json:"content"`
	IsError    bool            `json:"is_error"`
	Data       json.RawMessage `json:"data,omitempty"`
	DurationMS int64           `json:"duration_ms"`
}

// ErrorData is the payload of error.
type ErrorData struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
