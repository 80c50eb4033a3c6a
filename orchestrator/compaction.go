package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Context compaction. Before every model call the loop counts the request
// (Options.Tokens) and compacts the conversation when either trigger fires:
//
//   - ratio: the history usage (the larger of the count and the prompt
//     tokens the model last reported) reaches CompactionRatio × MaxContext;
//   - budget: the request is over the safe budget
//     min(0.9 × MaxContext, MaxContext − MaxOutput − SafetyMargin).
//
// What is kept: the system prompt, the latest interaction block (the run's
// question and its rounds so far) and about KeepTailTokens of the history
// before it, verbatim. Under the budget trigger the results of completed
// tool calls (all but the latest round's) are first replaced by a short
// stub naming the tool and the size, and their long arguments likewise;
// when that is enough no summary is made (strategy trim_tools). Otherwise
// the rest of the history — reasoning removed, long messages clipped — is
// summarised by the run's model with a handoff template (goal, decisions,
// files touched, open items), capped at SummaryMaxTokens, and inserted as
// a "[Context Summary]" system message (strategy summary), which is stored
// so that later runs start from it; a summary that cannot be stored fails
// the run, as any history that cannot be stored does, so the session never
// differs from what the run used. When the summary call fails or times
// out (SummaryTimeout) a placeholder stands in for it and tool results are
// trimmed (strategy fallback): the run goes on, the placeholder is not
// stored, and a later run tries a summary again.

// EventCompaction reports that the conversation sent to the model was
// compacted.
const EventCompaction = "compaction"

// Compaction strategies (CompactionData.Strategy).
const (
	// StrategySummary: the older history was replaced by a summary.
	StrategySummary = "summary"
	// StrategyFallback: the summary failed; a placeholder replaced the
	// older history and tool results were trimmed.
	StrategyFallback = "fallback"
	// StrategyTrimTools: only tool results (and long tool arguments) of
	// completed steps were replaced by stubs.
	StrategyTrimTools = "trim_tools"
)

// Compaction triggers (CompactionData.Trigger).
const (
	// TriggerRatio: history usage reached CompactionRatio of MaxContext.
	TriggerRatio = "ratio"
	// TriggerBudget: the request was over the safe budget.
	TriggerBudget = "budget"
)

// CompactionData is the payload of a compaction event.
type CompactionData struct {
	Round int `json:"round"`
	// Messages is how many messages the summary (or the fallback
	// placeholder) replaced; 0 for trim_tools.
	Messages     int    `json:"messages"`
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after"`
	Error        string `json:"error,omitempty"`
	// Strategy is summary, fallback or trim_tools.
	Strategy string `json:"strategy"`
	// Trigger is ratio or budget.
	Trigger string `json:"trigger"`
	// Budget is the safe budget the request was compared with.
	Budget int `json:"budget"`
	// Kept is how many history messages before the run's question were
	// kept verbatim (the tail).
	Kept int `json:"kept"`
	// ToolsTrimmed is how many tool results were replaced by a stub.
	ToolsTrimmed int `json:"tools_trimmed"`
}

// CompactionOptions configure compaction; the zero value of each field
// means the default stated on it.
type CompactionOptions struct {
	// KeepTailTokens is about how much history before the run's question
	// is kept verbatim. Default 2000; negative = none.
	KeepTailTokens int
	// SummaryMaxTokens caps the summary. Default 1024.
	SummaryMaxTokens int
	// SummaryTimeout bounds the summary call. Default 60s.
	SummaryTimeout time.Duration
	// SafetyMargin is kept free below MaxContext − MaxOutput in the safe
	// budget. Default 1024; negative = none.
	SafetyMargin int
}

func (c CompactionOptions) withDefaults() CompactionOptions {
	if c.KeepTailTokens == 0 {
		c.KeepTailTokens = 2000
	}
	if c.KeepTailTokens < 0 {
		c.KeepTailTokens = 0
	}
	if c.SummaryMaxTokens <= 0 {
		c.SummaryMaxTokens = 1024
	}
	if c.SummaryTimeout <= 0 {
		c.SummaryTimeout = 60 * time.Second
	}
	if c.SafetyMargin == 0 {
		c.SafetyMargin = 1024
	}
	if c.SafetyMargin < 0 {
		c.SafetyMargin = 0
	}
	return c
}

