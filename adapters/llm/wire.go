package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/wunder/wunder/orchestrator"
)

// The OpenAI chat completions wire format, as far as wunder uses it. Fields
// that only some servers send (reasoning_content, reasoning) are included;
// unknown fields are ignored.

type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, or for a user message with images the
	// OpenAI content parts ([]wirePart).
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

// wirePart is one content part of a multimodal user message: text, or an
// image as image_url (a data URL).
type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

// userContent is a user message's content: its text, followed by an
// image_url part per image the core left on it (a model with vision).
func userContent(m orchestrator.Message) any {
	var images []wirePart
	for _, a := range m.Attachments {
		if a.Type == orchestrator.AttachmentImage {
			images = append(images, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: a.Content}})
		}
	}
	if len(images) == 0 {
		return m.Content
	}
	return append([]wirePart{{Type: "text", Text: m.Content}}, images...)
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type wireToolCall struct {
	// Index is set in stream deltas only.
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireCallFunc `json:"function"`
}

type wireCallFunc struct {
	Name      string        `json:"name,omitempty"`
	Arguments wireArguments `json:"arguments"`
}

// wireArguments is the arguments string of a tool call. Some servers send a
// JSON object instead of a string; it is kept as its JSON text.
type wireArguments string

func (a *wireArguments) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = wireArguments(s)
		return nil
	}
	if string(b) == "null" {
		*a = ""
		return nil
	}
	*a = wireArguments(b)
	return nil
}

type wireUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// chatResponse is a non-streamed answer.
type chatResponse struct {
	Choices []struct {
		Message      wireDelta `json:"message"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// chatChunk is one event of a streamed answer.
type chatChunk struct {
	Choices []struct {
		Index        int       `json:"index"`
		Delta        wireDelta `json:"delta"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// wireDelta is a stream delta or a whole response message.
type wireDelta struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

// reasoning returns reasoning_content, or reasoning for the servers (vLLM,
// OpenRouter, Ollama) that use that name. Servers sending both send the same
// text twice.
func (d *wireDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
}

// buildRequest maps a ModelRequest to the wire, with the config's defaults.
func (c *Client) buildRequest(req *orchestrator.ModelRequest, stream, includeUsage bool) ([]byte, error) {
	w := chatRequest{
		Model:       c.cfg.Model,
		Messages:    wireMessages(req.Messages),
		Tools:       wireTools(req.Tools),
		MaxTokens:   req.MaxOutput,
		Temperature: req.Temperature,
		Stop:        req.Stop,
		Stream:      stream,
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = c.cfg.MaxOutput
	}
	if w.Temperature == nil {
		w.Temperature = c.cfg.Temperature
	}
	if stream && includeUsage {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("%w: llm %q: encode request: %w", orchestrator.ErrInvalidArgument, c.cfg.Name, err)
	}
	return b, nil
}

// wireMessages maps the history. reasoning_content is sent back only on the
// assistant messages after the last user message, the tool-call steps of the
// current turn: DeepSeek and Kimi thinking models need it there, and older
// reasoners reject it on earlier turns.
func wireMessages(msgs []orchestrator.Message) []wireMessage {
	lastUser := -1
	for i, m := range msgs {
		if m.Role == orchestrator.RoleUser {
			lastUser = i
		}
	}
	out := make([]wireMessage, 0, len(msgs))
	for i, m := range msgs {
		w := wireMessage{Role: m.Role, Content: m.Content}
		switch m.Role {
		case orchestrator.RoleAssistant:
			if i > lastUser {
				w.ReasoningContent = m.ReasoningContent
			}
			for _, tc := range m.ToolCalls {
				w.ToolCalls = append(w.ToolCalls, wireToolCall{
					ID:   tc.ID,
					Type: "function",
					Function: wireCallFunc{
						Name:      tc.Name,
						Arguments: wireArguments(argumentsString(tc.Arguments)),
					},
				})
			}
		case orchestrator.RoleTool:
			w.ToolCallID = m.ToolCallID
		case orchestrator.RoleUser:
			w.Content = userContent(m)
		}
		out = append(out, w)
	}
	return out
}

// argumentsString is the arguments of a call as the wire wants them: a
// string holding a JSON object, "{}" when there are none.
func argumentsString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	// Arguments that were not valid JSON travel as a JSON string (see
	// rawArguments); send the model its own text back.
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func wireTools(specs []orchestrator.ToolSpec) []wireTool {
	if len(specs) == 0 {
		return nil
	}
	out := make([]wireTool, 0, len(specs))
	for _, s := range specs {
		params := bytes.TrimSpace(s.InputSchema)
		if len(params) == 0 || string(params) == "null" || string(params) == "{}" {
			params = emptySchema
		}
		out = append(out, wireTool{
			Type:     "function",
			Function: wireFunction{Name: s.Name, Description: s.Description, Parameters: params},
		})
	}
	return out
}

// rawArguments turns the arguments text a model produced into the
// json.RawMessage of an [orchestrator.ToolCall]: valid JSON as is, nothing as
// {}, and anything else (a truncated object, say) as a JSON string, so the
// message stays valid JSON and the loop reports a malformed call to the
// model instead of failing to encode an event.
func rawArguments(s string) json.RawMessage {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	q, _ := json.Marshal(s)
	return json.RawMessage(q)
}

// callID returns id, or a fresh one for servers that send none.
func callID(id string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("call_%016x", rand.Uint64())
}

func (u *wireUsage) usage() *orchestrator.Usage {
	if u == nil {
		return nil
	}
	out := &orchestrator.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if out.TotalTokens == 0 {
		out.TotalTokens = out.InputTokens + out.OutputTokens
	}
	return out
}

// response converts a non-streamed answer.
func (r *chatResponse) response() (*orchestrator.ModelResponse, error) {
	if r.Error != nil {
		return nil, fmt.Errorf("server error: %s", r.Error.text())
	}
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("response has no choices")
	}
	ch := r.Choices[0]
	out := &orchestrator.ModelResponse{
		Content:          ch.Message.Content,
		ReasoningContent: ch.Message.reasoning(),
		Usage:            r.Usage.usage(),
		FinishReason:     ch.FinishReason,
	}
	for _, tc := range ch.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{
			ID:        callID(tc.ID),
			Name:      tc.Function.Name,
			Arguments: rawArguments(string(tc.Function.Arguments)),
		})
	}
	return out, nil
}

func (e *wireError) text() string {
	s := e.Message
	if s == "" {
		s = e.Type
	}
	if e.Code != nil {
		s = fmt.Sprintf("%s (code %v)", s, e.Code)
	}
	return s
}
