package a2awire

import (
	"encoding/json"
	"time"
)

// The JSON shapes of each version. Encode* turn the neutral types into
// them; they are plain structs so encoding/json does the rest.

type part10 struct {
	Text      *string         `json:"text,omitempty"`
	Raw       []byte          `json:"raw,omitempty"`
	URL       string          `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

type file03 struct {
	URI      string `json:"uri,omitempty"`
	Bytes    []byte `json:"bytes,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	Name     string `json:"name,omitempty"`
}

type part03 struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	File     *file03         `json:"file,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

type message struct {
	Kind             string         `json:"kind,omitempty"`
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []any          `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
}

type status struct {
	State     string     `json:"state"`
	Message   *message   `json:"message,omitempty"`
	Timestamp *time.Time `json:"timestamp,omitempty"`
}

type artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []any          `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

type task struct {
	Kind      string         `json:"kind,omitempty"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    status         `json:"status"`
	Artifacts []artifact     `json:"artifacts,omitempty"`
	History   []message      `json:"history,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type statusUpdate struct {
	Kind      string         `json:"kind,omitempty"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    status         `json:"status"`
	Final     *bool          `json:"final,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type artifactUpdate struct {
	Kind      string         `json:"kind,omitempty"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// streamResponse is the 1.0 oneof wrapper (StreamResponse and
// SendMessageResponse).
type streamResponse struct {
	Task           *task           `json:"task,omitempty"`
	Message        *message        `json:"message,omitempty"`
	StatusUpdate   *statusUpdate   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *artifactUpdate `json:"artifactUpdate,omitempty"`
}

func encodeParts(v Version, ps []Part) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		if v == V10 {
			w := part10{Raw: p.Raw, URL: p.URL, Data: p.Data, MediaType: p.MediaType, Filename: p.Filename, Metadata: p.Metadata}
			if p.Kind == "text" || (p.Kind == "" && p.URL == "" && p.Raw == nil && p.Data == nil) {
				t := p.Text
				w.Text = &t
			}
			out = append(out, w)
			continue
		}
		w := part03{Kind: p.Kind, Metadata: p.Metadata}
		switch {
		case len(p.Data) > 0:
			w.Kind, w.Data = "data", p.Data
		case p.URL != "" || p.Raw != nil:
			w.Kind, w.File = "file", &file03{URI: p.URL, Bytes: p.Raw, MimeType: p.MediaType, Name: p.Filename}
		default:
			t := p.Text
			w.Kind, w.Text = "text", &t
		}
		out = append(out, w)
	}
	return out
}

func encodeMessage(v Version, m *Message) *message {
	if m == nil {
		return nil
	}
	w := &message{MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID, Role: string(m.Role),
		Parts: encodeParts(v, m.Parts), Metadata: m.Metadata, ReferenceTaskIDs: m.ReferenceTaskIDs, Extensions: m.Extensions}
	if v == V10 {
		w.Role = "ROLE_" + map[Role]string{RoleUser: "USER", RoleAgent: "AGENT"}[m.Role]
		if w.Role == "ROLE_" {
			w.Role = "ROLE_UNSPECIFIED"
		}
	} else {
		w.Kind = "message"
	}
	return w
}

func encodeStatus(v Version, s TaskStatus) status {
	st := string(s.State)
	if v == V10 {
		st = s.State.v10()
	} else if st == "" {
		st = string(StateUnknown)
	}
	return status{State: st, Message: encodeMessage(v, s.Message), Timestamp: s.Timestamp}
}

func encodeArtifact(v Version, a Artifact) artifact {
	return artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description, Parts: encodeParts(v, a.Parts), Metadata: a.Metadata, Extensions: a.Extensions}
}

func encodeTask(v Version, t *Task) *task {
	w := &task{ID: t.ID, ContextID: t.ContextID, Status: encodeStatus(v, t.Status), Metadata: t.Metadata}
	if v == V03 {
		w.Kind = "task"
	}
	for _, a := range t.Artifacts {
		w.Artifacts = append(w.Artifacts, encodeArtifact(v, a))
	}
	for i := range t.History {
		w.History = append(w.History, *encodeMessage(v, &t.History[i]))
	}
	return w
}

// EncodeTask returns t in v's JSON shape (a Task object in both versions).
func EncodeTask(v Version, t *Task) any { return encodeTask(v, t) }

// EncodeEvent returns ev in v's shape: in 1.0 the StreamResponse wrapper
// ({"task":...}, {"statusUpdate":...}, ...); in 0.3 the object itself with
// its kind.
func EncodeEvent(v Version, ev Event) any {
	var r streamResponse
	switch {
	case ev.Task != nil:
		r.Task = encodeTask(v, ev.Task)
	case ev.Message != nil:
		r.Message = encodeMessage(v, ev.Message)
	case ev.Status != nil:
		s := ev.Status
		r.StatusUpdate = &statusUpdate{TaskID: s.TaskID, ContextID: s.ContextID, Status: encodeStatus(v, s.Status), Metadata: s.Metadata}
		if v == V03 {
			final := s.Final
			r.StatusUpdate.Kind, r.StatusUpdate.Final = "status-update", &final
		}
	case ev.Artifact != nil:
		a := ev.Artifact
		r.ArtifactUpdate = &artifactUpdate{TaskID: a.TaskID, ContextID: a.ContextID, Artifact: encodeArtifact(v, a.Artifact),
			Append: a.Append, LastChunk: a.LastChunk, Metadata: a.Metadata}
		if v == V03 {
			r.ArtifactUpdate.Kind = "artifact-update"
		}
	}
	if v == V10 {
		return r
	}
	switch {
	case r.Task != nil:
		return r.Task
	case r.Message != nil:
		return r.Message
	case r.StatusUpdate != nil:
		return r.StatusUpdate
	case r.ArtifactUpdate != nil:
		return r.ArtifactUpdate
	}
	return nil
}

type pushAuth10 struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

type push10 struct {
	TaskID string      `json:"taskId"`
	ID     string      `json:"id,omitempty"`
	URL    string      `json:"url"`
	Token  string      `json:"token,omitempty"`
	Auth   *pushAuth10 `json:"authentication,omitempty"`
}

type pushAuth03 struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

type pushConfig03 struct {
	ID    string      `json:"id,omitempty"`
	URL   string      `json:"url"`
	Token string      `json:"token,omitempty"`
	Auth  *pushAuth03 `json:"authentication,omitempty"`
}

type push03 struct {
	TaskID string       `json:"taskId"`
	Config pushConfig03 `json:"pushNotificationConfig"`
}

// EncodePushConfig returns c in v's shape: 1.0 TaskPushNotificationConfig
// (flat) or 0.3 {taskId, pushNotificationConfig}.
func EncodePushConfig(v Version, c PushConfig) any {
	if v == V10 {
		w := push10{TaskID: c.TaskID, ID: c.ID, URL: c.URL, Token: c.Token}
		if c.Auth != nil {
			w.Auth = &pushAuth10{Scheme: c.Auth.Scheme, Credentials: c.Auth.Credentials}
		}
		return w
	}
	w := push03{TaskID: c.TaskID, Config: pushConfig03{ID: c.ID, URL: c.URL, Token: c.Token}}
	if c.Auth != nil {
		w.Config.Auth = &pushAuth03{Schemes: []string{c.Auth.Scheme}, Credentials: c.Auth.Credentials}
	}
	return w
}