// SafeBudget is the largest request the budget trigger lets through:
// min(0.9 × MaxContext, MaxContext − MaxOutput − margin), never below half
// of MaxContext (a margin larger than the window is a misconfiguration,
// not a reason to compact every request); 0 when MaxContext is unknown.
func SafeBudget(s ModelSettings, margin int) int {
	if s.MaxContext <= 0 {
		return 0
	}
	b := s.MaxContext * 9 / 10
	if alt := s.MaxContext - max(s.MaxOutput, 0) - margin; alt < b {
		b = alt
	}
	return max(b, s.MaxContext/2)
}

// compactionName marks the stored summary message; history loading starts
// from the newest one.
const compactionName = "compaction"

// tailMarker is stored in the summary message's ToolCallID: how many
// history messages before the run that made the summary were kept
// verbatim with it, so that later runs keep them too.
const tailMarker = "keep_tail="

// summaryHead starts the summary message in every language.
const summaryHead = "[Context Summary]"

var compactionPrompts = map[string]struct{ system, fallback string }{
	"en": {
		system: "You write handoff notes. The conversation you are given will be replaced by your note, and the assistant " +
			"will continue the work from the note alone. Write it in the conversation's language, in Markdown, with exactly these sections:\n" +
			"## Goal\nWhat the user wants, with their constraints and preferences.\n" +
			"## Decisions\nWhat was decided or done, and why; results of tool calls that still matter.\n" +
			"## Files touched\nPaths, and what was changed or learnt in each (\"none\" if none).\n" +
			"## Open items\nWhat is unfinished, unanswered or to be checked next.\n" +
			"Keep facts, names and numbers; drop pleasantries. At most %d tokens. Output only the note.",
		fallback: "The earlier part of this conversation (%d messages) could not be summarised (%s) and was left out. " +
			"The latest messages follow; if something from earlier is needed, ask the user.",
	},
	"zh": {
		system: "你负责撰写交接说明。给出的对话将被你的说明替代，助手只凭这份说明继续工作。请使用对话所用的语言，以 Markdown 输出，且只包含以下各节：\n" +
			"## 目标\n用户想要什么，以及其约束和偏好。\n" +
			"## 决定\n已做出的决定或已完成的事及原因；仍然重要的工具调用结果。\n" +
			"## 涉及的文件\n路径，以及在每个文件中修改或了解到的内容（没有则写“无”）。\n" +
			"## 未决事项\n尚未完成、尚未回答或下一步需要检查的事项。\n" +
			"保留事实、名称和数字；省略客套话。不超过 %d 个 token。只输出说明。",
		fallback: "本对话较早的部分（%d 条消息）未能总结（%s），已被省略。以下是最近的消息；如需更早的信息，请询问用户。",
	},
}

func compactionTexts(lang string) struct{ system, fallback string } {
	if t, ok := compactionPrompts[lang]; ok {
		return t
	}
	return compactionPrompts["en"]
}

// isSummary reports whether m is a stored summary (a system message since
// the handoff template; a user message before it).
func isSummary(m Message) bool {
	return m.Name == compactionName && (m.Role == RoleSystem || m.Role == RoleUser)
}

