package a2atools

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/orchestrator"
)

// outcome is what a delegation produced; it is the tool result's Data and
// the a2a_result event.
type outcome struct {
	Service   string     `json:"service"`
	TaskID    string     `json:"task_id,omitempty"`
	ContextID string     `json:"context_id,omitempty"`
	State     w.State    `json:"state"`
	Answer    string     `json:"answer"`
	Artifacts []artifact `json:"artifacts,omitempty"`
	Error     string     `json:"error,omitempty"`

	status string // text of the last status message
}

type artifact struct {
	ID   string `json:"artifact_id"`
	Name string `json:"name,omitempty"`
	Text string `json:"text"`
}

func (o *outcome) result() *orchestrator.ToolResult {
	if o.Error != "" {
		return &orchestrator.ToolResult{Content: fmt.Sprintf("a2a@%s failed: %s", o.Service, o.Error), IsError: true, Data: o}
	}
	content := o.Answer
	switch {
	case o.ContextID == "":
	case o.TaskID != "":
		content += fmt.Sprintf("\n\n(task %s, context_id %s)", o.TaskID, o.ContextID)
	default: // the agent answered with a message: there is no task to name
		content += fmt.Sprintf("\n\n(context_id %s)", o.ContextID)
	}
	return &orchestrator.ToolResult{Content: content, IsError: o.State == w.StateFailed || o.State == w.StateRejected || o.State == w.StateCanceled, Data: o}
}

// observe folds one event into the outcome.
func (o *outcome) observe(ev w.Event) {
	switch {
	case ev.Task != nil:
		t := ev.Task
		o.TaskID, o.ContextID, o.State = t.ID, t.ContextID, t.Status.State
		for _, a := range t.Artifacts {
			o.putArtifact(a, false)
		}
		if t.Status.Message != nil {
			o.status = t.Status.Message.Text()
		}
	case ev.Status != nil:
		o.TaskID, o.ContextID, o.State = ev.Status.TaskID, ev.Status.ContextID, ev.Status.Status.State
		if m := ev.Status.Status.Message; m != nil {
			o.status = m.Text()
		}
	case ev.Artifact != nil:
		o.TaskID, o.ContextID = ev.Artifact.TaskID, ev.Artifact.ContextID
		o.putArtifact(ev.Artifact.Artifact, ev.Artifact.Append)
	case ev.Message != nil:
		o.ContextID, o.State, o.status = ev.Message.ContextID, w.StateCompleted, ev.Message.Text()
	}
}

func (o *outcome) putArtifact(a w.Artifact, appendTo bool) {
	for i := range o.Artifacts {
		if o.Artifacts[i].ID == a.ArtifactID {
			if appendTo {
				o.Artifacts[i].Text += artifactText(a)
			} else {
				o.Artifacts[i].Text = artifactText(a)
			}
			return
		}
	}
	o.Artifacts = append(o.Artifacts, artifact{ID: a.ArtifactID, Name: a.Name, Text: artifactText(a)})
}

// artifactText is an artifact's text as one. Its text parts are the
// chunks of one text, joined as they came: a streamed append lands as a
// part of its own, and a snapshot of the task (a resubscription's first
// event) carries the chunks so, which must read as the appends did. Data
// and file parts stand on lines of their own.
func artifactText(a w.Artifact) string {
	var b strings.Builder
	prevText := false
	for _, p := range a.Parts {
		isText := p.Kind == "text" || (p.Kind == "" && p.Text != "")
		s := (&w.Artifact{Parts: []w.Part{p}}).Text()
		if s == "" {
			continue
		}
		if b.Len() > 0 && !(isText && prevText) {
			b.WriteString("\n")
		}
		b.WriteString(s)
		prevText = isText
	}
	return b.String()
}

func (o *outcome) finish() {
	var parts []string
	for _, a := range o.Artifacts {
		if a.Text != "" {
			parts = append(parts, a.Text)
		}
	}
	o.Answer = strings.Join(parts, "\n\n")
	if o.Answer == "" {
		o.Answer = o.status
	}
	if o.Error == "" && !o.State.Terminal() && !o.State.Interrupted() {
		o.Error = fmt.Sprintf("the task ended in state %q", o.State)
	}
}

