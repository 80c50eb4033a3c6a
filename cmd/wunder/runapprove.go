package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/wunder/wunder/internal/client"
)

// What `wunder run` does when the run asks for a person's approval
// (--approve).
const (
	approveAsk    = "ask"     // ask at the terminal; without one, report and exit
	approveAlways = "approve" // approve every call (that can be approved)
	approveNever  = "reject"  // reject every call
)

// rejectReason is the reason --approve=reject gives the model.
const rejectReason = "rejected by wunder run --approve=reject"

// errNoAnswer: stdin ended before the person answered.
var errNoAnswer = errors.New("no answer: stdin ended")

// approver answers the approval_required events of the run `wunder run`
// follows: it asks the person at the terminal, or decides as --approve
// says, and posts the decision to
// POST /wunder/runs/{run_id}/approvals/{approval_id}. The server keeps the
// event stream open through the wait, so the caller just goes on reading.
type approver struct {
	c           *client.Client
	user, runID string
	mode        string
	view        *runView
	// in is where answers come from; interactive says whether a person
	// types them (a terminal).
	in          io.Reader
	interactive bool
	lines       *lineReader // started at the first question
}

// handle answers one approval_required event. It returns an error with
// exit code exitWaiting when the approval stays pending (nobody here can
// decide it), or ctx's error when the person interrupted the question.
func (a *approver) handle(ctx context.Context, ev client.Event) error {
	var ap client.Approval
	if err := json.Unmarshal(ev.Data, &ap); err != nil || ap.ID == "" {
		return fmt.Errorf("approval_required event %d: bad data %s", ev.Seq, ev.Data)
	}
	a.view.approval(ap)
	switch {
	case a.mode == approveNever:
		return a.decide(ctx, ap, client.Decision{Decision: "reject", Reason: rejectReason})
	case a.mode == approveAlways && slices.Contains(ap.Decisions, "approve"):
		return a.decide(ctx, ap, client.Decision{Decision: "approve"})
	case a.mode == approveAlways:
		return a.pending(ctx, "--approve=approve cannot answer a call that lacks arguments")
	case !a.interactive:
		return a.pending(ctx, "stdin is not a terminal")
	}
	err := a.ask(ctx, ap)
	if errors.Is(err, errNoAnswer) {
		return a.pending(ctx, err.Error())
	}
	return err
}

// ask asks the person until a decision is recorded.
func (a *approver) ask(ctx context.Context, ap client.Approval) error {
	for {
		ans, err := a.prompt(ctx, menu(ap))
		if err != nil {
			return err
		}
		var d client.Decision
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			d.Decision = "approve"
		case "n", "no":
			d.Decision = "reject"
		case "e", "edit":
			d.Decision = "edit"
		case "c", "cancel":
			d.Decision = "cancel"
		default:
			a.view.note("answer " + strings.Join(letters(ap), ", "))
			continue
		}
		// Checked before asking for a reason or arguments the person
		// would type for nothing.
		if !slices.Contains(ap.Decisions, d.Decision) {
			a.view.note(d.Decision + " is not offered for this call")
			continue
		}
		switch d.Decision {
		case "reject":
			if d.Reason, err = a.prompt(ctx, "reason (optional; the model reads it): "); err != nil {
				return err
			}
			d.Reason = strings.TrimSpace(d.Reason)
		case "edit":
			if d.Arguments, err = a.readArguments(ctx); err != nil {
				return err
			}
		}
		err = a.decide(ctx, ap, d)
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status == 400 {
			a.view.note("the server refused the decision: " + ce.Detail)
			continue
		}
		return err
	}
}

// readArguments reads the arguments of an edit: one line holding a JSON
// object, asked again until it is one.
func (a *approver) readArguments(ctx context.Context) (json.RawMessage, error) {
	for {
		line, err := a.prompt(ctx, "new arguments (one JSON object): ")
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
			why := "not an object"
			if err != nil {
				why = err.Error()
			}
			a.view.note("not a JSON object (" + why + "); try again")
			continue
		}
		return json.RawMessage(strings.TrimSpace(line)), nil
	}
}

// decide posts a decision. A conflict (someone else decided first) is
// reported, not an error: the stream shows what happens next.
func (a *approver) decide(ctx context.Context, ap client.Approval, d client.Decision) error {
	_, err := a.c.Decide(ctx, a.user, a.runID, ap.ID, d)
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Status == 409:
		a.view.note("already decided: " + ce.Detail)
		return nil
	case err != nil:
		return err
	}
	a.view.decided(ap, d)
	return nil
}

// pending reports every approval the run waits for, with the route that
// decides it, and returns the exitWaiting error. The run keeps waiting.
func (a *approver) pending(ctx context.Context, why string) error {
	list, err := a.c.Approvals(ctx, a.user, a.runID)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, ap := range list {
		if ap.State != "pending" {
			continue
		}
		fmt.Fprintf(&b, "pending: %s %s %s (%s)\n  decide: POST /wunder/runs/%s/approvals/%s {\"decision\":\"%s\"}\n",
			ap.ID, ap.Tool, compactJSON(ap.Arguments), ap.Reason, a.runID, ap.ID, strings.Join(ap.Decisions, `"|"`))
	}
	if b.Len() > 0 {
		a.view.note(strings.TrimRight(b.String(), "\n"))
	}
	return withCode(exitWaiting, fmt.Errorf("run %s waits for approval (%s): decide it with POST /wunder/runs/%s/approvals/{approval_id}, "+
		"or run with --approve=approve|reject", a.runID, why, a.runID))
}