// fromLastSummary trims stored history to what the newest summary does not
// cover: the summary itself, the tail it kept, then the run that made it
// (whose messages were stored before the summary), then what came after.
func fromLastSummary(history []Message) []Message {
	k := -1
	for i := len(history) - 1; i >= 0; i-- {
		if isSummary(history[i]) {
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
	tail, _ := strconv.Atoi(strings.TrimPrefix(history[k].ToolCallID, tailMarker))
	ts := start
	for n := 0; ts > 0 && n < tail; ts-- {
		if !isSummary(history[ts-1]) {
			n++
		}
	}
	out := make([]Message, 0, len(history)-ts)
	out = append(out, history[k])
	for _, m := range history[ts:start] {
		if !isSummary(m) {
			out = append(out, m)
		}
	}
	out = append(out, history[start:k]...)
	return append(out, history[k+1:]...)
}

// request is the model request msgs make, as callModel sends it.
func (l *loop) request(msgs []Message) *ModelRequest {
	lr := l.lr
	req := &ModelRequest{
		Messages:    renderMessages(msgs, lr.mode, l.o.tools, lr.settings.SupportVision),
		Stream:      l.streamed(),
		MaxOutput:   lr.settings.MaxOutput,
		Temperature: lr.settings.Temperature,
		Stop:        lr.settings.Stop,
		Metadata:    lr.req.Metadata,
	}
	if lr.mode == ModeFunctionCall && l.sel != nil {
		req.Tools = l.sel.WireSpecs()
	}
	return req
}

// streamed reports whether the run's model calls are streamed: when the
// model streams, and the caller reads the answer as it grows or the model
// streams always (Delivery.WholeAnswer, ModelSettings.StreamAlways).
func (l *loop) streamed() bool {
	s := l.lr.settings
	return s.Stream && (!l.lr.req.Delivery.WholeAnswer() || s.StreamAlways)
}

// countTokens counts the request msgs make.
func (l *loop) countTokens(msgs []Message) int {
	return l.o.opts.Tokens.CountTokens(l.lr.settings, l.request(msgs))
}

// messageTokens counts one message as part of a request.
func (l *loop) messageTokens(m Message) int {
	req := &ModelRequest{Messages: renderMessages([]Message{m}, l.lr.mode, l.o.tools, l.lr.settings.SupportVision)}
	return max(l.o.opts.Tokens.CountTokens(l.lr.settings, req)-3, 1)
}

// maybeCompact compacts msgs (msgs[0] is the system prompt, msgs[runStart]
// the run's question) when a trigger fires; see the comment at the top of
// the file. It returns the messages and the new index of the question. A
// failed summary falls back to a placeholder; only a summary that cannot
// be stored is an error (the run fails, as for any unstorable history).
func (l *loop) maybeCompact(ctx context.Context, msgs []Message, runStart int) ([]Message, int, error) {
	s := l.lr.settings
	if s.MaxContext <= 0 {
		return msgs, runStart, nil
	}
	co := l.o.opts.Compaction
	count := l.countTokens(msgs)
	usage := max(count, l.historyUsage)
	budget := SafeBudget(s, co.SafetyMargin)
	overRatio := func(n int) bool {
		return s.CompactionRatio > 0 && float64(n) >= s.CompactionRatio*float64(s.MaxContext)
	}
	d := CompactionData{Round: l.round, TokensBefore: usage, Budget: budget}
	switch {
	case count > budget:
		d.Trigger = TriggerBudget
	case overRatio(usage):
		d.Trigger = TriggerRatio
	default:
		return msgs, runStart, nil
	}

	// Under pressure (or with no history to fold) the results of completed
	// tool calls go first.
	if d.Trigger == TriggerBudget || runStart < 2 {
		out, n := trimToolResults(msgs, lastRoundStart(msgs))
		if n > 0 {
			after := l.countTokens(out)
			if runStart < 2 || (after <= budget && !overRatio(after)) {
				d.Strategy, d.ToolsTrimmed, d.TokensAfter = StrategyTrimTools, n, after
				return l.compacted(d, out, runStart)
			}
			msgs, d.ToolsTrimmed = out, n
		}
		if runStart < 2 {
			// A run that overflows on its own turns with nothing left to
			// trim is left to the model's limits.
			return msgs, runStart, nil
		}
	}

	hist := l.prepareHistory(msgs[1:runStart], max(co.KeepTailTokens, 512))
	cut := l.tailStart(hist, co.KeepTailTokens)
	old, tail := hist[:cut], hist[cut:]
	if len(old) == 0 {
		// Everything before the question fits in the tail: the cleaned
		// history (reasoning removed, long messages clipped) is all.
		out := append(append([]Message{msgs[0]}, hist...), msgs[runStart:]...)
		out, n := trimToolResults(out, lastRoundStart(out))
		d.Strategy, d.ToolsTrimmed, d.Kept, d.TokensAfter = StrategyTrimTools, d.ToolsTrimmed+n, len(hist), l.countTokens(out)
		if d.ToolsTrimmed == 0 && d.TokensAfter >= count {
			return msgs, runStart, nil // nothing to fold, nothing trimmed
		}
		return l.compacted(d, out, 1+len(hist))
	}

	d.Messages = len(old)
	var summary string
	err := errors.New("an earlier summary of this run failed")
	if !l.compactionFailed {
		summary, err = l.summarize(ctx, old)
	}
	if ctx.Err() != nil {
		return msgs, runStart, nil // cancelled: the loop ends the run
	}
	sum := Message{Role: RoleSystem, Name: compactionName, RunID: l.lr.id, CreatedAt: l.o.opts.Now()}
	if err != nil {
		l.compactionFailed = true
		d.Strategy, d.Error = StrategyFallback, err.Error()
		sum.Content = summaryHead + "\n\n" + fmt.Sprintf(compactionTexts(l.lr.language).fallback, len(old), err.Error())
		var n int
		tail, n = trimToolResults(tail, len(tail))
		d.ToolsTrimmed += n
	} else {
		d.Strategy = StrategySummary
		sum.Content = summaryHead + "\n\n" + summary
	}
	out := make([]Message, 0, 2+len(tail)+len(msgs)-runStart)
	out = append(out, msgs[0], sum)
	out = append(out, tail...)
	out = append(out, msgs[runStart:]...)
	start := 2 + len(tail)
	// Still over: trim completed steps, then give up the tail.
	if l.countTokens(out) > budget {
		var n int
		out, n = trimToolResults(out, lastRoundStart(out))
		d.ToolsTrimmed += n
	}
	if l.countTokens(out) > budget && len(tail) > 0 {
		out = append(out[:2:2], out[start:]...)
		tail, start = nil, 2
	}
	d.Kept = len(tail)
	if d.Strategy == StrategySummary {
		sum.ToolCallID = tailMarker + strconv.Itoa(len(tail))
		if err := l.keep(sum); err != nil {
			return msgs, runStart, err
		}
	}
	d.TokensAfter = l.countTokens(out)
	return l.compacted(d, out, start)
}

// compacted resets the history usage counter, reports d and returns out.
func (l *loop) compacted(d CompactionData, out []Message, runStart int) ([]Message, int, error) {
	switch l.lr.settings.CompactionReset {
	case ResetKeep:
	case ResetCurrent:
		l.historyUsage = d.TokensAfter
	default:
		l.historyUsage = 0
	}
	l.log.emit(EventCompaction, d)
	return out, runStart, nil
}

// prepareHistory copies hist without reasoning content and with every
// message clipped to about limit tokens.
func (l *loop) prepareHistory(hist []Message, limit int) []Message {
	out := make([]Message, len(hist))
	for i, m := range hist {
		m.ReasoningContent = ""
		if l.messageTokens(m) > limit {
			m.Content = clipTokens(m.Content, limit)
		}
		out[i] = m
	}
	return out
}

// tailStart returns where the verbatim tail of hist begins: the newest
// messages that fit in keep tokens, never an earlier summary and never
// starting with a tool result (whose call would be summarised away).
func (l *loop) tailStart(hist []Message, keep int) int {
	cut, used := len(hist), 0
	for cut > 0 {
		m := hist[cut-1]
		if isSummary(m) {
			break
		}
		c := l.messageTokens(m)
		if used+c > keep {
			break
		}
		used += c
		cut--
	}
	for cut < len(hist) && hist[cut].Role == RoleTool {
		cut++
	}
	return cut
}

// lastRoundStart is the index of the newest assistant message: the
// results after it are the latest round's, which the model has not read
// yet. len(msgs) when there is none.
func lastRoundStart(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return i
		}
	}
	return len(msgs)
}