// run delegates one message and follows the task to its end.
func (t *peerTool) run(ctx context.Context, msg w.Message, emit func(string, any)) *outcome {
	out := &outcome{Service: t.svc.Name}
	limit := t.svc.Timeout // a background job has a deadline of its own
	if dl, ok := ctx.Deadline(); ok {
		limit = time.Until(dl).Round(time.Second)
	}
	c, card, err := t.resolve(ctx)
	if err != nil {
		out.Error = "cannot reach the agent: " + err.Error()
		if errors.Is(err, cardsig.ErrRefused) {
			out.Error = "not trusted: " + err.Error() // agent card refused: <why>
		}
		emit(orchestrator.EventA2AResult, out)
		return out
	}
	emit(orchestrator.EventA2ARequest, map[string]any{"service": t.svc.Name, "endpoint": c.URL, "version": c.Version,
		"message": msg.Text(), "depth": msg.Metadata[w.DepthKey]})
	last := w.State("")
	track := func(ev w.Event) {
		out.observe(ev)
		if out.State != last {
			last = out.State
			emit(orchestrator.EventA2AStatus, map[string]any{"service": t.svc.Name, "task_id": out.TaskID, "state": out.State, "message": out.status})
		}
	}
	done := func() bool { return out.State.Terminal() || out.State.Interrupted() }
	// Send without blocking first: the task id is known before any wait,
	// so a cancellation can always reach the remote task. Then follow the
	// task's stream when the peer streams (a subscription starts with the
	// Task, which reconciles anything missed; a cut stream is resubscribed
	// once), else poll it.
	var ev w.Event
	ev, err = t.firstSend(ctx, c, &w.SendRequest{Message: msg, Blocking: !card.Streaming})
	if ev != (w.Event{}) {
		track(ev)
	}
	for streams := 0; err == nil && !done() && out.TaskID != ""; {
		if card.Streaming && streams < 2 {
			streams++
			if serr := t.follow(c.Subscribe(ctx, out.TaskID), track, done); serr == nil || ctx.Err() != nil {
				continue
			}
			// The task ended between send and subscribe, or the peer
			// refuses subscriptions: read it.
		} else if err = sleep(ctx, 500*time.Millisecond); err != nil {
			break
		}
		var task *w.Task
		if task, err = c.GetTask(ctx, out.TaskID); err == nil {
			track(w.Event{Task: task})
		}
	}
	switch {
	case ctx.Err() != nil:
		out.Error = "cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			out.Error = fmt.Sprintf("no answer within %s", limit)
		}
		if out.TaskID != "" && !done() {
			t.cancelRemote(c, out.TaskID)
		}
	case err != nil:
		out.Error = err.Error()
		if errors.Is(err, orchestrator.ErrUnavailable) {
			t.forget() // read the card again next time
		}
	}
	out.finish()
	emit(orchestrator.EventA2AResult, out)
	return out
}

func (t *peerTool) follow(events func(func(w.Event, error) bool), track func(w.Event), done func() bool) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		track(ev)
		if done() {
			return nil
		}
	}
	return nil
}

// sendGrace is how long a cancelled call still waits for the peer's
// answer to its send, to learn the task id it must cancel.
const sendGrace = 5 * time.Second

// firstSend sends on a context that outlives the call's cancellation by
// sendGrace: a run cancelled right after it delegated still learns the
// remote task id (the event is returned with ctx's error) and cancels it.
func (t *peerTool) firstSend(ctx context.Context, c *w.Client, req *w.SendRequest) (w.Event, error) {
	type answer struct {
		ev  w.Event
		err error
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.svc.Timeout)
	defer cancel()
	ch := make(chan answer, 1)
	go func() {
		ev, err := c.Send(sctx, req)
		ch <- answer{ev, err}
	}()
	select {
	case a := <-ch:
		return a.ev, a.err
	case <-ctx.Done():
	}
	grace := time.NewTimer(sendGrace)
	defer grace.Stop()
	select {
	case a := <-ch:
		return a.ev, ctx.Err()
	case <-grace.C:
		cancel()
		<-ch
		return w.Event{}, ctx.Err()
	}
}

// cancelRemote cancels the peer's task after the local call was cancelled,
// on a short context of its own.
func (t *peerTool) cancelRemote(c *w.Client, taskID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A task that ended meanwhile is not cancelable: nothing is left to do.
	if _, err := c.CancelTask(ctx, taskID); err != nil && !errors.Is(err, w.ErrTaskNotCancelable) {
		t.log.Warn("a2a: remote task not cancelled", "service", t.svc.Name, "task_id", taskID, "err", err)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func randSuffix() string { return strings.ToLower(rand.Text()[:10]) }
