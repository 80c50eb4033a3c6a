package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// EventCompaction reports that the older part of a conversation was replaced
// by a summary.
const EventCompaction = "compaction"

// CompactionData is the payload of a compaction event.
type CompactionData struct {
	Round int `json:"round"`
	// Messages is how many messages the summary replaced.
	Messages     int    `json:"messages"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Error        string `json:"error,omitempty"`
}

// compactionName marks the stored summary message; history loading starts
// from the newest one.
const compactionName = "compaction"

var compactionPrompts = map[string]struct{ system, head string }{
	"en": {
		system: "You compress conversations. Summarise the conversation you are given so that the summary can replace it: " +
			"keep the user's goals and preferences, decisions made, facts learned, file names and paths, the results of tool calls " +
			"that still matter, and open questions. Write concise Markdown in the conversation's language. Output only the summary.",
		head: "[Summary of the earlier conversation]",
	},
	"zh": {
		system: "你负责压缩对话。请总结给出的对话，使总结可以替代原对话：保留用户的目标和偏好、已做出的决定、获得的事实、文件名和路径、仍然重要的工具调用结果以及未解决的问题。" +
			"使用对话所用的语言，以简洁的 Markdown 输出，只输出总结。",
		head: "[此前对话的总结]",
	},
}

// estimateTokens is a cheap, deliberately generous estimate: a token per 4
// bytes of ASCII and one per other character (CJK text is about one token
// per character).
func estimateTokens(msgs []Message) int {
	n := 0
	count := func(s string) {
		ascii := 0
		for _, r := range s {
			if r < utf8.RuneSelf {
				ascii++
			} else {
				n++
			}
		}
		n += (ascii + 3) / 4
	}
	for _, m := range msgs {
		n += 4 // role and framing
		count(m.Content)
		count(m.ReasoningContent)
		for _, c := range m.ToolCalls {
			count(c.Name)
			count(string(c.Arguments))
		}
	}
	return n
}

// fromLastSummary trims stored history to what the newest summary does not
// cover: the summary itself, then the run that made it (whose messages
// were stored before the summary), then what came after.
func fromLastSummary(history []Message) []Message {
	k := -1
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Name == compactionName && history[i].Role == RoleUser {
			k = i
			break
		}
	}
	if k < 0 {
		return history
	}
	run := history[k].RunID
	start := k
	for start > 0 && history[start-1].RunID == run && run != "" {
		start--
	}
	out := make([]Message, 0, len(history)-start)
	out = append(out, history[k])
	out = append(out, history[start:k]...)
	return append(out, history[k+1:]...)
}

// maybeCompact replaces msgs[1:runStart] (the history before this run's
// question; msgs[0] is the system prompt) with a summary when the request
// would exceed the model's budget. It returns the messages and the new
// index of the question. A failed summary is reported and not tried again
// in this run; the request then goes out as it is.
func (l *loop) maybeCompact(ctx context.Context, msgs []Message, runStart int) ([]Message, int) {
	s := l.lr.settings
	if s.MaxContext <= 0 || s.CompactionRatio <= 0 || l.compactionFailed {
		return msgs, runStart
	}
	budget := int(float64(s.MaxContext) * s.CompactionRatio)
	before := max(estimateTokens(msgs), l.lastInputTokens)
	if before < budget || runStart < 3 {
		// Under budget, or nothing older than this run to fold: a run that
		// overflows on its own turns is left to the model's limits.
		return msgs, runStart
	}
	old := msgs[1:runStart]
	summary, err := l.summarize(ctx, old)
	if err != nil {
		if ctx.Err() == nil {
			l.compactionFailed = true
			l.log.emit(EventCompaction, CompactionData{Round: l.round, TokensBefore: before, Error: err.Error()})
		}
		return msgs, runStart
	}
	texts := compactionPrompts[l.lr.language]
	if texts.head == "" {
		texts = compactionPrompts["en"]
	}
	sum := Message{Role: RoleUser, Name: compactionName, Content: texts.head + "\n\n" + summary, RunID: l.lr.id, CreatedAt: l.o.opts.Now()}
	out := make([]Message, 0, 2+len(msgs)-runStart)
	out = append(out, msgs[0], sum)
	out = append(out, msgs[runStart:]...)
	l.save(ctx, sum)
	l.lastInputTokens = 0
	l.log.emit(EventCompaction, CompactionData{Round: l.round, Messages: len(old), TokensBefore: before, TokensAfter: estimateTokens(out)})
	return out, 2
}

// summarize asks the run's model for a summary of msgs, without streaming
// its text to the run's clients.
func (l *loop) summarize(ctx context.Context, msgs []Message) (string, error) {
	texts := compactionPrompts[l.lr.language]
	if texts.system == "" {
		texts = compactionPrompts["en"]
	}
	var sb strings.Builder
	for _, m := range renderMessages(msgs, ModeToolCall, l.o.tools) {
		fmt.Fprintf(&sb, "%s: %s\n\n", m.Role, clip(m.Content, 4000))
	}
	req := &ModelRequest{
		Messages: []Message{{Role: RoleSystem, Content: texts.system}, {Role: RoleUser, Content: sb.String()}},
		Stream:   l.lr.settings.Stream,
	}
	for ev, err := range l.lr.model.Generate(ctx, req) {
		if err != nil {
			return "", fmt.Errorf("summary: %w", err)
		}
		if r := ev.Response; r != nil {
			if r.Usage != nil {
				l.usage.Add(*r.Usage)
			}
			if text := cleanAnswer(r.Content); text != "" {
				return text, nil
			}
			return "", errors.New("summary: the model answered with nothing")
		}
	}
	return "", errors.New("summary: the model ended without a response")
}
