package orchestrator

// The approval's types: what is stored, decided and announced.

import (
	"encoding/json"
	"path"
	"slices"
	"time"
)

// Approval states.
const (
	ApprovalPending   ApprovalState = "pending"
	ApprovalApproved  ApprovalState = "approved"
	ApprovalEdited    ApprovalState = "edited"
	ApprovalRejected  ApprovalState = "rejected"
	ApprovalCancelled ApprovalState = "cancelled"
)

// Decisions a person can take.
const (
	DecisionApprove = "approve"
	DecisionEdit    = "edit"
	DecisionReject  = "reject"
	DecisionCancel  = "cancel"
)

// Interrupt kinds (as WINS Agent has them).
const (
	// KindAuthorization asks whether a call may run.
	KindAuthorization = "authorization"
	// KindParamRequired asks for arguments the model left out; Missing is
	// their JSON Schema.
	KindParamRequired = "param_required"
	// KindQuestion is the model asking the user (ask_user, question.go).
	KindQuestion = "question"
)

// Approval modes of a run (RunRequest.ApprovalMode).
const (
	// ApprovalSuggest: every tool that changes things asks.
	ApprovalSuggest = "suggest"
	// ApprovalAutoEdit: file edits go, other tools that change things ask.
	ApprovalAutoEdit = "auto_edit"
	// ApprovalFullAuto: nothing asks but what the policy names.
	ApprovalFullAuto = "full_auto"
)

// Execution marks of an approved call (Approval.Execution).
const (
	ExecutionStarted = "started"
	ExecutionDone    = "done"
)

// Event types of approvals.
const (
	EventApprovalRequired = "approval_required"
	EventApprovalDecided  = "approval_decided"
)

// ApprovalState is the state of an approval: pending until decided.
type ApprovalState string

// DecidedByTimeout is Approval.Decision.By when approvals.timeout_s decided.
const DecidedByTimeout = "timeout"

// Approval is one call waiting for (or given) a person's decision.
type Approval struct {
	ID        string          `json:"approval_id"`
	RunID     string          `json:"run_id"`
	SessionID string          `json:"session_id"`
	UserID    string          `json:"user_id"`
	Round     int             `json:"round"`
	CallID    string          `json:"call_id"`
	Kind      string          `json:"kind"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason"`
	// Missing is the JSON Schema of the arguments a param_required
	// approval asks for.
	Missing   json.RawMessage `json:"missing,omitempty"`
	Decisions []string        `json:"decisions"`
	State     ApprovalState   `json:"state"`
	// Decision is set once decided.
	Decision *ApprovalDecision `json:"decision,omitempty"`
	// Execution is "", started or done (see the package's approval notes);
	// Result is the call's result once done.
	Execution string          `json:"execution,omitempty"`
	Result    *ApprovalResult `json:"result,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt *time.Time      `json:"expires_at,omitempty"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
}

// ApprovalDecision is a person's answer to an approval.
type ApprovalDecision struct {
	Decision string `json:"decision"`
	// Arguments of an edit: they replace the model's (authorization) or
	// complete them (param_required).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Answer to a question (decision answer): a string, or a list of
	// strings for a multiple choice (see [Question.CheckAnswer]).
	Answer json.RawMessage `json:"answer,omitempty"`
	// Reason of a reject (the model reads it) or a cancel.
	Reason string `json:"reason,omitempty"`
	// By is who decided: a user id, or "timeout".
	By string `json:"decided_by,omitempty"`
}

// ApprovalResult is the result of an approved call, kept so it is never
// run twice.
type ApprovalResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// ApprovalRequiredData is the payload of approval_required.
type ApprovalRequiredData struct {
	ApprovalID string          `json:"approval_id"`
	Kind       string          `json:"kind"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Reason     string          `json:"reason"`
	Decisions  []string        `json:"decisions"`
	Missing    json.RawMessage `json:"missing,omitempty"`
	CallID     string          `json:"call_id"`
	Round      int             `json:"round"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
}

// ApprovalDecidedData is the payload of approval_decided, emitted when the
// run goes on after its approvals were decided.
type ApprovalDecidedData struct {
	ApprovalID string          `json:"approval_id"`
	Tool       string          `json:"tool"`
	State      ApprovalState   `json:"state"`
	Decision   string          `json:"decision"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	By         string          `json:"decided_by,omitempty"`
}

// PendingRound is a suspended round as the run keeps it (Run.Pending):
// the model's answer and its calls, resolved, each with its approval when
// it has one.
type PendingRound struct {
	Round            int               `json:"round"`
	Content          string            `json:"content,omitempty"`
	ReasoningContent string            `json:"reasoning_content,omitempty"`
	Calls            []PendingToolCall `json:"calls"`
	// Locks are the run's lock keys, kept through the wait so the
	// instance that resumes it renews exactly these.
	Locks []string `json:"locks,omitempty"`
}

// PendingToolCall is one call of a suspended round.
type PendingToolCall struct {
	Call       ToolCall `json:"call"`
	Err        string   `json:"error,omitempty"`
	ApprovalID string   `json:"approval_id,omitempty"`
	// Denied: the policy refused the call (Err says why).
	Denied bool `json:"denied,omitempty"`
}

// ApprovalPolicy says which calls need a person's decision; Options.Approvals.
type ApprovalPolicy struct {
	// Tools always ask, read-only or not: canonical names or path.Match
	// globs ("execute_command", "*@*").
	Tools []string
	// AllTools: every tool that is not read-only asks.
	AllTools bool
	// Mode is the approval mode of runs that do not choose one: suggest,
	// auto_edit or full_auto (default).
	Mode string
	// Timeout decides an approval nobody decided after it; 0 means one
	// hour, negative never.
	Timeout time.Duration
	// OnTimeout is the decision then: reject (default) or cancel.
	OnTimeout string
}

func (p ApprovalPolicy) withDefaults() ApprovalPolicy {
	if p.Mode == "" {
		p.Mode = ApprovalFullAuto
	}
	if p.Timeout == 0 {
		p.Timeout = time.Hour
	}
	if p.OnTimeout == "" {
		p.OnTimeout = DecisionReject
	}
	return p
}

// CheckApprovalMode validates an approval mode ("" = the policy's).
func CheckApprovalMode(mode string) error {
	switch mode {
	case "", ApprovalSuggest, ApprovalAutoEdit, ApprovalFullAuto:
		return nil
	}
	return invalidf("approval_mode must be %q, %q or %q, got %q", ApprovalSuggest, ApprovalAutoEdit, ApprovalFullAuto, mode)
}

// SchemaValidator validates a value against a JSON Schema (cmd/wunder
// wires github.com/google/jsonschema-go); Options.Schemas.
type SchemaValidator interface {
	Validate(schema, value json.RawMessage) error
}

func matchesAny(patterns []string, name string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, err := path.Match(p, name)
		return p == name || (err == nil && ok)
	})
}
