package a2awire

import (
	"encoding/json"
	"strings"
	"time"
)

// DepthKey is the message metadata key carrying the delegation depth of a
// wunder-to-wunder chain (the recursion guard of a2a@service tools); the
// A2A front-end copies it into RunRequest.Metadata under the same key.
const DepthKey = "wunder.a2a.depth"

// VersionHeader is the header (and query parameter) naming the A2A
// version of a request (specification section 3.6).
const VersionHeader = "A2A-Version"

// Version is an A2A protocol version as wunder speaks it.
type Version string

// The protocol versions wunder speaks.
const (
	V10 Version = "1.0"
	V03 Version = "0.3"
)

// ParseVersion reads an A2A-Version header value: "" is 0.3 (as the
// specification says), "1.0", "1" and "1.0.x" are 1.0, "0.3" and "0.3.x" are
// 0.3; anything else is not supported.
func ParseVersion(h string) (Version, bool) {
	h = strings.TrimPrefix(strings.TrimSpace(h), "v")
	switch {
	case h == "" || h == "0.3" || strings.HasPrefix(h, "0.3."):
		return V03, true
	case h == "1" || h == "1.0" || strings.HasPrefix(h, "1.0."):
		return V10, true
	}
	return "", false
}

// Role is a message role, normalised to "user" or "agent".
type Role string

// Roles.
const (
	RoleUser  Role = "user"
	RoleAgent Role = "agent"
)

// UnmarshalJSON accepts both "user" (0.3) and "ROLE_USER" (1.0).
func (r *Role) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil { // ProtoJSON may write enums as numbers
		*r = Role(enumName(roleNames, n))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = Role(strings.ToLower(strings.TrimPrefix(s, "ROLE_")))
	return nil
}

// The 1.0 enums by number (a2a.proto), for ProtoJSON that writes numbers.
var (
	roleNames  = []string{"unspecified", "user", "agent"}
	stateNames = []string{"unspecified", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"}
)

func enumName(names []string, n int) string {
	if n < 0 || n >= len(names) {
		return "unrecognized"
	}
	return names[n]
}

// State is a task state, normalised to the 0.3 spelling ("working",
// "input-required", ...).
type State string

// Task states.
const (
	StateSubmitted     State = "submitted"
	StateWorking       State = "working"
	StateInputRequired State = "input-required"
	StateAuthRequired  State = "auth-required"
	StateCompleted     State = "completed"
	StateCanceled      State = "canceled"
	StateFailed        State = "failed"
	StateRejected      State = "rejected"
	StateUnknown       State = "unknown"
)

// Known reports whether s is a state of the spec (not unspecified,
// unrecognized or anything else a client made up).
func (s State) Known() bool {
	switch s {
	case StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired, StateCompleted, StateCanceled, StateFailed, StateRejected:
		return true
	}
	return false
}

// Terminal reports whether no further change can happen.
func (s State) Terminal() bool {
	return s == StateCompleted || s == StateCanceled || s == StateFailed || s == StateRejected
}

// Interrupted reports whether the task waits for its client.
func (s State) Interrupted() bool { return s == StateInputRequired || s == StateAuthRequired }

// UnmarshalJSON accepts both "input-required" and "TASK_STATE_INPUT_REQUIRED".
func (s *State) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		*s = State(enumName(stateNames, n))
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = ParseState(v)
	return nil
}

// ParseState normalises either spelling of a state.
func ParseState(v string) State {
	v = strings.ToLower(strings.TrimPrefix(v, "TASK_STATE_"))
	v = strings.ReplaceAll(v, "_", "-")
	if v == "cancelled" {
		v = "canceled"
	}
	return State(v)
}

func (s State) v10() string {
	if s == "" || s == StateUnknown {
		return "TASK_STATE_UNSPECIFIED"
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

// Part is one piece of content. Exactly one of Text, Data, URL or Raw is
// meant; Kind says which ("text", "data", "file").
type Part struct {
	Kind      string
	Text      string
	Data      json.RawMessage
	URL       string
	Raw       []byte
	MediaType string
	Filename  string
	Metadata  map[string]any
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Kind: "text", Text: s} }

// Message is one message of a conversation.
type Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             Role           `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
}

// Text joins the message's text parts (and data parts as JSON).
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

func partsText(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		var s string
		switch {
		case p.Kind == "text" || (p.Kind == "" && p.Text != ""):
			s = p.Text
		case len(p.Data) > 0:
			s = string(p.Data)
		case p.URL != "":
			s = p.URL
		}
		if s == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String()
}

// TaskStatus is a task's state with an optional message.
type TaskStatus struct {
	State     State      `json:"state"`
	Message   *Message   `json:"message,omitempty"`
	Timestamp *time.Time `json:"timestamp,omitempty"`
}

// Artifact is an output of a task.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// Extensions are the URIs of the extensions the artifact uses.
	Extensions []string `json:"extensions,omitempty"`
}

// Text joins the artifact's text parts.
func (a *Artifact) Text() string { return partsText(a.Parts) }

// Task is a unit of work (a wunder run).
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	History   []Message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// StatusUpdate is a TaskStatusUpdateEvent.
type StatusUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Final     bool           `json:"final,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// ArtifactUpdate is a TaskArtifactUpdateEvent.
type ArtifactUpdate struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// Event is one item of a stream or one answer of SendMessage: exactly one
// field is set.
type Event struct {
	Task     *Task
	Message  *Message
	Status   *StatusUpdate
	Artifact *ArtifactUpdate
}

// PushAuth is the authentication a webhook asks for.
type PushAuth struct {
	Scheme      string
	Credentials string
}

// PushConfig is a push notification config of a task.
type PushConfig struct {
	TaskID string
	ID     string
	URL    string
	Token  string
	Auth   *PushAuth
}
