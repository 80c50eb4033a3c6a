package a2a

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// Human in the loop over A2A (orchestrator/approval.go has the core).
//
// A task whose run waits for a person's decision is input-required: its
// status message says what is asked, in text and with one data part per
// pending approval ({"approval_id","kind","tool","arguments","reason",
// "decisions","missing"?}). A stream ends there (1.0: the stream closes;
// 0.3: the status update is final), and so does a blocking SendMessage.
//
// The client answers with a message on the same taskId: data parts
// {"decision":"approve"|"edit"|"reject"|"cancel","approval_id"?,
// "arguments"?,"reason"?}, or plain text ("approve", "yes", "reject: too
// risky", "cancel", or their Chinese forms). A decision without an
// approval_id applies to every pending approval of the task (an edit
// needs one when several are pending). The decisions are recorded with
// the core's Decide (one decision per approval: a second is refused) and
// the task goes on; SendStreamingMessage then streams it from where it
// waited, SubscribeToTask from the start.
//
// A question of the model (ask_user, orchestrator/question.go) makes the
// task input-required the same way: the status message is the question
// in text, with a data part {"question_id","kind":"question","question",
// "options"?,"multi"?,"free_text"?}. The client answers with a message on
// the task: its text is the answer when one question is pending and no
// approval (a multiple choice takes its options one per line or comma
// separated), or data parts {"question_id"?,"answer": "..." | [...]}.
// A decision "cancel" ends the task as for approvals.
//
// Which approvals are pending is read from the store, never inferred from
// the log alone (the core's Wait): a replayed approval_required whose
// approval was decided is history and the stream goes on past it.

// pendingOf returns the pending approvals of a run, oldest first.
func (h *Handler) pendingOf(ctx context.Context, userID, runID string) ([]*orchestrator.Approval, error) {
	all, err := h.b.Approvals(ctx, userID, runID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(a *orchestrator.Approval) bool { return a.State != orchestrator.ApprovalPending }), nil
}

// questionData is the data part of a status message for one pending
// question.
type questionData struct {
	QuestionID string          `json:"question_id"`
	Kind       string          `json:"kind"`
	Question   string          `json:"question"`
	Options    []string        `json:"options,omitempty"`
	Multi      bool            `json:"multi,omitempty"`
	FreeText   bool            `json:"free_text,omitempty"`
	Default    json.RawMessage `json:"default,omitempty"`
}

// askData is the data part of a status message for one pending approval.
type askData struct {
	ApprovalID string          `json:"approval_id"`
	Kind       string          `json:"kind"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason,omitempty"`
	Decisions  []string        `json:"decisions"`
	Missing    json.RawMessage `json:"missing,omitempty"`
}

// inputMessage is the agent message of an input-required status: what is
// asked in words, then one data part per approval.
func inputMessage(r *orchestrator.Run, pending []*orchestrator.Approval) *w.Message {
	var questions, approvals []*orchestrator.Approval
	for _, a := range pending {
		if a.Kind == orchestrator.KindQuestion {
			questions = append(questions, a)
		} else {
			approvals = append(approvals, a)
		}
	}
	if len(questions) == 0 {
		return approvalMessage(r, approvals)
	}
	var b strings.Builder
	parts := []w.Part{{}}
	for i, a := range questions {
		q := orchestrator.QuestionView(a)
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(q.Question)
		if len(q.Options) > 0 {
			how := "one of"
			if q.Multi {
				how = "any of"
			}
			fmt.Fprintf(&b, "\n(Answer with %s: %s", how, strings.Join(q.Options, ", "))
			if q.FreeText {
				b.WriteString("; or in your own words")
			}
			b.WriteString(".)")
		}
		raw, _ := json.Marshal(questionData{QuestionID: q.QuestionID, Kind: orchestrator.KindQuestion, Question: q.Question,
			Options: q.Options, Multi: q.Multi, FreeText: q.FreeText, Default: q.Default})
		parts = append(parts, w.Part{Kind: "data", Data: raw})
	}
	if len(questions) > 1 || len(approvals) > 0 {
		b.WriteString("\nReply on this task with one data part per question: " + `{"question_id":"...","answer":"..."}.`)
	}
	if len(approvals) > 0 {
		m := approvalMessage(r, approvals)
		b.WriteString("\n\n" + m.Parts[0].Text)
		parts = append(parts, m.Parts[1:]...)
	}
	parts[0] = w.TextPart(b.String())
	return &w.Message{MessageID: r.ID + "-input-" + pending[len(pending)-1].ID, TaskID: r.ID, ContextID: contextOf(r.SessionID),
		Role: w.RoleAgent, Parts: parts}
}

