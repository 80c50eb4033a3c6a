package memory

import (
	"context"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// heads are the block's heading and introduction per language.
var heads = map[string]struct{ head, intro string }{
	"en": {"[Long-term Memory]", "What you remember of earlier sessions with this user, newest first. Use it when it helps; it may be out of date."},
	"zh": {"[Long-term Memory]", "以下是你对该用户以往会话的记忆，按时间从新到旧排列。在有帮助时使用；其中内容可能已经过时。"},
}

// PromptBlock implements [orchestrator.Memory]: the [Long-term Memory]
// block of a user's prompt, "" when memory is off for the user or there is
// nothing to remember. Records go newest first until the budget is spent;
// the first one is clipped to the budget rather than left out.
//
// off reports that the user's switch was read and is off: the run's end
// then need not read it again (see RunFinished).
func (m *Memory) PromptBlock(ctx context.Context, userID, lang string) (block string, off bool) {
	if !m.on {
		return "", false
	}
	on, err := m.enabled(ctx, userID)
	if err != nil {
		m.log.WarnContext(ctx, "memory switch unreadable; no memory in the prompt", "user_id", userID, "err", err)
		return "", false
	}
	if !on {
		return "", true
	}
	recs, err := m.st.ListMemoryRecords(ctx, userID)
	if err != nil {
		m.log.WarnContext(ctx, "memory records unreadable; no memory in the prompt", "user_id", userID, "err", err)
		return "", false
	}
	return render(recs, lang, m.opts.PromptMaxTokens), false
}

// render is PromptBlock's text for records given newest first.
func render(recs []Record, lang string, budget int) string {
	if len(recs) == 0 {
		return ""
	}
	h, ok := heads[lang]
	if !ok {
		h = heads["en"]
	}
	var sb strings.Builder
	sb.WriteString(h.head)
	sb.WriteString("\n")
	sb.WriteString(h.intro)
	left := budget - orchestrator.EstimateTextTokens(h.head) - orchestrator.EstimateTextTokens(h.intro)
	n := 0
	for _, r := range recs {
		s := strings.TrimSpace(r.Summary)
		if s == "" {
			continue
		}
		cost := orchestrator.EstimateTextTokens(s) + 1
		if cost > left {
			if n > 0 || left <= 8 {
				break
			}
			s = orchestrator.ClipTokens(s, left-1)
			cost = left
		}
		sb.WriteString("\n\n")
		sb.WriteString(s)
		left -= cost
		n++
	}
	if n == 0 {
		return ""
	}
	return sb.String()
}
