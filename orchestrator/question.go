package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Questions: the model asks the user.
//
// The core's tool ask_user ({question, options?, multi?, free_text?,
// default?}) pauses the run until a person answers. A question is an
// [Approval] of kind "question": the same record, stored in the same one
// write as the run's wait (Store.SuspendRun), answered from any replica
// with the same compare-and-set ([Orchestrator.Decide] with decision
// "answer", or [Orchestrator.Answer]), and resumed by the same claim. So
// everything said of approvals in approval.go holds for questions: a
// question outlives the process that asked it, and a replica that gets
// the answer resumes the run.
//
// A round that asks is not executed until every question (and approval)
// of it is decided. The run waits in state waiting_input (waiting_approval
// when the round only needs approvals), announced by one
// user_input_required event per question. The answer is the call's result,
// which the model reads as {"answer": …}; a decline is told to the model
// as the call's (error) result, and a cancel ends the run. When
// nobody answers within Options.Questions.Timeout, the question takes its
// default (the call's own "default", else QuestionPolicy.DefaultAnswer)
// when QuestionPolicy.OnTimeout is "default" and one exists; otherwise
// the run ends failed, saying which question went unanswered.

// AskUserTool is the canonical name of the tool that asks the user.
const AskUserTool = "ask_user"

// Decisions on a question: DecisionAnswer answers it
// (ApprovalDecision.Answer holds the answer); DecisionDecline says the
// person will not answer, and the model reads that and goes on; a cancel
// ends the run.
const (
	DecisionAnswer  = "answer"
	DecisionDecline = "decline"
)

// ApprovalAnswered is the state of an answered question.
const ApprovalAnswered ApprovalState = "answered"

// EventUserInputAnswered is emitted when a run goes on after a question of
// it was answered.
const EventUserInputAnswered = "user_input_answered"

// Question timeouts (QuestionPolicy.OnTimeout).
const (
	// QuestionTimeoutDefault answers with the question's default, or fails
	// the run when it has none.
	QuestionTimeoutDefault = "default"
	// QuestionTimeoutFail fails the run.
	QuestionTimeoutFail = "fail"
)

// Bounds of a question and its answer.
const (
	maxQuestionBytes = 4000
	maxOptions       = 20
	maxOptionBytes   = 200
	maxAnswerBytes   = 4000
)

// Question is what ask_user asks: the call's arguments, checked.
type Question struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
	// Multi lets the person pick several options (the answer is a list).
	Multi bool `json:"multi,omitempty"`
	// FreeText lets the person answer in their own words as well as (or,
	// with no options, instead of) picking an option.
	FreeText bool `json:"free_text,omitempty"`
	// Default is the answer taken when nobody answers in time (see
	// QuestionPolicy); a string, or a list when Multi.
	Default json.RawMessage `json:"default,omitempty"`
}

// Open reports whether any text is an answer: free text was allowed, or
// there are no options to pick from.
func (q *Question) Open() bool { return q.FreeText || len(q.Options) == 0 }

// ParseQuestion reads and checks ask_user's arguments. Its errors are
// written for the model, which reads them as the call's result.
func ParseQuestion(args json.RawMessage) (*Question, error) {
	var q Question
	if err := json.Unmarshal(args, &q); err != nil {
		return nil, fmt.Errorf(`ask_user needs {"question": "...", "options"?: ["..."], "multi"?: bool, "free_text"?: bool, "default"?: ...}: %v`, err)
	}
	q.Question = strings.TrimSpace(q.Question)
	switch {
	case q.Question == "":
		return nil, fmt.Errorf("ask_user needs a question")
	case len(q.Question) > maxQuestionBytes:
		return nil, fmt.Errorf("the question is longer than %d bytes", maxQuestionBytes)
	case len(q.Options) > maxOptions:
		return nil, fmt.Errorf("ask_user takes at most %d options, got %d", maxOptions, len(q.Options))
	case q.Multi && len(q.Options) == 0:
		return nil, fmt.Errorf("multi needs options to pick from")
	}
	seen := map[string]bool{}
	for i, o := range q.Options {
		o = strings.TrimSpace(o)
		if o == "" || len(o) > maxOptionBytes {
			return nil, fmt.Errorf("option %d must be 1 to %d bytes", i+1, maxOptionBytes)
		}
		if seen[o] {
			return nil, fmt.Errorf("option %q is given twice", o)
		}
		seen[o] = true
		q.Options[i] = o
	}
	if len(q.Default) > 0 && string(q.Default) != "null" {
		d, err := q.CheckAnswer(q.Default)
		if err != nil {
			return nil, fmt.Errorf("the default is not a valid answer: %v", strings.TrimPrefix(err.Error(), ErrInvalidArgument.Error()+": "))
		}
		q.Default = d
	} else {
		q.Default = nil
	}
	return &q, nil
}

