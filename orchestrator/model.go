package orchestrator

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// Model is a chat model. Implementations live in adapters/llm (and the fake
// one of the tests in internal/testutil/fakemodel).
//
// Generate streams [ModelEvent]s: any number of deltas and retries, then
// exactly one event with Response set, which is the last. A non-streaming
// implementation yields only the response. Tool call arguments are delivered
// whole in the response, never as fragments. Generate must return promptly
// with ctx.Err() (wrapped) when ctx is cancelled.
type Model interface {
	Generate(ctx context.Context, req *ModelRequest) iter.Seq2[ModelEvent, error]
}

// ModelRequest is one chat completion request.
type ModelRequest struct {
	Messages []Message
	// Tools is set in function_call mode only; names are wire names.
	Tools []ToolSpec
	// Stream asks for a streamed response where the model supports it.
	Stream      bool
	MaxOutput   int
	Temperature *float64
	Stop        []string
	// Metadata is the run's RunRequest.Metadata (read-only; may be nil):
	// what the front-end knew of the request besides its question (A2A:
	// the client's message id). It is never sent to a provider; the
	// scripted model matches scenarios on it (adapters/llm/script.go).
	Metadata map[string]string
}

// ModelEvent is one item of a model's stream.
type ModelEvent struct {
	Delta          string
	ReasoningDelta string
	// Retry is set when the adapter retries the request after a transient
	// failure; the deltas seen so far are void and will be sent again.
	Retry    *ModelRetry
	Response *ModelResponse
}

// ModelRetry describes one retry of a model request.
type ModelRetry struct {
	// Attempt is the number of the attempt about to start (2 for the
	// first retry).
	Attempt int
	Delay   time.Duration
	Reason  string
}

// ModelResponse is a complete model answer.
type ModelResponse struct {
	Content          string
	ReasoningContent string
	// ToolCalls in function_call mode; names are as the model sent them
	// (wire names) and are decoded by the registry.
	ToolCalls    []ToolCall
	Usage        *Usage
	FinishReason string
	// Model names the configured model that answered, when it is not the
	// one the run asked for (a fallback); "" means that one.
	Model string
}

// Tool call modes.
const (
	// ModeToolCall puts the tool list in the system prompt and reads
	// <tool_call>{...}</tool_call> blocks from the model's text.
	ModeToolCall = "tool_call"
	// ModeFunctionCall uses the OpenAI tools/tool_calls fields.
	ModeFunctionCall = "function_call"
)

// ModelSettings are the per-model knobs the loop uses.
type ModelSettings struct {
	Name         string
	ToolCallMode string
	MaxRounds    int
	MaxOutput    int
	Temperature  *float64
	Stop         []string
	Stream       bool
	// StreamAlways streams the model for callers that wait for the whole
	// answer too (DeliverBlocking), so followers of their runs see the
	// answer grow; off, such runs ask for the whole answer.
	StreamAlways bool
	// MaxContext is the context window in tokens; 0 = unknown, which turns
	// compaction off.
	MaxContext int
	// CompactionRatio is the share of MaxContext at which the older
	// conversation is summarised (the ratio trigger); 0 = off. The budget
	// trigger (compaction.go) needs only MaxContext.
	CompactionRatio float64
	// CompactionReset says what becomes of the history usage counter the
	// ratio trigger compares after a compaction: [ResetZero] (""),
	// [ResetCurrent] or [ResetKeep].
	CompactionReset string
	// SupportVision: the model takes images (image parts of a user
	// message); without it an image attachment becomes a note that names it.
	SupportVision bool
	// ModelID is the provider's model id, which picks a tokenizer
	// ([TokenCounter]); "" = unknown.
	ModelID string
}

// History usage resets after a compaction (ModelSettings.CompactionReset).
const (
	// ResetZero sets the counter to 0: the next model report sets it.
	ResetZero = "zero"
	// ResetCurrent sets it to the compacted request's count.
	ResetCurrent = "current"
	// ResetKeep leaves it as it was (the pre-compaction usage) until the
	// next model report replaces it.
	ResetKeep = "keep"
)

// Models resolves a model by name; the empty name means the default model.
// When no model is configured Lookup returns an error wrapping
// [ErrUnavailable] whose message says how to configure one.
type Models interface {
	Lookup(name string) (Model, ModelSettings, error)
}

// ModelFunc adapts a function to [Model].
type ModelFunc func(ctx context.Context, req *ModelRequest) iter.Seq2[ModelEvent, error]

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *ModelRequest) iter.Seq2[ModelEvent, error] {
	return f(ctx, req)
}

// rawJSON marshals v, which must not fail for the package's own types.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	return b
}
