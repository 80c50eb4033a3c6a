package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// chatRequest is a chat completions request as the server reads it.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature *float64 `json:"temperature"`
	// Stop is a string or a list of strings.
	Stop          json.RawMessage `json:"stop"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// modelRequest is the request as the engine sees it: what the in-process
// face gets from the loop.
func (r chatRequest) modelRequest() *orchestrator.ModelRequest {
	out := &orchestrator.ModelRequest{Stream: r.Stream, MaxOutput: r.MaxTokens, Temperature: r.Temperature}
	if json.Unmarshal(r.Stop, &out.Stop) != nil {
		var one string
		if json.Unmarshal(r.Stop, &one) == nil && one != "" {
			out.Stop = []string{one}
		}
	}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, m.Message)
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, orchestrator.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	return out
}

// chatMessage is one message of the request, read into the core's shape.
type chatMessage struct{ orchestrator.Message }

// UnmarshalJSON reads content as a string or as OpenAI content parts (text
// parts joined, image_url parts with a data URL as image attachments), and
// the reasoning and tool calls of an assistant message.
func (m *chatMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		ToolCallID       string          `json:"tool_call_id"`
		ToolCalls        []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	m.Message = orchestrator.Message{Role: w.Role, ReasoningContent: w.ReasoningContent, ToolCallID: w.ToolCallID}
	for _, c := range w.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, orchestrator.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: arguments(c.Function.Arguments)})
	}
	if len(w.Content) == 0 || string(w.Content) == "null" {
		return nil
	}
	if w.Content[0] == '"' {
		return json.Unmarshal(w.Content, &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(w.Content, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	for _, p := range parts {
		switch {
		case p.Type == "text":
			m.Content += p.Text
		case p.Type == "image_url" && p.ImageURL != nil && strings.HasPrefix(p.ImageURL.URL, "data:image/"):
			m.Attachments = append(m.Attachments, orchestrator.Attachment{Type: orchestrator.AttachmentImage, Content: p.ImageURL.URL})
		default:
			return fmt.Errorf("content part of type %q", p.Type)
		}
	}
	return nil
}

// arguments reads a call's arguments: a string holding JSON (as the wire
// has it), or JSON itself.
func arguments(raw json.RawMessage) json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	if raw = bytes.TrimSpace(raw); len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return raw
}