// Stubs of trimmed tool results and arguments.
const (
	trimResultOver = 256 // results longer than this (bytes) are trimmed
	trimArgsOver   = 512 // arguments longer than this (bytes) are trimmed
	trimmedPrefix  = "[tool result trimmed: "
)

// trimToolResults returns a copy of msgs in which the tool results before
// index keepFrom that are longer than a stub are replaced by one naming
// the tool and the size, and long tool-call arguments likewise (the
// completed steps' metadata), with how many results it trimmed.
func trimToolResults(msgs []Message, keepFrom int) ([]Message, int) {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	n := 0
	for i := range min(keepFrom, len(out)) {
		m := &out[i]
		switch {
		case m.Role == RoleTool && len(m.Content) > trimResultOver && !strings.HasPrefix(m.Content, trimmedPrefix):
			m.Content = fmt.Sprintf("%s%s, %d chars]", trimmedPrefix, m.Name, len([]rune(m.Content)))
			n++
		case m.Role == RoleUser && strings.HasPrefix(m.Content, toolResponseHead):
			// tool_call mode: one "tool_response: {json}" line per result.
			lines := strings.Split(m.Content, "\n")
			for j, line := range lines {
				if t, ok := trimTextResult(line); ok {
					lines[j] = t
					n++
				}
			}
			m.Content = strings.Join(lines, "\n")
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			var calls []ToolCall
			for _, c := range m.ToolCalls {
				if len(c.Arguments) > trimArgsOver {
					b, _ := json.Marshal(map[string]string{"trimmed": fmt.Sprintf("%d bytes of arguments", len(c.Arguments))})
					c.Arguments = b
				}
				calls = append(calls, c)
			}
			m.ToolCalls = calls
		}
	}
	return out, n
}