// approvalMessage is the input-required message of approvals alone.
func approvalMessage(r *orchestrator.Run, pending []*orchestrator.Approval) *w.Message {
	var b strings.Builder
	if len(pending) == 1 {
		b.WriteString("This task waits for your decision on a tool call.")
	} else {
		fmt.Fprintf(&b, "This task waits for your decisions on %d tool calls.", len(pending))
	}
	parts := []w.Part{{}}
	for _, a := range pending {
		args := a.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if a.Kind == orchestrator.KindParamRequired {
			fmt.Fprintf(&b, "\n- %s: the call lacks required arguments (%s); answer edit with them.", a.Tool, a.Reason)
		} else {
			fmt.Fprintf(&b, "\n- %s %s", a.Tool, orchestrator.ClipText(string(args), 300))
			if a.Reason != "" {
				fmt.Fprintf(&b, " (%s)", a.Reason)
			}
		}
		raw, _ := json.Marshal(askData{ApprovalID: a.ID, Kind: a.Kind, Tool: a.Tool, Arguments: args, Reason: a.Reason,
			Decisions: a.Decisions, Missing: a.Missing})
		parts = append(parts, w.Part{Kind: "data", Data: raw})
	}
	b.WriteString("\nReply on this task with \"approve\", \"reject: <reason>\" or \"cancel\", or with a data part " +
		`{"decision":"approve|edit|reject|cancel","approval_id":"...","arguments":{...},"reason":"..."}.`)
	parts[0] = w.TextPart(b.String())
	return &w.Message{MessageID: r.ID + "-input-" + pending[len(pending)-1].ID, TaskID: r.ID, ContextID: contextOf(r.SessionID),
		Role: w.RoleAgent, Parts: parts}
}

// pauseStatus is the status update of a task whose run paused (p, from
// the core's Wait): input-required, with what its pending approvals and
// questions ask.
func pauseStatus(r *orchestrator.Run, p orchestrator.Waited) w.Event {
	st := w.TaskStatus{State: w.StateInputRequired, Timestamp: stamp(p.Event.Time)}
	if len(p.Approvals) > 0 {
		st.Message = inputMessage(r, p.Approvals)
	}
	return w.Event{Status: &w.StatusUpdate{TaskID: r.ID, ContextID: contextOf(r.SessionID), Final: true, Status: st}}
}

// reply is a decision (or an answer) read from a client's message.
type reply struct {
	ApprovalID string          `json:"approval_id"`
	QuestionID string          `json:"question_id"`
	Decision   string          `json:"decision"`
	Arguments  json.RawMessage `json:"arguments"`
	Answer     json.RawMessage `json:"answer"`
	Reason     string          `json:"reason"`
}

