package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// The memory queue's workers. Goroutines: Options.Memory.Workers workers,
// started by New and tracked by memory.wg; Close stops them after the runs
// have ended (a run's end may queue a task), and a worker stopped in the
// middle of a summary puts its task back in the queue for the next start
// or another replica.

// memoryLeaseSlack is added to the call timeout to make a task's lease: a
// worker that died is replaced once its call could not be running any
// more.
const memoryLeaseSlack = 30 * time.Second

// memoryMaxAttempts bounds the claims of one task (a task that keeps
// killing its worker must not loop forever).
const memoryMaxAttempts = 3

// memory is the running memory part of an orchestrator; nil when off.
type memory struct {
	o    *Orchestrator
	st   MemoryStore
	opts MemoryOptions
	// wake tells idle workers a task was queued here.
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// switches are the users' switches as runs use them (switches.go).
	switches switchCache
}

// startMemory starts memory when it is on and the store keeps it.
func (o *Orchestrator) startMemory() {
	mo := o.opts.Memory
	if !mo.Enabled {
		return
	}
	st, ok := o.store.(MemoryStore)
	if !ok {
		o.log.Warn("long-term memory is on but the store does not keep it; memory stays off")
		return
	}
	mo = mo.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &memory{o: o, st: st, opts: mo, wake: make(chan struct{}, mo.Workers), ctx: ctx, cancel: cancel,
		switches: switchCache{ttl: mo.SwitchTTL}}
	o.memory = m
	for i := range mo.Workers {
		m.wg.Add(1)
		go m.work(i)
	}
}

// stop ends the workers; a summary in flight is abandoned and its task
// released.
func (m *memory) stop() {
	if m == nil {
		return
	}
	m.cancel()
	m.wg.Wait()
}

// queueMemory queues the session of a run that ended finished for
// summarisation, when its user has memory on. A run that found the switch
// off when it built its prompt is not summarised, even if its user turned
// memory on while it ran (nothing of it was remembered going in, so
// nothing of it is remembered going out), and the switch is not read
// again; one that found it on reads it again here, so turning memory off
// during a run is honoured at its end.
func (o *Orchestrator) queueMemory(lr *liveRun) {
	m := o.memory
	if m == nil || lr.memoryOff.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	on, err := m.enabled(ctx, lr.userID)
	if err != nil {
		o.log.Warn("memory switch unreadable; session not queued for memory", "run_id", lr.id, "err", err)
		return
	}
	if !on {
		return
	}
	t := &MemoryTask{ID: newID("mem_task_"), UserID: lr.userID, SessionID: lr.sessionID, RunID: lr.id,
		Language: lr.language, State: MemoryQueued, QueuedAt: o.opts.Now()}
	err = o.retry(ctx, "queue a memory task", func(ctx context.Context) error { return m.st.EnqueueMemoryTask(ctx, t, m.opts.QueueSize) })
	if err != nil {
		o.log.Warn("session not queued for memory", "run_id", lr.id, "session_id", lr.sessionID, "err", err)
		return
	}
	select {
	case m.wake <- struct{}{}:
	default: // every worker is already awake
	}
}