// trimTextResult trims one tool_call-mode result line, reporting whether
// it did.
func trimTextResult(line string) (string, bool) {
	body, ok := strings.CutPrefix(line, toolResponseHead)
	if !ok {
		return line, false
	}
	var r struct {
		Name    string `json:"name"`
		OK      bool   `json:"ok"`
		Content string `json:"content"`
	}
	if json.Unmarshal([]byte(body), &r) != nil || len(r.Content) <= trimResultOver || strings.HasPrefix(r.Content, trimmedPrefix) {
		return line, false
	}
	return renderTextResult(r.Name, &ToolResult{IsError: !r.OK,
		Content: fmt.Sprintf("%s%s, %d chars]", trimmedPrefix, r.Name, len([]rune(r.Content)))}), true
}

// summarize asks the run's model for a handoff summary of msgs, within
// the summary timeout and cap, without streaming its text to the run's
// clients.
func (l *loop) summarize(ctx context.Context, msgs []Message) (string, error) {
	co := l.o.opts.Compaction
	system := fmt.Sprintf(compactionTexts(l.lr.language).system, co.SummaryMaxTokens)
	var sb strings.Builder
	for _, m := range renderMessages(msgs, ModeToolCall, l.o.tools, false) {
		fmt.Fprintf(&sb, "%s: %s\n\n", m.Role, clip(m.Content, 4000))
	}
	transcript := sb.String()
	// The summary request must fit too: the oldest part goes first.
	if room := SafeBudget(l.lr.settings, co.SafetyMargin) - co.SummaryMaxTokens - textTokens(system) - 64; room > 0 && textTokens(transcript) > room {
		transcript = "[earlier part omitted]\n\n" + clipTokensFront(transcript, room)
	}
	sctx, cancel := context.WithTimeout(ctx, co.SummaryTimeout)
	defer cancel()
	req := &ModelRequest{
		Messages:  []Message{{Role: RoleSystem, Content: system}, {Role: RoleUser, Content: transcript}},
		Stream:    l.lr.settings.Stream,
		MaxOutput: co.SummaryMaxTokens,
	}
	fail := func(err error) (string, error) {
		if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("summary: timed out after %s", co.SummaryTimeout)
		}
		return "", fmt.Errorf("summary: %w", err)
	}
	for ev, err := range l.lr.model.Generate(sctx, req) {
		if err != nil {
			return fail(err)
		}
		if r := ev.Response; r != nil {
			if r.Usage != nil {
				l.usage.Add(*r.Usage)
			}
			if text := cleanAnswer(r.Content); text != "" {
				return clipTokens(text, co.SummaryMaxTokens), nil
			}
			return "", errors.New("summary: the model answered with nothing")
		}
	}
	if sctx.Err() != nil {
		return fail(sctx.Err())
	}
	return "", errors.New("summary: the model ended without a response")
}

// clipTokensFront keeps about the last n estimated tokens of s.
func clipTokensFront(s string, n int) string {
	r := []rune(s)
	lo, hi := 0, len(r)
	for lo < hi { // the smallest start whose suffix fits
		mid := (lo + hi) / 2
		if textTokens(string(r[mid:])) <= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return string(r[lo:])
}
