package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/internal/client"
)

// runView renders a run's events for a person: progress and tool activity
// on stderr (with a spinner when stderr is a terminal), the answer on
// stdout. In JSON mode every event is one line on stdout.
type runView struct {
	out, errw io.Writer
	jsonOut   bool
	spin      bool

	// mu guards the spinner state and the writers.
	mu       sync.Mutex
	status   string
	spinning bool
	stopCh   chan struct{}
	stopped  bool
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newRunView(out, errw io.Writer, jsonOut, spin bool) *runView {
	v := &runView{out: out, errw: errw, jsonOut: jsonOut, spin: spin && !jsonOut, stopCh: make(chan struct{})}
	if v.spin {
		go v.spinner()
	}
	return v
}

func (v *runView) spinner() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-v.stopCh:
			return
		case <-t.C:
		}
		v.mu.Lock()
		if v.status != "" {
			fmt.Fprintf(v.errw, "\r\033[K%s %s", spinnerFrames[i%len(spinnerFrames)], v.status)
			v.spinning = true
		}
		v.mu.Unlock()
	}
}

// clearLocked erases the spinner line before other output.
func (v *runView) clearLocked() {
	if v.spinning {
		fmt.Fprint(v.errw, "\r\033[K")
		v.spinning = false
	}
}

func (v *runView) setStatus(s string) {
	v.mu.Lock()
	v.status = s
	v.mu.Unlock()
}

func (v *runView) note(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearLocked()
	fmt.Fprintln(v.errw, s)
}

func (v *runView) stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.stopped {
		v.stopped = true
		close(v.stopCh)
		v.clearLocked()
	}
}

func (v *runView) started(run *client.Run) {
	if v.jsonOut {
		return
	}
	v.note(fmt.Sprintf("run %s in session %s", run.ID, run.SessionID))
	v.setStatus("waiting…")
}

func (v *runView) reconnecting(err error, wait time.Duration) {
	if !v.jsonOut {
		v.note(fmt.Sprintf("↻ connection lost (%v); resuming in %v", err, wait.Round(time.Millisecond)))
	}
}

// event renders one event and returns the final payload when ev is final.
func (v *runView) event(ev client.Event) *client.Final {
	if v.jsonOut {
		b, _ := json.Marshal(ev)
		v.mu.Lock()
		fmt.Fprintln(v.out, string(b))
		v.mu.Unlock()
		if ev.Type == "final" {
			var f client.Final
			_ = json.Unmarshal(ev.Data, &f)
			return &f
		}
		return nil
	}
	var d map[string]any
	_ = json.Unmarshal(ev.Data, &d)
	switch ev.Type {
	case "progress":
		if s, _ := d["summary"].(string); s != "" {
			v.setStatus(s)
		}
	case "llm_request":
		v.setStatus(fmt.Sprintf("thinking (round %v, %v)…", d["round"], d["model"]))
	case "llm_output_delta":
		// The readable view shows the answer whole at the end.
	case "llm_stream_retry":
		v.note(fmt.Sprintf("↻ model call retried (attempt %v): %v", d["attempt"], d["reason"]))
	case "tool_call":
		args, _ := json.Marshal(d["arguments"])
		v.note(fmt.Sprintf("→ %v %s", d["name"], clipLine(string(args), 120)))
		v.setStatus(fmt.Sprintf("running %v…", d["name"]))
	case "tool_output_delta":
		delta, _ := d["delta"].(string)
		v.mu.Lock()
		v.clearLocked()
		for _, line := range strings.Split(strings.TrimRight(delta, "\n"), "\n") {
			fmt.Fprintf(v.errw, "  │ %s\n", line)
		}
		v.mu.Unlock()
	case "tool_result":
		mark := "✓"
		if isErr, _ := d["is_error"].(bool); isErr {
			mark = "✗"
		}
		content, _ := d["content"].(string)
		v.note(fmt.Sprintf("%s %v (%v ms): %s", mark, d["name"], d["duration_ms"], clipLine(content, 120)))
		v.setStatus("thinking…")
	case "approval_required", "user_input_required":
		v.setStatus("") // the approver asks; no spinner over the question
	case "user_input_answered":
		if declined, _ := d["declined"].(bool); declined {
			v.note("· question declined")
		} else {
			answer, _ := json.Marshal(d["answer"])
			v.note("· answered: " + string(answer))
		}
		v.setStatus("thinking…")
	case "approval_decided":
		by := ""
		if s, _ := d["decided_by"].(string); s != "" {
			by = " by " + s
		}
		v.note(fmt.Sprintf("· %v %v%s", d["state"], d["tool"], by))
		v.setStatus("thinking…")
	case "error":
		v.note(fmt.Sprintf("error: %v", d["message"]))
	case "final":
		var f client.Final
		_ = json.Unmarshal(ev.Data, &f)
		v.stop()
		v.mu.Lock()
		if f.Answer != "" {
			fmt.Fprintln(v.out, f.Answer)
		}
		fmt.Fprintf(v.errw, "— %s (%s), %d tokens in, %d out\n", f.State, f.StopReason, f.Usage.InputTokens, f.Usage.OutputTokens)
		v.mu.Unlock()
		return &f
	}
	return nil
}

// approval shows a call that waits for a decision (in JSON mode too: the
// question goes to stderr, the events to stdout).
func (v *runView) approval(ap client.Approval) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status = ""
	v.clearLocked()
	args, err := json.MarshalIndent(json.RawMessage(ap.Arguments), "  ", "  ")
	if err != nil {
		args = ap.Arguments
	}
	fmt.Fprintf(v.errw, "? %s wants approval (%s)\n  arguments: %s\n  reason: %s\n", ap.Tool, ap.ID, args, ap.Reason)
	if len(ap.Missing) > 0 {
		fmt.Fprintf(v.errw, "  missing: %s\n", compactJSON(ap.Missing))
	}
}

// question shows what the model asks, its options numbered.
func (v *runView) question(q client.Question) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status = ""
	v.clearLocked()
	fmt.Fprintf(v.errw, "? %s (%s)\n", q.Question, q.ID)
	for i, o := range q.Options {
		fmt.Fprintf(v.errw, "  %d. %s\n", i+1, o)
	}
	switch {
	case q.Multi:
		fmt.Fprintln(v.errw, "  (pick several: numbers or options, comma separated)")
	case len(q.Options) > 0 && q.FreeText:
		fmt.Fprintln(v.errw, "  (a number, an option, or your own words)")
	}
}

// prompt writes a question, with the spinner paused.
func (v *runView) prompt(q string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status = ""
	v.clearLocked()
	fmt.Fprint(v.errw, q)
}

// decided notes a decision this process posted.
func (v *runView) decided(ap client.Approval, d client.Decision) {
	s := fmt.Sprintf("%s %s: %s", d.Decision, ap.Tool, ap.ID)
	if d.Reason != "" {
		s += " (" + d.Reason + ")"
	}
	if len(d.Arguments) > 0 {
		s += " with " + compactJSON(d.Arguments)
	}
	v.note("→ " + s)
	v.setStatus("resuming…")
}

func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