// work is one worker: claim a task, summarise, repeat; idle, it waits for
// a wake-up or the poll interval.
func (m *memory) work(n int) {
	defer m.wg.Done()
	owner := fmt.Sprintf("%s/memory-%d", m.o.instance, n)
	tick := time.NewTicker(m.opts.PollInterval)
	defer tick.Stop()
	lease := m.opts.Timeout + memoryLeaseSlack
	for m.ctx.Err() == nil {
		t, err := m.st.ClaimMemoryTask(m.ctx, owner, m.o.opts.Now(), lease)
		if err != nil && m.ctx.Err() == nil {
			m.o.log.Warn("memory task not claimed", "err", err)
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
func (m *memory) process(t *MemoryTask) {
	o := m.o
	var summary string
	var err error
	if t.Attempts > memoryMaxAttempts {
		err = fmt.Errorf("given up after %d attempts", memoryMaxAttempts)
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
			o.log.Warn("memory task not released; it is taken over when its lease ends", "task_id", t.ID, "err", rerr)
		}
		return
	}
	now := o.opts.Now()
	if err == nil {
		rec := &MemoryRecord{ID: newID("mem_"), UserID: t.UserID, SessionID: t.SessionID,
			Summary: "[" + now.UTC().Format("2006-01-02 15:04:05") + "] " + summary, CreatedAt: now, UpdatedAt: now}
		err = o.retry(bg, "store a memory record", func(ctx context.Context) error { return m.st.PutMemoryRecord(ctx, rec, m.opts.MaxRecords) })
	}
	t.State, t.FinishedAt = MemoryDone, &now
	if err != nil {
		t.State, t.Error = MemoryFailed, err.Error()
		o.log.Warn("memory summary failed", "task_id", t.ID, "session_id", t.SessionID, "err", err)
	}
	if eerr := m.st.EndMemoryTask(bg, t); eerr != nil {
		o.log.Warn("memory task's end not stored", "task_id", t.ID, "err", eerr)
	}
}

// memoryPrompts are the summarisation instructions per language.
var memoryPrompts = map[string]string{
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

// memoryHistoryHeads introduce the merged history in the user message.
var memoryHistoryHeads = map[string]string{
	"en": "The conversation:",
	"zh": "对话内容：",
}

// maxMemoryInputTokens bounds the conversation given to the summariser
// when the model's window is unknown; its oldest part is left out.
const maxMemoryInputTokens = 24000

// summarise asks the memory model for a summary of the task's session: the
// memory prompt as the system message and the session's history merged
// into one user message. It returns the summary and the model's name.
func (m *memory) summarise(ctx context.Context, t *MemoryTask) (summary, model string, err error) {
	o := m.o
	defer func() {
		if p := recover(); p != nil {
			o.log.Error("memory summary panicked", "task_id", t.ID, "panic", p, "stack", string(debug.Stack()))
			err = errors.New("internal error")
		}
	}()
	mdl, settings, err := o.models.Lookup(m.opts.Model)
	if err != nil {
		return "", m.opts.Model, err
	}
	model = firstNonEmpty(settings.Name, m.opts.Model)
	sess, err := o.store.GetSession(ctx, t.SessionID)
	if err != nil {
		return "", model, err
	}
	if sess.UserID != t.UserID {
		return "", model, fmt.Errorf("%w: session %s", ErrNotFound, t.SessionID)
	}
	history, err := o.store.ListMessages(ctx, t.SessionID, o.opts.MaxHistoryItems)
	if err != nil {
		return "", model, err
	}
	lang := t.Language
	system, ok := memoryPrompts[lang]
	if !ok {
		lang, system = "en", memoryPrompts["en"]
	}
	budget := maxMemoryInputTokens
	if settings.MaxContext > 0 {
		budget = max(settings.MaxContext-settings.MaxOutput-textTokens(system)-256, 1000)
	}
	text := mergeHistory(fromLastSummary(history), o.tools, budget)
	if text == "" {
		return "", model, errors.New("the session has nothing to remember")
	}
	req := &ModelRequest{
		Messages: []Message{{Role: RoleSystem, Content: system},
			{Role: RoleUser, Content: memoryHistoryHeads[lang] + "\n\n" + text}},
		MaxOutput:   settings.MaxOutput,
		Temperature: settings.Temperature,
	}
	for ev, err := range mdl.Generate(ctx, req) {
		if err != nil {
			return "", model, fmt.Errorf("summary: %w", err)
		}
		if r := ev.Response; r != nil {
			text := strings.TrimSpace(cleanAnswer(r.Content))
			if text == "" {
				return "", model, errors.New("summary: the model answered with nothing")
			}
			if r.Model != "" {
				model = r.Model
			}
			return clip(text, maxMemorySummary), model, nil
		}
	}
	return "", model, errors.New("summary: the model ended without a response")
}

// mergeHistory writes a session's messages as "role: text" paragraphs,
// keeping the newest that fit in budget estimated tokens.
func mergeHistory(history []Message, reg *Registry, budget int) string {
	var parts []string
	used := 0
	rendered := renderMessages(history, ModeToolCall, reg, false)
	for i := len(rendered) - 1; i >= 0; i-- {
		msg := rendered[i]
		if msg.Role == RoleSystem || strings.TrimSpace(msg.Content) == "" {
			continue
		}
		p := fmt.Sprintf("%s: %s", msg.Role, clip(strings.TrimSpace(msg.Content), 4000))
		cost := textTokens(p) + 1
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