// CheckAnswer checks an answer against the question and returns it in
// its stored form: a string, or a list of strings when Multi (a single
// string is taken as a list of one). Errors wrap ErrInvalidArgument.
func (q *Question) CheckAnswer(raw json.RawMessage) (json.RawMessage, error) {
	var picks []string
	var one string
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, invalidf("answer is required")
	case json.Unmarshal(raw, &one) == nil:
		picks = []string{one}
	case json.Unmarshal(raw, &picks) == nil:
		if !q.Multi && len(picks) != 1 {
			return nil, invalidf("this question takes one answer, got %d", len(picks))
		}
	default:
		return nil, invalidf("answer must be a string or, for a multiple choice, a list of strings")
	}
	if len(picks) == 0 {
		return nil, invalidf("answer is required")
	}
	total := 0
	for i, p := range picks {
		p = StoredText(strings.TrimSpace(p))
		picks[i] = p
		total += len(p)
		if p == "" {
			return nil, invalidf("answer %d is empty", i+1)
		}
		if !q.Open() && !slices.Contains(q.Options, p) {
			return nil, invalidf("answer %q is not one of the options: %s", p, strings.Join(q.Options, ", "))
		}
	}
	if total > maxAnswerBytes {
		return nil, invalidf("answer is longer than %d bytes", maxAnswerBytes)
	}
	if q.Multi {
		return rawJSON(picks), nil
	}
	return rawJSON(picks[0]), nil
}

// QuestionPolicy says how long a question waits and what happens then;
// Options.Questions.
type QuestionPolicy struct {
	// Timeout ends the wait; 0 means one hour, negative never.
	Timeout time.Duration
	// OnTimeout: QuestionTimeoutDefault (default) or QuestionTimeoutFail.
	OnTimeout string
	// DefaultAnswer is the answer of a question that has no default of its
	// own when nobody answers in time (OnTimeout "default"); "" = none,
	// and such a question fails the run.
	DefaultAnswer string
}

func (p QuestionPolicy) withDefaults() QuestionPolicy {
	if p.Timeout == 0 {
		p.Timeout = time.Hour
	}
	if p.OnTimeout == "" {
		p.OnTimeout = QuestionTimeoutDefault
	}
	return p
}

// CheckQuestionTimeout validates QuestionPolicy.OnTimeout ("" = default).
func CheckQuestionTimeout(v string) error {
	switch v {
	case "", QuestionTimeoutDefault, QuestionTimeoutFail:
		return nil
	}
	return invalidf("on_timeout must be %q or %q, got %q", QuestionTimeoutDefault, QuestionTimeoutFail, v)
}

// timeoutAnswer is the answer a question takes when nobody answered in
// time, or nil when the run must fail.
func (p QuestionPolicy) timeoutAnswer(q *Question) json.RawMessage {
	if p.OnTimeout == QuestionTimeoutFail {
		return nil
	}
	if len(q.Default) > 0 {
		return q.Default
	}
	if p.DefaultAnswer == "" {
		return nil
	}
	a, err := q.CheckAnswer(rawJSON(p.DefaultAnswer))
	if err != nil {
		return nil // the configured default is no answer to this question
	}
	return a
}

// UserInputRequiredData is the payload of user_input_required: one
// question a run waits on. Answer it with [Orchestrator.Answer] (or
// Decide, decision "answer") under QuestionID.
type UserInputRequiredData struct {
	QuestionID string          `json:"question_id"`
	Question   string          `json:"question"`
	Options    []string        `json:"options,omitempty"`
	Multi      bool            `json:"multi,omitempty"`
	FreeText   bool            `json:"free_text,omitempty"`
	Default    json.RawMessage `json:"default,omitempty"`
	CallID     string          `json:"call_id"`
	Round      int             `json:"round"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
}

// UserInputAnsweredData is the payload of user_input_answered: the
// answer, or Declined.
type UserInputAnsweredData struct {
	QuestionID string          `json:"question_id"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	Declined   bool            `json:"declined,omitempty"`
	By         string          `json:"answered_by,omitempty"`
}

