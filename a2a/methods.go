package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// start turns a message into a run (task) of the caller, or, when it
// names an input-required task, into the decisions that task waits for
// (input.go). afterSeq is where a stream of the run starts: 0 for a new
// run, the seq the task waited at for an answered one.
//
// mode says when the caller learns of the task (sendMode).
func (h *Handler) start(ctx context.Context, c *call, p *w.SendParams, mode sendMode) (r *orchestrator.Run, afterSeq int64, err error) {
	m := p.Message
	if err := readA2UI(m); err != nil {
		return nil, 0, err // before anything reads the parts: actions are text from here on
	}
	if m.Role != "" && m.Role != w.RoleUser {
		return nil, 0, errParams("message.role must be user")
	}
	if len(m.Parts) == 0 {
		return nil, 0, errParams("message.parts must not be empty")
	}
	if m.Text() == "" && !slices.ContainsFunc(m.Parts, func(p w.Part) bool { return p.Raw != nil }) {
		return nil, 0, errKind(w.ErrContentTypeNotSupported, "only text, data and file parts are supported")
	}
	if m.TaskID != "" {
		r, err := h.b.GetRun(ctx, c.userID, m.TaskID)
		if err != nil {
			return nil, 0, err
		}
		// Specification section 3.4: a taskId and a contextId that
		// disagree are refused, whatever state the task is in.
		if m.ContextID != "" && m.ContextID != contextOf(r.SessionID) {
			return nil, 0, errParams("contextId %q is not the context of task %s", m.ContextID, r.ID)
		}
		if r.State.Terminal() {
			return nil, 0, errKind(w.ErrUnsupportedOperation, "task %s is in a terminal state; start a new task in context %s", r.ID, contextOf(r.SessionID))
		}
		// The push config first: once decisions are recorded, nothing may
		// fail the answer that told the client otherwise.
		if p.Push != nil {
			if _, err := h.createPush(ctx, c.v, r.UserID, r.ID, *p.Push); err != nil {
				return nil, 0, err
			}
		}
		if err := h.answer(ctx, c, m, r); err != nil {
			return nil, 0, err
		}
		return r, r.LastSeq, nil
	}
	if p.Push != nil {
		if err := h.checkPush(ctx, *p.Push); err != nil {
			return nil, 0, err // before the run starts: a refused config leaves no task
		}
	}
	var sessionID string
	var named bool
	if m.ContextID != "" {
		if sessionID, named, err = sessionOf(h.actor(c), m.ContextID); err != nil {
			return nil, 0, err
		}
	}
	meta := map[string]string{}
	if d, ok := depthOf(m.Metadata, p.Metadata); ok {
		meta[w.DepthKey] = strconv.Itoa(d)
	}
	if m.MessageID != "" {
		meta[MessageIDKey] = short(m.MessageID)
	}
	approval := stringOf(ApprovalModeKey, m.Metadata, p.Metadata)
	if err := orchestrator.CheckApprovalMode(approval); err != nil {
		return nil, 0, errParams("metadata %s: %v", ApprovalModeKey, err)
	}
	// Files are converted (and saved) last before the run starts: a
	// refused one leaves no task, and a request refused before leaves no
	// file.
	in, err := h.splitParts(ctx, h.actor(c), m.Parts)
	if err != nil {
		return nil, 0, err
	}
	r, err = h.b.Start(ctx, orchestrator.RunRequest{
		UserID: h.actor(c), SessionID: sessionID, CreateSession: named, Question: in.text, OfferedTools: h.opts.ToolNames,
		ModelName: h.opts.ModelName, Caller: orchestrator.CallerAgent, Frontend: orchestrator.FrontendA2A, Metadata: meta, PreloadSkills: preloadOf(m.Metadata, p.Metadata),
		ApprovalMode: approval, Attachments: in.atts, Delivery: mode.delivery(p.Push != nil),
	})
	if err != nil {
		if errors.Is(err, orchestrator.ErrNotFound) && sessionID != "" {
			err = errParams("contextId %q is not a context of this agent; omit it to start a new one", m.ContextID)
		}
		return nil, 0, h.files.discard(ctx, h.actor(c), in.dir, err)
	}
	if p.Push != nil {
		if _, err := h.createPush(ctx, c.v, r.UserID, r.ID, *p.Push); err != nil {
			return nil, 0, err
		}
	}
	return r, 0, nil
}