// UnmarshalJSON also takes approvalId and questionId (the A2A spelling);
// an answer is decision "answer", and a question_id names its approval.
func (r *reply) UnmarshalJSON(b []byte) error {
	type plain reply
	var v struct {
		plain
		ApprovalIDCamel string `json:"approvalId"`
		QuestionIDCamel string `json:"questionId"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = reply(v.plain)
	r.ApprovalID = cmp.Or(r.ApprovalID, v.ApprovalIDCamel, r.QuestionID, v.QuestionIDCamel)
	if len(r.Answer) > 0 && string(r.Answer) != "null" && r.Decision == "" {
		r.Decision = orchestrator.DecisionAnswer
	}
	return nil
}

// words people answer with, checked as prefixes of the text (ASCII words
// must end at a non-letter).
var replyWords = []struct {
	decision string
	words    []string
}{
	{orchestrator.DecisionApprove, []string{"approved", "approve", "yes", "y", "ok", "okay", "allow", "go ahead", "同意", "批准", "允许", "确认", "是"}},
	{orchestrator.DecisionReject, []string{"rejected", "reject", "deny", "denied", "no", "n", "拒绝", "不同意", "否"}},
	{orchestrator.DecisionCancel, []string{"cancel", "abort", "stop", "取消", "终止"}},
}

// textDecision reads a decision from plain text: the leading word, and
// for reject the rest as the reason.
func textDecision(text string) (reply, bool) {
	t := strings.TrimSpace(text)
	lower := strings.ToLower(t)
	best, bestLen := "", 0
	for _, rw := range replyWords {
		for _, word := range rw.words {
			if len(word) <= bestLen || !strings.HasPrefix(lower, word) {
				continue
			}
			if rest := lower[len(word):]; rest != "" && word[0] < utf8.RuneSelf {
				if r, _ := utf8.DecodeRuneInString(rest); unicode.IsLetter(r) || unicode.IsDigit(r) {
					continue
				}
			}
			best, bestLen = rw.decision, len(word)
		}
	}
	if best == "" {
		return reply{}, false
	}
	rest := strings.TrimLeftFunc(t[bestLen:], func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || r == '，' || r == '：'
	})
	return reply{Decision: best, Reason: rest}, true
}

// textAnswer reads the text of a message as the answer to question a:
// for a multiple choice, its options one per line or comma separated.
func textAnswer(a *orchestrator.Approval, text string) reply {
	answer, _ := json.Marshal(text)
	if q := orchestrator.QuestionOf(a); q != nil && q.Multi {
		picks := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == '，' })
		answer, _ = json.Marshal(picks)
	}
	return reply{ApprovalID: a.ID, Decision: orchestrator.DecisionAnswer, Answer: answer}
}

// repliesOf reads the decisions of a client's message: its data parts
// that hold a decision, else its text. The text is the answer when the
// only thing pending is one question (cancel words aside).
func repliesOf(m *w.Message, pending []*orchestrator.Approval) ([]reply, error) {
	var out []reply
	var text []string
	for _, p := range m.Parts {
		switch {
		case len(p.Data) > 0:
			var r reply
			if err := json.Unmarshal(p.Data, &r); err != nil || r.Decision == "" {
				continue
			}
			out = append(out, r)
		case p.Text != "":
			text = append(text, p.Text)
		}
	}
	joined := strings.TrimSpace(strings.Join(text, "\n"))
	if len(out) > 0 {
		for i := range out {
			if out[i].Reason == "" && out[i].Decision == orchestrator.DecisionReject {
				out[i].Reason = joined // the words beside a data part explain it
			}
		}
		return out, nil
	}
	if len(pending) == 1 && pending[0].Kind == orchestrator.KindQuestion {
		if r, ok := textDecision(joined); ok && r.Decision == orchestrator.DecisionCancel && r.Reason == "" {
			return []reply{r}, nil
		}
		if joined == "" {
			return nil, errParams("the task asks a question: answer it in text, or with a data part {\"answer\":\"...\"}")
		}
		return []reply{textAnswer(pending[0], joined)}, nil
	}
	if r, ok := textDecision(joined); ok {
		return []reply{r}, nil
	}
	if slices.ContainsFunc(pending, func(a *orchestrator.Approval) bool { return a.Kind == orchestrator.KindQuestion }) {
		return nil, errParams(`the task waits for answers: send one data part per question {"question_id":"...","answer":"..."}` +
			`, and a decision per approval {"decision":"approve|edit|reject|cancel","approval_id":"..."}`)
	}
	return nil, errParams(`the task waits for a decision: answer "approve", "reject: <reason>" or "cancel", ` +
		`or send a data part {"decision":"approve|edit|reject|cancel","approval_id":"...","arguments":{...},"reason":"..."}`)
}

// answer records the decisions a message carries for the input-required
// task r (read before them: r.LastSeq is where a stream of the resumed
// task starts).
func (h *Handler) answer(ctx context.Context, c *call, m *w.Message, r *orchestrator.Run) error {
	pending, err := h.pendingOf(ctx, c.userID, r.ID)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		return errKind(w.ErrUnsupportedOperation, "task %s is still working and takes no further input", r.ID)
	}
	replies, err := repliesOf(m, pending)
	if err != nil {
		return err
	}
	type decision struct {
		a *orchestrator.Approval
		d orchestrator.ApprovalDecision
	}
	var todo []decision
	seen := map[string]bool{}
	for _, rp := range replies {
		targets := pending
		switch {
		case rp.ApprovalID != "":
			i := slices.IndexFunc(pending, func(a *orchestrator.Approval) bool { return a.ID == rp.ApprovalID })
			if i < 0 {
				return errParams("approval %q is not pending on task %s", rp.ApprovalID, r.ID)
			}
			targets = pending[i : i+1]
		case rp.Decision == orchestrator.DecisionAnswer:
			targets = slices.DeleteFunc(slices.Clone(pending), func(a *orchestrator.Approval) bool { return a.Kind != orchestrator.KindQuestion })
			if len(targets) != 1 {
				return errParams("%d questions are pending on task %s: an answer must name its question_id", len(targets), r.ID)
			}
		case rp.Decision != orchestrator.DecisionCancel:
			// A decision for every pending approval: questions take answers.
			targets = slices.DeleteFunc(slices.Clone(pending), func(a *orchestrator.Approval) bool { return a.Kind == orchestrator.KindQuestion })
			if rp.Decision == orchestrator.DecisionEdit && len(targets) > 1 {
				return errParams("%d approvals are pending on task %s: an edit must name its approval_id", len(targets), r.ID)
			}
		}
		for _, a := range targets {
			if seen[a.ID] {
				return errParams("approval %s is decided twice in one message", a.ID)
			}
			seen[a.ID] = true
			if !slices.Contains(a.Decisions, rp.Decision) {
				return errParams("approval %s (%s of %s) takes %s, not %q", a.ID, a.Kind, a.Tool, strings.Join(a.Decisions, ", "), rp.Decision)
			}
			todo = append(todo, decision{a, orchestrator.ApprovalDecision{Decision: rp.Decision, Arguments: rp.Arguments, Answer: rp.Answer, Reason: rp.Reason}})
		}
	}
	var done []string
	for _, t := range todo {
		_, err := h.b.Decide(ctx, c.userID, r.ID, t.a.ID, t.d)
		if err == nil {
			done = append(done, t.a.ID)
			continue
		}
		// The ones decided before stay decided: the error says so.
		if errors.Is(err, orchestrator.ErrConflict) {
			err = errKind(w.ErrUnsupportedOperation, "approval %s of task %s was already decided", t.a.ID, r.ID)
		}
		if len(done) > 0 {
			e := h.toError(ctx, c.v, err)
			return errKind(e.Kind().Err, "%s (recorded before it: %s)", e.Message, strings.Join(done, ", "))
		}
		return err
	}
	return nil
}