// QuestionOf reads the question an approval of kind question asks; nil
// for any other approval (or an unreadable one).
func QuestionOf(a *Approval) *Question {
	if a == nil || a.Kind != KindQuestion {
		return nil
	}
	q, err := ParseQuestion(a.Arguments)
	if err != nil {
		return nil
	}
	return q
}

// QuestionView is a question as front-ends show it: what its
// user_input_required event says.
func QuestionView(a *Approval) UserInputRequiredData {
	d := UserInputRequiredData{QuestionID: a.ID, CallID: a.CallID, Round: a.Round, ExpiresAt: a.ExpiresAt}
	if q := QuestionOf(a); q != nil {
		d.Question, d.Options, d.Multi, d.FreeText, d.Default = q.Question, q.Options, q.Multi, q.FreeText, q.Default
	}
	return d
}

// Answer answers a question of a run: questionID, or the run's one
// pending question when questionID is "". It returns the answered
// question (an Approval of kind question). userID scopes the run.
//
// Errors: ErrNotFound (run or question), ErrInvalidArgument (an answer
// that does not fit the question; no question named while several are
// pending), ErrConflict (already answered, or the run asks nothing).
func (o *Orchestrator) Answer(ctx context.Context, userID, runID, questionID string, answer json.RawMessage) (*Approval, error) {
	if questionID == "" {
		all, err := o.Approvals(ctx, userID, runID)
		if err != nil {
			return nil, err
		}
		var pending []string
		for _, a := range all {
			if a.Kind == KindQuestion && a.State == ApprovalPending {
				pending = append(pending, a.ID)
			}
		}
		switch len(pending) {
		case 0:
			return nil, fmt.Errorf("%w: run %s asks no question", ErrConflict, runID)
		case 1:
			questionID = pending[0]
		default:
			return nil, invalidf("question_id is required: run %s asks %d questions (%s)", runID, len(pending), strings.Join(pending, ", "))
		}
	}
	return o.Decide(ctx, userID, runID, questionID, ApprovalDecision{Decision: DecisionAnswer, Answer: answer})
}

// askUserTool is the core's question tool. The loop recognises its calls
// before they run (gate) and pauses the run; Call runs only where no run
// can pause.
type askUserTool struct{}

var _ Tool = askUserTool{}

func (askUserTool) Spec() ToolSpec { return askUserSpec }

// askUserSpec is built once: every run that names it is offered it.
var askUserSpec = ToolSpec{
	Name:    AskUserTool,
	Aliases: []string{"询问用户"},
	Description: "Ask the user a question and wait for the answer: a clarifying question, a choice between options, or a " +
		"confirmation. Use it when the task cannot go on well without the user's input; do not ask what you can find out " +
		"yourself. The run pauses until the user answers; the answer is this call's result.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"question":{"type":"string","minLength":1,"maxLength":4000,"description":"The question, in the user's language."},` +
		`"options":{"type":"array","maxItems":20,"items":{"type":"string","minLength":1,"maxLength":200},` +
		`"description":"Answers to pick from (a confirmation: [\"yes\",\"no\"])."},` +
		`"multi":{"type":"boolean","description":"The user may pick several options."},` +
		`"free_text":{"type":"boolean","description":"The user may also answer in their own words (always so without options)."},` +
		`"default":{"description":"The answer taken when the user does not answer in time: one of the options, or a list when multi."}},` +
		`"required":["question"]}`),
	Source:   SourceBuiltin,
	ReadOnly: true,
	RunOnly:  true,
}

func (askUserTool) Call(context.Context, *ToolInvocation) (*ToolResult, error) {
	return ErrorResult("ask_user works only inside a run, where it pauses the run until the user answers"), nil
}

// answerResult is what the model reads as the result of an answered
// ask_user call.
func answerResult(a *Approval) *ToolResult {
	var answer json.RawMessage
	by := ""
	if a.Decision != nil {
		answer, by = a.Decision.Answer, a.Decision.By
	}
	out := map[string]any{"answer": answer}
	if by == DecidedByTimeout {
		out["note"] = "nobody answered in time; this is the default answer"
	}
	return &ToolResult{Content: string(rawJSON(out)), Data: out}
}
