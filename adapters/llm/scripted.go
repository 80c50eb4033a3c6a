package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// Scripted is the scripted provider: an [orchestrator.Model] that plays a
// [Script] instead of calling an LLM, for tests and demos. It is stateless
// and safe for concurrent runs: the turn is chosen from the request alone.
//
// The turn of a request is its round within the run: the number of
// assistant messages after the last user message that is a question (user
// messages starting with "tool_response:" carry tool results in tool_call
// mode and are not questions), less the rounds whose turn is played again
// ([Turn.RepeatWhile]: the results that followed it contain its text).
// Past the end of the script, the last turn's text is answered without its
// tool calls, so every run ends.
//
// In function_call mode (the request has Tools) tool calls are returned as
// ToolCalls with ids "call_<round>_<i>"; in tool_call mode they are written
// into the content as <tool_call>{"name":...,"arguments":{...}}</tool_call>
// blocks. Reasoning and content are streamed as deltas in chunks of a word
// (at most 8 characters), waiting DelayMS between two chunks; cancellation
// is noticed between chunks and during the waits.
type Scripted struct {
	script Script
}

var _ orchestrator.Model = (*Scripted)(nil)

// NewScripted returns a model playing script. A script without turns makes
// every call fail.
func NewScripted(script Script) *Scripted {
	return &Scripted{script: script}
}

// toolResponsePrefix starts the user messages that carry tool results in
// tool_call mode.
const toolResponsePrefix = "tool_response:"

// maxChunkRunes bounds a streamed chunk.
const maxChunkRunes = 8

// Generate implements [orchestrator.Model].
func (s *Scripted) Generate(ctx context.Context, req *orchestrator.ModelRequest) iter.Seq2[orchestrator.ModelEvent, error] {
	return func(yield func(orchestrator.ModelEvent, error) bool) {
		if req == nil {
			req = &orchestrator.ModelRequest{}
		}
		round, question := scriptRound(req.Messages)
		turns := s.script.turnsFor(question, req.Metadata)
		if len(turns) == 0 {
			yield(orchestrator.ModelEvent{}, fmt.Errorf("%w: scripted model: script has no turns", orchestrator.ErrUnavailable))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(orchestrator.ModelEvent{}, fmt.Errorf("scripted model: %w", err))
			return
		}
		at := turnIndex(turns, req.Messages)
		turn := turns[min(at, len(turns)-1)]
		if at >= len(turns) {
			turn.ToolCalls = nil
		}
		resp := renderTurn(turn, round, question, len(req.Tools) > 0)
		delay := time.Duration(turn.DelayMS) * time.Millisecond

		first := true
		send := func(text string, reasoning bool) bool {
			for text != "" {
				n := nextChunk(text)
				if !first {
					if err := sleep(ctx, delay); err != nil {
						yield(orchestrator.ModelEvent{}, fmt.Errorf("scripted model: %w", err))
						return false
					}
				}
				first = false
				ev := orchestrator.ModelEvent{Delta: text[:n]}
				if reasoning {
					ev = orchestrator.ModelEvent{ReasoningDelta: text[:n]}
				}
				if !yield(ev, nil) {
					return false
				}
				text = text[n:]
			}
			return true
		}
		if !send(resp.ReasoningContent, true) || !send(resp.Content, false) {
			return
		}
		resp.Usage = turn.usage(req.Messages, resp)
		yield(orchestrator.ModelEvent{Response: resp}, nil)
	}
}

// scriptRound returns the request's round within its run and the run's
// question.
func scriptRound(msgs []orchestrator.Message) (round int, question string) {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if isQuestion(msgs[i]) {
			start, question = i+1, msgs[i].Content
			break
		}
	}
	for _, m := range msgs[start:] {
		if m.Role == orchestrator.RoleAssistant {
			round++
		}
	}
	return round, question
}

// turnIndex is the turn of turns a request plays: one more for each
// assistant message since the question, but not for one whose turn is
// played again (the results after it contain its RepeatWhile).
func turnIndex(turns []Turn, msgs []orchestrator.Message) int {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if isQuestion(msgs[i]) {
			start = i + 1
			break
		}
	}
	at := 0
	for i := start; i < len(msgs); i++ {
		if msgs[i].Role != orchestrator.RoleAssistant {
			continue
		}
		var results strings.Builder
		for j := i + 1; j < len(msgs) && msgs[j].Role != orchestrator.RoleAssistant; j++ {
			results.WriteString(msgs[j].Content)
			results.WriteByte('\n')
		}
		if at < len(turns) && turns[at].RepeatWhile != "" && strings.Contains(results.String(), turns[at].RepeatWhile) {
			continue
		}
		at++
	}
	return at
}

// isQuestion reports whether m is a user message that is not a tool
// result of tool_call mode.
func isQuestion(m orchestrator.Message) bool {
	return m.Role == orchestrator.RoleUser && !strings.HasPrefix(strings.TrimSpace(m.Content), toolResponsePrefix)
}

// renderTurn builds the response of turn (without usage).
func renderTurn(turn Turn, round int, question string, functionMode bool) *orchestrator.ModelResponse {
	resp := &orchestrator.ModelResponse{
		Content:          strings.ReplaceAll(turn.Content, questionPlaceholder, question),
		ReasoningContent: strings.ReplaceAll(turn.Reasoning, questionPlaceholder, question),
		FinishReason:     "stop",
	}
	var text strings.Builder
	text.WriteString(resp.Content)
	for i, c := range turn.ToolCalls {
		args := compactJSON(c.Arguments)
		if functionMode {
			resp.ToolCalls = append(resp.ToolCalls, orchestrator.ToolCall{
				ID:        fmt.Sprintf("call_%d_%d", round, i),
				Name:      c.Name,
				Arguments: args,
			})
			continue
		}
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		block := compactJSON(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{c.Name, args})
		fmt.Fprintf(&text, "<tool_call>%s</tool_call>", block)
	}
	resp.Content = text.String()
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	return resp
}

// compactJSON encodes v without HTML escaping; nil maps become {}.
func compactJSON(v any) json.RawMessage {
	if m, ok := v.(map[string]any); ok && m == nil {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Script.Validate rejects arguments that cannot be encoded.
		return json.RawMessage("{}")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// usage returns the turn's usage, or an estimate of about 4 bytes a token.
func (t Turn) usage(msgs []orchestrator.Message, resp *orchestrator.ModelResponse) *orchestrator.Usage {
	if t.Usage != nil {
		u := &orchestrator.Usage{InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens, TotalTokens: t.Usage.TotalTokens}
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		return u
	}
	in := 0
	for _, m := range msgs {
		in += len(m.Content)
	}
	out := len(resp.Content) + len(resp.ReasoningContent)
	for _, c := range resp.ToolCalls {
		out += len(c.Name) + len(c.Arguments)
	}
	u := &orchestrator.Usage{InputTokens: int64(in+3) / 4, OutputTokens: int64(out+3) / 4}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// nextChunk returns the length of the first streamed chunk of s: up to and
// including the first white space, at most maxChunkRunes runes.
func nextChunk(s string) int {
	runes := 0
	for i, r := range s {
		runes++
		if unicode.IsSpace(r) || runes == maxChunkRunes {
			_, size := utf8.DecodeRuneInString(s[i:])
			return i + size
		}
	}
	return len(s)
}
