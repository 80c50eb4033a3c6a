package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// watch starts the task's watcher unless one runs. The goroutine is
// added to the WaitGroup under mu, so it is either started before close
// or not at all: Close's Wait never races an Add.
func (p *pusher) watch(from context.Context, userID, taskID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watching[taskID] || p.ctx.Err() != nil {
		return
	}
	p.watching[taskID] = true
	ctx := p.ctx
	if p.o.Carry != nil {
		ctx = p.o.Carry(from)(ctx) // now: from is the request's, and ends with it
	}
	p.h.wg.Go(func() {
		defer func() {
			if r := recover(); r != nil {
				p.h.opts.Logger.Error("a2a push watcher panicked", "task_id", taskID, "panic", r, "stack", string(debug.Stack()))
			}
			p.mu.Lock()
			delete(p.watching, taskID)
			p.mu.Unlock()
		}()
		p.run(ctx, userID, taskID)
	})
}

// run notifies every config of the task at each status change: the task
// as it is then (1.0: a StreamResponse {"task":...}; 0.3: the Task).
func (p *pusher) run(ctx context.Context, userID, taskID string) {
	r, err := p.h.b.GetRun(ctx, userID, taskID)
	if err != nil {
		return
	}
	if r.State.Terminal() {
		p.notify(ctx, userID, taskID)
		return
	}
	started := r.State != orchestrator.RunQueued
	// A task that waits for a person is pushed as input-required once per
	// set of approvals it asks for (the watcher follows on: the run
	// resumes after a decision); one already waiting is pushed at once.
	told := map[string]bool{}
	tell := func(pending []*orchestrator.Approval) {
		if len(pending) == 0 || told[pending[len(pending)-1].ID] {
			return
		}
		for _, a := range pending {
			told[a.ID] = true
		}
		p.notify(ctx, userID, taskID)
	}
	if pending, err := p.h.pendingOf(ctx, userID, taskID); err == nil {
		tell(pending)
	}
	each := func(ev orchestrator.Event) error {
		if ev.Type == orchestrator.EventApprovalRequired || ev.Type == orchestrator.EventUserInputRequired {
			return nil // a wait is told below; a decided approval (an answered question) is history
		}
		// A push activates nothing: A2UI batches go as their text.
		for _, out := range p.h.eventsOf(r, ev, &started, view{}) {
			if out.Status != nil {
				p.notify(ctx, userID, taskID)
			}
		}
		return nil
	}
	for after := r.LastSeq; ; {
		st, err := p.h.b.Wait(ctx, userID, taskID, after, each)
		if err != nil || !st.Paused() {
			return
		}
		if len(st.Approvals) > 0 {
			tell(st.Approvals)
		} else {
			p.notify(ctx, userID, taskID) // a question: told once, at its announcement
		}
		after = st.Event.Seq
	}
}

func (p *pusher) notify(ctx context.Context, userID, taskID string) {
	cfgs, err := p.o.Store.ListPushConfigs(ctx, taskID)
	if err != nil || len(cfgs) == 0 {
		return
	}
	r, err := p.h.b.GetRun(ctx, userID, taskID)
	if err != nil {
		return
	}
	zero := 0
	t, err := p.h.taskOf(ctx, userID, r, &zero, true, view{})
	if err != nil {
		return
	}
	for _, c := range cfgs {
		v := w.Version(c.Version)
		if v != w.V10 {
			v = w.V03
		}
		body, err := json.Marshal(w.EncodeEvent(v, w.Event{Task: t}))
		if err != nil {
			continue
		}
		if err := p.deliver(ctx, c, v, body); err != nil {
			p.h.opts.Logger.Warn("a2a push notification not delivered", "task_id", taskID, "config_id", c.ID, "err", err)
		}
	}
}

// deliver POSTs one notification, retrying with exponential backoff.
func (p *pusher) deliver(ctx context.Context, c *PushConfig, v w.Version, body []byte) error {
	backoff := p.o.InitialBackoff
	var last error
	for attempt := 1; attempt <= p.o.MaxAttempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			backoff *= 2
		}
		if last = p.post(ctx, c, v, body); last == nil {
			return nil
		}
	}
	return last
}

func (p *pusher) post(ctx context.Context, c *PushConfig, v w.Version, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if v == w.V10 {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	req.Header.Set("A2A-Version", string(v))
	if c.AuthScheme != "" {
		req.Header.Set("Authorization", c.AuthScheme+" "+c.AuthCredentials)
	}
	if c.Token != "" {
		req.Header.Set("X-A2A-Notification-Token", c.Token)
		req.Header.Set("A2A-Notification-Token", c.Token)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}