// prompt asks one question and returns the line typed.
func (a *approver) prompt(ctx context.Context, question string) (string, error) {
	if a.lines == nil {
		a.lines = newLineReader(a.in)
	}
	a.view.prompt(question)
	select {
	case line, ok := <-a.lines.c:
		if !ok {
			return "", errNoAnswer
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// close stops reading answers.
func (a *approver) close() {
	if a.lines != nil {
		close(a.lines.done)
	}
}

// choices are the answers to a question, in the order it offers them.
var choices = []struct{ decision, letter, label string }{
	{"approve", "y", "[y]es"},
	{"reject", "n", "[n]o (reject)"},
	{"edit", "e", "[e]dit"},
	{"cancel", "c", "[c]ancel"},
}

// menu is the question for ap: approve? [y]es/[n]o (reject)/[e]dit/[c]ancel,
// with only the decisions ap offers.
func menu(ap client.Approval) string {
	var opts []string
	for _, c := range choices {
		if slices.Contains(ap.Decisions, c.decision) {
			opts = append(opts, c.label)
		}
	}
	if slices.Contains(ap.Decisions, "approve") {
		return "approve? " + strings.Join(opts, "/") + " "
	}
	return "supply the missing arguments? " + strings.Join(opts, "/") + " "
}

func letters(ap client.Approval) []string {
	var out []string
	for _, c := range choices {
		if slices.Contains(ap.Decisions, c.decision) {
			out = append(out, c.letter)
		}
	}
	return out
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// lineReader reads lines in a goroutine of its own, so a question can give
// way to Ctrl-C. The goroutine ends at the input's end or, after done is
// closed, once its current read returns (a terminal's read may not return
// before the process exits).
type lineReader struct {
	c    chan string
	done chan struct{}
}

func newLineReader(r io.Reader) *lineReader {
	l := &lineReader{c: make(chan string), done: make(chan struct{})}
	go func() {
		defer close(l.c)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case l.c <- sc.Text():
			case <-l.done:
				return
			}
		}
	}()
	return l
}

// isInteractive reports whether a person types into in: a terminal, or a
// reader that says so (the tests' stand-in for one).
func isInteractive(in io.Reader) bool {
	if t, ok := in.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := in.(*os.File)
	return ok && isTerminal(f)
}

// question answers one user_input_required event: asks the person at the
// terminal (an option by its number or its text, free text where the
// question takes it) and posts the answer to POST /wunder/runs/{run_id}/input.
// Without a terminal, or with --approve other than ask, the question
// stays pending (exit code exitWaiting).
func (a *approver) question(ctx context.Context, ev client.Event) error {
	var q client.Question
	if err := json.Unmarshal(ev.Data, &q); err != nil || q.ID == "" {
		return fmt.Errorf("user_input_required event %d: bad data %s", ev.Seq, ev.Data)
	}
	a.view.question(q)
	if a.mode != approveAsk || !a.interactive {
		why := "stdin is not a terminal"
		if a.mode != approveAsk {
			why = "--approve=" + a.mode + " does not answer questions"
		}
		return withCode(exitWaiting, fmt.Errorf("run %s asks a question (%s): answer it with POST /wunder/runs/%s/input {\"answer\": \"...\"}",
			a.runID, why, a.runID))
	}
	for {
		line, err := a.prompt(ctx, "answer: ")
		if errors.Is(err, errNoAnswer) {
			return withCode(exitWaiting, fmt.Errorf("run %s asks a question (%v): answer it with POST /wunder/runs/%s/input", a.runID, err, a.runID))
		}
		if err != nil {
			return err
		}
		answer := pickAnswer(q, line)
		if answer == nil {
			a.view.note("type an option's number or text" + map[bool]string{true: " (several: comma separated)"}[q.Multi])
			continue
		}
		_, err = a.c.Answer(ctx, a.user, a.runID, q.ID, answer)
		var ce *client.Error
		switch {
		case errors.As(err, &ce) && ce.Status == 400:
			a.view.note("the server refused the answer: " + ce.Detail)
			continue
		case errors.As(err, &ce) && ce.Status == 409:
			a.view.note("already answered: " + ce.Detail)
			return nil
		}
		return err
	}
}

// pickAnswer reads a typed line as the answer to q: options by number
// (1-based) or text, several comma separated for a multiple choice; nil
// when the line is empty.
func pickAnswer(q client.Question, line string) any {
	line = strings.TrimSpace(line)
	if line == "" {
		return nil
	}
	pick := func(s string) string {
		s = strings.TrimSpace(s)
		var n int
		if _, err := fmt.Sscanf(s, "%d", &n); err == nil && fmt.Sprint(n) == s && n >= 1 && n <= len(q.Options) {
			return q.Options[n-1]
		}
		return s
	}
	if !q.Multi {
		return pick(line)
	}
	var picks []string
	for _, p := range strings.Split(line, ",") {
		if p = pick(p); p != "" {
			picks = append(picks, p)
		}
	}
	return picks
}
