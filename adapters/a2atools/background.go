package a2atools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// background runs delegations started with background:true.
type background struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	// mu guards jobs and seq, and orders start against close.
	mu   sync.Mutex
	jobs map[string]*job
	seq  int
}

type job struct {
	runID   string // jobs are seen only by the run that started them
	service string
	done    chan struct{}
	out     *outcome
}

func newBackground() *background {
	ctx, cancel := context.WithCancel(context.Background())
	return &background{ctx: ctx, stop: cancel, jobs: map[string]*job{}}
}

// backgroundTimeout bounds a background delegation (Service.Timeout
// bounds a call that waits for its answer).
const backgroundTimeout = 30 * time.Minute

// start runs the delegation on a goroutine of the WaitGroup. It is added
// under mu, which close holds while it stops: a job is either started
// before close or finished at once as shut down, and close's Wait never
// races an Add.
func (b *background) start(runID, service string, run func(ctx context.Context) *outcome) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	id := fmt.Sprintf("a2a-job-%d", b.seq)
	j := &job{runID: runID, service: service, done: make(chan struct{})}
	b.jobs[id] = j
	if b.ctx.Err() != nil {
		j.out = &outcome{Service: service, Error: "the a2a toolset is shut down"}
		close(j.done)
		return id
	}
	b.wg.Go(func() {
		defer close(j.done)
		ctx, cancel := context.WithTimeout(b.ctx, backgroundTimeout)
		defer cancel()
		out := run(ctx)
		b.mu.Lock()
		j.out = out
		b.mu.Unlock()
	})
	return id
}

func (b *background) close() {
	b.mu.Lock()
	b.stop()
	b.mu.Unlock()
	b.wg.Wait()
}

// pick returns the named jobs of a run, or all of them.
func (b *background) pick(runID string, ids []string) (map[string]*job, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]*job{}
	if len(ids) == 0 {
		for id, j := range b.jobs {
			if j.runID == runID {
				out[id] = j
			}
		}
		return out, nil
	}
	for _, id := range ids {
		j, ok := b.jobs[id]
		if !ok || j.runID != runID {
			return nil, fmt.Errorf("unknown handle %q", id)
		}
		out[id] = j
	}
	return out, nil
}

func (b *background) report(jobs map[string]*job, forget bool) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var sb strings.Builder
	for id, j := range jobs {
		switch {
		case j.out == nil:
			fmt.Fprintf(&sb, "%s (a2a@%s): still working\n", id, j.service)
		case j.out.Error != "":
			fmt.Fprintf(&sb, "%s (a2a@%s): failed: %s\n", id, j.service, j.out.Error)
		default:
			fmt.Fprintf(&sb, "%s (a2a@%s): %s\n%s\n", id, j.service, j.out.State, j.out.Answer)
		}
		if forget && j.out != nil {
			delete(b.jobs, id)
		}
	}
	if sb.Len() == 0 {
		return "no background a2a tasks"
	}
	return sb.String()
}

var handlesSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"handles":{"type":"array","items":{"type":"string"},"description":"Handles returned by a2a@... with background:true; empty = all"},` +
	`"timeout_s":{"type":"integer","description":"a2a_wait only: how long to wait, default 60"}}}`)

type handleArgs struct {
	Handles  []string `json:"handles"`
	TimeoutS int      `json:"timeout_s"`
}

func parseHandles(raw json.RawMessage) (handleArgs, error) {
	var a handleArgs
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			return a, err
		}
	}
	return a, nil
}

// observeTool is a2a_observe: the state of background delegations.
type observeTool struct{ bg *background }

func (t *observeTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: "a2a_observe", Aliases: []string{"a2a观察"}, Source: "a2a", ReadOnly: true, InputSchema: handlesSchema,
		Description: "Show the state of background A2A delegations without waiting"}
}

func (t *observeTool) Call(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	a, err := parseHandles(inv.Arguments)
	if err != nil {
		return orchestrator.ErrorResult("a2a_observe: " + err.Error()), nil
	}
	jobs, err := t.bg.pick(inv.RunID, a.Handles)
	if err != nil {
		return orchestrator.ErrorResult("a2a_observe: " + err.Error()), nil
	}
	return &orchestrator.ToolResult{Content: t.bg.report(jobs, false)}, nil
}

// waitTool is a2a_wait: wait for background delegations and collect them.
type waitTool struct{ bg *background }

func (t *waitTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: "a2a_wait", Aliases: []string{"a2a等待"}, Source: "a2a", ReadOnly: true, InputSchema: handlesSchema,
		Description: "Wait for background A2A delegations to finish and return their answers"}
}

func (t *waitTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	a, err := parseHandles(inv.Arguments)
	if err != nil {
		return orchestrator.ErrorResult("a2a_wait: " + err.Error()), nil
	}
	jobs, err := t.bg.pick(inv.RunID, a.Handles)
	if err != nil {
		return orchestrator.ErrorResult("a2a_wait: " + err.Error()), nil
	}
	timeout := 60 * time.Second
	if a.TimeoutS > 0 {
		timeout = time.Duration(min(a.TimeoutS, 3600)) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-ctx.Done():
		}
	}
	return &orchestrator.ToolResult{Content: t.bg.report(jobs, true)}, nil
}
