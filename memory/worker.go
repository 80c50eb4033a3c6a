package memory

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The memory queue's workers. Goroutines: Options.Workers workers,
// started by New and tracked by Memory.wg; Close stops them after the
// core's runs have ended (a run's end may queue a task), and a worker
// stopped in the middle of a summary puts its task back in the queue for
// the next start or another replica.

// leaseSlack is added to the call timeout to make a task's lease: a
// worker that died is replaced once its call could not be running any
// more.
const leaseSlack = 30 * time.Second

// maxAttempts bounds the claims of one task (a task that keeps killing
// its worker must not loop forever).
const maxAttempts = 3

// RunFinished implements [orchestrator.Memory]: it queues the session of
// a run that ended finished for summarisation, when its user has memory
// on. The core does not call it for a run that found the switch off when
// it built its prompt: such a run is not summarised, even if its user
// turned memory on while it ran (nothing of it was remembered going in,
// so nothing of it is remembered going out). For one that found it on,
// the switch is read again here, so turning memory off during a run is
// honoured at its end.
func (m *Memory) RunFinished(ctx context.Context, r orchestrator.FinishedRun) {
	if !m.on {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	on, err := m.enabled(ctx, r.UserID)
	if err != nil {
		m.log.Warn("memory switch unreadable; session not queued for memory", "run_id", r.ID, "err", err)
		return
	}
	if !on {
		return
	}
	t := &Task{ID: orchestrator.NewID("mem_task_"), UserID: r.UserID, SessionID: r.SessionID, RunID: r.ID,
		Language: r.Language, State: Queued, QueuedAt: m.opts.Now()}
	err = m.retry(ctx, "queue a memory task", func(ctx context.Context) error { return m.st.EnqueueMemoryTask(ctx, t, m.opts.QueueSize) })
	if err != nil {
		m.log.Warn("session not queued for memory", "run_id", r.ID, "session_id", r.SessionID, "err", err)
		return
	}
	select {
	case m.wake <- struct{}{}:
	default: // every worker is already awake
	}
}

// retry is the core's retry of store writes (orchestrator.RetryStore),
// within Options.StoreRetry.
func (m *Memory) retry(ctx context.Context, what string, op func(context.Context) error) error {
	return orchestrator.RetryStore(ctx, m.opts.StoreRetry, op, func(attempt int, err error) {
		m.log.Warn("store write failed; retrying", "op", what, "attempt", attempt, "err", err)
	})
}

// work is one worker: claim a task, summarise, repeat; idle, it waits for
// a wake-up or the poll interval.
func (m *Memory) work(n int) {
	defer m.wg.Done()
	owner := fmt.Sprintf("%s/memory-%d", m.opts.Owner, n)
	tick := time.NewTicker(m.opts.PollInterval)
	defer tick.Stop()
	lease := m.opts.Timeout + leaseSlack
	for m.ctx.Err() == nil {
		t, err := m.st.ClaimMemoryTask(m.ctx, owner, m.opts.Now(), lease)
		if err != nil && m.ctx.Err() == nil {
			m.log.Warn("memory task not claimed", "err", err)
		}
		if t == nil {
			select {
			case <-m.ctx.Done():
			case <-m.wake:
			case <-tick.C:
			}
			continue
		}
		m.process(t)
	}
}

// process summarises one claimed task and records its end.
func (m *Memory) process(t *Task) {
	var summary string
	var err error
	if t.Attempts > maxAttempts {
		err = fmt.Errorf("given up after %d attempts", maxAttempts)
	} else {
		ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
		summary, t.Model, err = m.summarise(ctx, t)
		cancel()
	}
	bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m.ctx.Err() != nil {
		// Stopping: the task goes back to the queue, for the next start.
		if rerr := m.st.ReleaseMemoryTask(bg, t.ID, t.Owner); rerr != nil {
			m.log.Warn("memory task not released; it is taken over when its lease ends", "task_id", t.ID, "err", rerr)
		}
		return
	}
	now := m.opts.Now()
	if err == nil {
		rec := &Record{ID: orchestrator.NewID("mem_"), UserID: t.UserID, SessionID: t.SessionID,
			Summary: "[" + now.UTC().Format("2006-01-02 15:04:05") + "] " + summary, CreatedAt: now, UpdatedAt: now}
		err = m.retry(bg, "store a memory record", func(ctx context.Context) error { return m.st.PutMemoryRecord(ctx, rec, m.opts.MaxRecords) })
	}
	t.State, t.FinishedAt = Done, &now
	if err != nil {
		t.State, t.Error = Failed, err.Error()
		m.log.Warn("memory summary failed", "task_id", t.ID, "session_id", t.SessionID, "err", err)
	}
	if eerr := m.st.EndMemoryTask(bg, t); eerr != nil {
		m.log.Warn("memory task's end not stored", "task_id", t.ID, "err", eerr)
	}
}

// prompts are the summarisation instructions per language.
var prompts = map[string]string{
	"en": "You maintain an assistant's long-term memory of one user. You are given one conversation between the user and the assistant. " +
		"Write what is worth remembering for later conversations with this user: who the user is, their preferences and habits, " +
		"their goals and projects, decisions made, facts learned, and what was left open. Leave out small talk, tool mechanics " +
		"and anything that only mattered within this conversation. Write one short paragraph of plain text (no headings, no lists) " +
		"in the conversation's language. If nothing is worth remembering, write one sentence saying what the conversation was about.",
	"zh": "你负责维护助手关于某位用户的长期记忆。下面给出用户与助手之间的一段对话。" +
		"请写下今后与该用户对话时值得记住的内容：用户是谁、偏好与习惯、目标与项目、做出的决定、获知的事实，以及尚未解决的事项。" +
		"略去寒暄、工具调用细节以及只在本次对话中有意义的内容。使用对话所用的语言，写一段简短的纯文本（不要标题、不要列表）。" +
		"如果没有值得记住的内容，就用一句话说明这段对话的主题。",
}

// historyHeads introduce the merged history in the user message.
var historyHeads = map[string]string{
	"en": "The conversation:",
	"zh": "对话内容：",
}

// maxInputTokens bounds the conversation given to the summariser
// when the model's window is unknown; its oldest part is left out.
const maxInputTokens = 24000

// summarise asks the memory model for a summary of the task's session: the
// memory prompt as the system message and the session's history merged
// into one user message. It returns the summary and the model's name.
func (m *Memory) summarise(ctx context.Context, t *Task) (summary, model string, err error) {
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("memory summary panicked", "task_id", t.ID, "panic", p, "stack", string(debug.Stack()))
			err = errors.New("internal error")
		}
	}()
	mdl, settings, err := m.models.Lookup(m.opts.Model)
	if err != nil {
		return "", m.opts.Model, err
	}
	model = settings.Name
	if model == "" {
		model = m.opts.Model
	}
	sess, err := m.sessions.GetSession(ctx, t.SessionID)
	if err != nil {
		return "", model, err
	}
	if sess.UserID != t.UserID {
		return "", model, fmt.Errorf("%w: session %s", orchestrator.ErrNotFound, t.SessionID)
	}
	history, err := m.sessions.ListMessages(ctx, t.SessionID, m.opts.MaxHistoryItems)
	if err != nil {
		return "", model, err
	}
	lang := t.Language
	system, ok := prompts[lang]
	if !ok {
		lang, system = "en", prompts["en"]
	}
	budget := maxInputTokens
	if settings.MaxContext > 0 {
		budget = max(settings.MaxContext-settings.MaxOutput-orchestrator.EstimateTextTokens(system)-256, 1000)
	}
	text := mergeHistory(history, budget)
	if text == "" {
		return "", model, errors.New("the session has nothing to remember")
	}
	req := &orchestrator.ModelRequest{
		Messages: []orchestrator.Message{{Role: orchestrator.RoleSystem, Content: system},
			{Role: orchestrator.RoleUser, Content: historyHeads[lang] + "\n\n" + text}},
		MaxOutput:   settings.MaxOutput,
		Temperature: settings.Temperature,
	}
	for ev, err := range mdl.Generate(ctx, req) {
		if err != nil {
			return "", model, fmt.Errorf("summary: %w", err)
		}
		if r := ev.Response; r != nil {
			text := strings.TrimSpace(orchestrator.CleanAnswer(r.Content))
			if text == "" {
				return "", model, errors.New("summary: the model answered with nothing")
			}
			if r.Model != "" {
				model = r.Model
			}
			return clip(text, maxSummary), model, nil
		}
	}
	return "", model, errors.New("summary: the model ended without a response")
}

// mergeHistory writes a session's messages as "role: text" paragraphs,
// from its newest compaction summary on, keeping the newest that fit in
// budget estimated tokens.
func mergeHistory(history []orchestrator.Message, budget int) string {
	var parts []string
	used := 0
	rendered := orchestrator.TextHistory(history)
	for i := len(rendered) - 1; i >= 0; i-- {
		msg := rendered[i]
		if msg.Role == orchestrator.RoleSystem || strings.TrimSpace(msg.Content) == "" {
			continue
		}
		p := fmt.Sprintf("%s: %s", msg.Role, clip(strings.TrimSpace(msg.Content), 4000))
		cost := orchestrator.EstimateTextTokens(p) + 1
		if used+cost > budget {
			break
		}
		used += cost
		parts = append(parts, p)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "\n\n")
}

// clip cuts s to n runes, with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