// MessageIDKey is the run metadata key (orchestrator.RunRequest.Metadata)
// holding the id of the client's message that started a task (at most 64
// bytes of it): its tools see it (ToolInvocation.Metadata), and so does
// the model adapter (ModelRequest.Metadata), which never sends it on.
const MessageIDKey = "wunder.a2a.message_id"

// ApprovalModeKey is the message (or request) metadata key choosing a
// task's approval mode: suggest, auto_edit or full_auto (input.go).
const ApprovalModeKey = "approval_mode"

// stringOf reads a string from message, else request, metadata.
func stringOf(key string, metas ...map[string]any) string {
	for _, md := range metas {
		if s, ok := md[key].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// PreloadKey is the message (or request) metadata key naming skills to
// load from a task's start: a list of skill names, or one string of
// comma-separated names.
const PreloadKey = "preload_skills"

// preloadOf reads the skills to preload from message, else request,
// metadata; entries that are not strings are ignored.
func preloadOf(metas ...map[string]any) []string {
	for _, md := range metas {
		var out []string
		switch v := md[PreloadKey].(type) {
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
					out = append(out, strings.TrimSpace(s))
				}
			}
		case string:
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// depthOf reads the delegation depth from message or request metadata.
func depthOf(metas ...map[string]any) (int, bool) {
	for _, md := range metas {
		switch v := md[w.DepthKey].(type) {
		case float64:
			if v >= 0 && v < 1e6 {
				return int(v), true
			}
		case string:
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// sendMode is when the caller of a send learns of its task.
type sendMode int

const (
	// sendReturned: a non-blocking SendMessage, answered with the task
	// at once.
	sendReturned sendMode = iota
	// sendBlocking: a blocking SendMessage, answered at the task's end;
	// the caller reads none of its parts before, so its events may wait
	// to be stored with its end (orchestrator.DeliverBlocking).
	sendBlocking
	// sendStreamed: a stream, which sends the task with the first of
	// its events (follow), so nobody knows the task before it is stored
	// (orchestrator.Delivery.IDsWithEvents).
	sendStreamed
)

// delivery is how a send reads its task. A task's client, whatever it
// sent, gets the answer whole: its streams (and pushes) carry status
// updates and the answer as one artifact at the end (eventsOf), never the
// text as it grows. A send with a push config is not read only by its
// caller (the config's watcher follows the task from its start, and the
// config refers to the stored task), so it is neither blocking nor a task
// whose ids wait for its events.
func (m sendMode) delivery(push bool) orchestrator.Delivery {
	switch {
	case push:
		return orchestrator.DeliverTask
	case m == sendBlocking:
		return orchestrator.DeliverBlocking
	case m == sendStreamed:
		return orchestrator.DeliverTaskStreamed
	}
	return orchestrator.DeliverTask
}

func (h *Handler) send(ctx context.Context, c *call) (any, error) {
	p, err := w.DecodeSendParams(c.m.Params)
	if err != nil {
		return nil, errParams("%v", err)
	}
	mode := sendReturned
	if p.Blocking {
		mode = sendBlocking
	}
	r, after, err := h.start(ctx, c, p, mode)
	if err != nil {
		return nil, err
	}
	var final *orchestrator.FinalData
	if p.Blocking {
		if r, final, err = h.settle(ctx, c.userID, r, after); err != nil {
			return nil, err
		}
	}
	t, err := h.taskWith(ctx, c.userID, r, p.HistoryLength, true, final, c.view())
	if err != nil {
		return nil, err
	}
	if m := directReply(r, t, after); m != nil {
		return w.EncodeEvent(c.v, w.Event{Message: m}), nil
	}
	return w.EncodeEvent(c.v, w.Event{Task: t}), nil
}

// directReply is the Message a blocking SendMessage answers with instead
// of the task, or nil: when the message started the run (it continued no
// task the client holds), the run finished with the reply tool (its model
// chose a direct answer, stop reason reply) and attached nothing but its
// answer. The Message carries the answer and the context, so the client
// can go on in the conversation, and no task id: the exchange is over (the
// run stays on record, for the user's history and audit). A stream has
// sent its Task before the answer is known, so it stays a task.
func directReply(r *orchestrator.Run, t *w.Task, afterSeq int64) *w.Message {
	if afterSeq != 0 || r.State != orchestrator.RunFinished || r.StopReason != orchestrator.StopReply || len(t.Artifacts) != 1 {
		return nil
	}
	return agentText("", contextOf(r.SessionID), r.ID+"-answer", r.Answer)
}

// waitFinal follows the run to its end, through any pause, and returns
// the run.
func (h *Handler) waitFinal(ctx context.Context, userID, runID string) (*orchestrator.Run, error) {
	for after := int64(0); ; {
		st, err := h.b.Wait(ctx, userID, runID, after, nil)
		switch {
		case err != nil:
			return nil, err
		case st.Paused():
			after = st.Event.Seq
		case st.Run != nil:
			return st.Run, nil // it had ended
		default:
			return h.runAfter(ctx, userID, runID, &st.Event)
		}
	}
}

// settle waits, after afterSeq, until the run ends or waits for a person
// (input-required), and returns the run: what a blocking SendMessage
// answers with.
func (h *Handler) settle(ctx context.Context, userID string, started *orchestrator.Run, afterSeq int64) (*orchestrator.Run, *orchestrator.FinalData, error) {
	st, err := h.b.Wait(ctx, userID, started.ID, afterSeq, nil)
	switch {
	case err != nil:
		return nil, nil, err
	case st.Run != nil:
		return st.Run, nil, nil // waiting, as GetTask says; or it had ended
	}
	if r, final, ok := ended(started, &st.Event); ok {
		return r, final, nil // what the final event says: no need to read the run back
	}
	r, err := h.runAfter(ctx, userID, started.ID, &st.Event)
	return r, nil, err
}

// ended is run r as its final event left it, with that event's data,
// when there is one that says the run ended.
func ended(r *orchestrator.Run, final *orchestrator.Event) (*orchestrator.Run, *orchestrator.FinalData, bool) {
	if final == nil {
		return nil, nil, false
	}
	var f orchestrator.FinalData
	if json.Unmarshal(final.Data, &f) != nil || !f.State.Terminal() {
		return nil, nil, false
	}
	out := *r
	out.State, out.Answer, out.Error, out.StopReason, out.Usage = f.State, f.Answer, f.Error, f.StopReason, f.Usage
	out.FinishedAt, out.LastSeq, out.Pending = &final.Time, final.Seq, nil
	return &out, &f, true
}

// runAfter reads the run after its log ended with final. The final event
// is the truth the client was streamed: a run ended without executing
// (a waiting run cancelled, an orphan ended by the reaper) stores its
// final event before its row, so the row may still say otherwise for a
// moment.
func (h *Handler) runAfter(ctx context.Context, userID, runID string, final *orchestrator.Event) (*orchestrator.Run, error) {
	r, err := h.b.GetRun(ctx, userID, runID)
	if err != nil || r.State.Terminal() {
		return r, err
	}
	if e, _, ok := ended(r, final); ok {
		return e, nil
	}
	return r, nil
}

func (h *Handler) getTask(ctx context.Context, c *call) (any, error) {
	p, err := w.DecodeTaskParams(c.m.Params)
	if err != nil {
		return nil, errParams("%v", err)
	}
	r, err := h.b.GetRun(ctx, c.userID, p.ID)
	if err != nil {
		return nil, err
	}
	t, err := h.taskOf(ctx, c.userID, r, p.HistoryLength, true, c.view())
	if err != nil {
		return nil, err
	}
	return w.EncodeTask(c.v, t), nil
}

const (
	defaultPageSize = 50
	maxPageSize     = 100
)

func (h *Handler) listTasks(ctx context.Context, c *call) (any, error) {
	p, err := w.DecodeListParams(c.m.Params)
	if err != nil {
		return nil, errParams("%v", err)
	}
	size := p.PageSize
	if size == 0 {
		size = defaultPageSize
	}
	size = min(size, maxPageSize)
	// A page token is the core's one cursor: the last task's place in the
	// list (the next page is read alone, however deep), bound to the
	// caller and the filter it was issued for.
	pg, err := orchestrator.NewPager("pageToken", p.PageToken, size, "tasks", c.userID, p.ContextID, p.Status)
	if err != nil {
		return nil, err
	}
	f := orchestrator.RunFilter{UserID: c.userID, Page: pg.Page}
	if p.ContextID != "" {
		if f.SessionID, _, err = sessionOf(h.actor(c), p.ContextID); err != nil {
			return nil, err
		}
	}
	if p.Status != "" {
		if f.States = runStates(p.Status); len(f.States) == 0 {
			// A state of the spec no wunder task is ever in (rejected,
			// auth-required): no task matches.
			return map[string]any{"tasks": []any{}, "totalSize": 0, "pageSize": size, "nextPageToken": ""}, nil
		}
	}
	runs, err := h.b.ListRuns(ctx, f)
	if err != nil {
		return nil, err
	}
	runs, next := orchestrator.CutPage(pg, runs, orchestrator.RunKey)
	hl := p.HistoryLength
	if hl == nil {
		zero := 0
		hl = &zero
	}
	tasks := make([]any, 0, len(runs))
	for _, r := range runs {
		t, err := h.taskOf(ctx, c.userID, r, hl, p.IncludeArtifacts, c.view())
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, w.EncodeTask(c.v, t))
	}
	total := len(runs) // a lower bound when the backend cannot count
	if next != "" {
		total++
	}
	if rc, ok := h.b.(RunCounter); ok {
		if n, err := rc.CountRuns(ctx, f); err == nil {
			total = max(total, n) // never below what this page shows
		}
	}
	return map[string]any{"tasks": tasks, "totalSize": total, "pageSize": size, "nextPageToken": next}, nil
}

// cancelWait bounds how long CancelTask waits for the run to wind down
// (the core promises 200 ms).
const cancelWait = 5 * time.Second

func (h *Handler) cancelTask(ctx context.Context, c *call) (any, error) {
	p, err := w.DecodeTaskParams(c.m.Params)
	if err != nil {
		return nil, errParams("%v", err)
	}
	if _, err := h.b.Cancel(ctx, c.userID, p.ID); err != nil {
		if errors.Is(err, orchestrator.ErrConflict) {
			return nil, errKind(w.ErrTaskNotCancelable, "task %s is in a terminal state and cannot be canceled", p.ID)
		}
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	r, err := h.waitFinal(wctx, c.userID, p.ID)
	if err != nil {
		if r, err = h.b.GetRun(ctx, c.userID, p.ID); err != nil {
			return nil, err
		}
	}
	t, err := h.taskOf(ctx, c.userID, r, p.HistoryLength, true, c.view())
	if err != nil {
		return nil, err
	}
	return w.EncodeTask(c.v, t), nil
}

func (h *Handler) extendedCard(ctx context.Context, c *call) (any, error) {
	if h.opts.ExtendedCard == nil {
		return nil, errKind(w.ErrExtendedCardNotConfigured, "this agent has no extended agent card")
	}
	return h.opts.ExtendedCard(c.r, h.actor(c), c.v)
}
