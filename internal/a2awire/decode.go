package a2awire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// UnmarshalJSON reads a part in either shape: 1.0 flat ({text}, {data},
// {url}, {raw}) or 0.3 with kind ({kind:"text",text}, {kind:"data",data},
// {kind:"file",file:{uri|bytes,mimeType,name}}).
func (p *Part) UnmarshalJSON(b []byte) error {
	var w struct {
		Kind      string          `json:"kind"`
		Text      *string         `json:"text"`
		Data      json.RawMessage `json:"data"`
		URL       string          `json:"url"`
		Raw       []byte          `json:"raw"`
		MediaType string          `json:"mediaType"`
		Filename  string          `json:"filename"`
		File      *file03         `json:"file"`
		Metadata  map[string]any  `json:"metadata"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = Part{Kind: w.Kind, URL: w.URL, Raw: w.Raw, MediaType: w.MediaType, Filename: w.Filename, Metadata: w.Metadata}
	if len(w.Data) > 0 && !bytes.Equal(w.Data, []byte("null")) {
		p.Data = w.Data
	}
	if w.Text != nil {
		p.Text = *w.Text
	}
	if w.File != nil {
		p.URL, p.Raw, p.MediaType, p.Filename = w.File.URI, w.File.Bytes, w.File.MimeType, w.File.Name
	}
	switch {
	case p.Kind != "":
	case w.Text != nil:
		p.Kind = "text"
	case p.Data != nil:
		p.Kind = "data"
	case p.URL != "" || p.Raw != nil:
		p.Kind = "file"
	default:
		return errors.New("part has no content (text, data, url, raw or file)")
	}
	switch {
	case p.Kind == "text":
		return nil
	case p.Kind == "data" && p.Data != nil:
		return nil
	case p.Kind == "file" && (p.URL != "" || p.Raw != nil):
		return nil
	case p.Kind == "data" || p.Kind == "file":
		return fmt.Errorf("%s part has no content", p.Kind)
	}
	return fmt.Errorf("part kind %q is not text, data or file", p.Kind)
}

// MarshalJSON writes the 1.0 shape (used for logs and tool data).
func (p Part) MarshalJSON() ([]byte, error) { return json.Marshal(encodeParts(V10, []Part{p})[0]) }

// DecodeEvent reads one stream item or SendMessage result of either version:
// a 1.0 wrapper ({"task":..}, {"message":..}, {"statusUpdate":..},
// {"artifactUpdate":..}) or a 0.3 object with kind.
func DecodeEvent(b []byte) (Event, error) {
	var probe struct {
		Kind           string          `json:"kind"`
		Task           json.RawMessage `json:"task"`
		Message        json.RawMessage `json:"message"`
		StatusUpdate   json.RawMessage `json:"statusUpdate"`
		ArtifactUpdate json.RawMessage `json:"artifactUpdate"`
		ID             string          `json:"id"`
		MessageID      string          `json:"messageId"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Event{}, err
	}
	var ev Event
	var err error
	switch {
	case probe.Kind == "task":
		ev.Task, err = decode[Task](b)
	case probe.Kind == "message":
		ev.Message, err = decode[Message](b)
	case probe.Kind == "status-update":
		ev.Status, err = decode[StatusUpdate](b)
	case probe.Kind == "artifact-update":
		ev.Artifact, err = decode[ArtifactUpdate](b)
	case probe.Kind != "":
		return Event{}, fmt.Errorf("unknown event kind %q", probe.Kind)
	case len(probe.Task) > 0:
		ev.Task, err = decode[Task](probe.Task)
	case len(probe.StatusUpdate) > 0:
		ev.Status, err = decode[StatusUpdate](probe.StatusUpdate)
	case len(probe.ArtifactUpdate) > 0:
		ev.Artifact, err = decode[ArtifactUpdate](probe.ArtifactUpdate)
	case len(probe.Message) > 0:
		ev.Message, err = decode[Message](probe.Message)
	case probe.ID != "":
		ev.Task, err = decode[Task](b)
	case probe.MessageID != "":
		ev.Message, err = decode[Message](b)
	default:
		return Event{}, errors.New("not an A2A event: no task, message, statusUpdate or artifactUpdate")
	}
	return ev, err
}

func decode[T any](b []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	return v, nil
}

// SendParams are the params of SendMessage / message/send (and the
// streaming variants) in either version.
type SendParams struct {
	Message       *Message
	HistoryLength *int
	// Blocking is false when the client asked for an immediate answer
	// (1.0 returnImmediately, 0.3 blocking:false).
	Blocking bool
	Push     *PushConfig
	Metadata map[string]any
}

// DecodeSendParams reads SendMessage params.
func DecodeSendParams(b []byte) (*SendParams, error) {
	var w struct {
		Message *Message       `json:"message"`
		Meta    map[string]any `json:"metadata"`
		Config  *struct {
			Blocking          *bool           `json:"blocking"`
			ReturnImmediately bool            `json:"returnImmediately"`
			HistoryLength     *int            `json:"historyLength"`
			Push10            json.RawMessage `json:"taskPushNotificationConfig"`
			Push03            json.RawMessage `json:"pushNotificationConfig"`
		} `json:"configuration"`
	}
	if err := strictObject(b, &w); err != nil {
		return nil, err
	}
	if w.Message == nil {
		return nil, errors.New("message is required")
	}
	p := &SendParams{Message: w.Message, Metadata: w.Meta, Blocking: true}
	if c := w.Config; c != nil {
		if err := checkHistoryLength(c.HistoryLength); err != nil {
			return nil, err
		}
		p.HistoryLength = c.HistoryLength
		if c.ReturnImmediately || (c.Blocking != nil && !*c.Blocking) {
			p.Blocking = false
		}
		raw := c.Push10
		if len(raw) == 0 {
			raw = c.Push03
		}
		if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			pc, err := decodePushConfig(raw)
			if err != nil {
				return nil, err
			}
			p.Push = &pc
		}
	}
	return p, nil
}

// TaskParams are the params naming one task: GetTask, CancelTask,
// SubscribeToTask and their 0.3 names.
type TaskParams struct {
	ID            string         `json:"id"`
	HistoryLength *int           `json:"historyLength"`
	Metadata      map[string]any `json:"metadata"`
}

// DecodeTaskParams reads and checks task params.
func DecodeTaskParams(b []byte) (*TaskParams, error) {
	var p TaskParams
	if err := strictObject(b, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, errors.New("id is required")
	}
	if err := checkHistoryLength(p.HistoryLength); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListParams are the params of ListTasks (1.0).
type ListParams struct {
	ContextID        string `json:"contextId"`
	Status           State  `json:"status"`
	PageSize         int    `json:"pageSize"`
	PageToken        string `json:"pageToken"`
	HistoryLength    *int   `json:"historyLength"`
	IncludeArtifacts bool   `json:"includeArtifacts"`
}

// DecodeListParams reads ListTasks params (absent params are allowed).
func DecodeListParams(b []byte) (*ListParams, error) {
	var p ListParams
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return &p, nil
	}
	if err := strictObject(b, &p); err != nil {
		return nil, err
	}
	if p.PageSize < 0 {
		return nil, errors.New("pageSize must not be negative")
	}
	if err := checkHistoryLength(p.HistoryLength); err != nil {
		return nil, err
	}
	if !p.Status.Known() {
		// Unspecified or unrecognized means no filter: the @a2a-js/sdk
		// 1.3.0 client sends "UNRECOGNIZED" when none is set.
		p.Status = ""
	}
	return &p, nil
}

// PushParams are the params of the push config methods in either version:
// Create (1.0 flat config; 0.3 {taskId, pushNotificationConfig}), Get /
// Delete (1.0 {taskId, id}; 0.3 {id, pushNotificationConfigId}) and List
// (1.0 {taskId}; 0.3 {id}).
type PushParams struct {
	TaskID   string
	ConfigID string
	Config   *PushConfig
}

// DecodePushParams reads push config params of either version.
func DecodePushParams(b []byte) (*PushParams, error) {
	var w struct {
		TaskID   string          `json:"taskId"`
		ID       string          `json:"id"`
		ConfigID string          `json:"pushNotificationConfigId"`
		Config03 json.RawMessage `json:"pushNotificationConfig"`
		Config   json.RawMessage `json:"config"`
		URL      string          `json:"url"`
	}
	if err := strictObject(b, &w); err != nil {
		return nil, err
	}
	p := &PushParams{TaskID: w.TaskID, ConfigID: w.ID}
	if w.TaskID == "" { // 0.3 get/list/delete: id is the task
		p.TaskID, p.ConfigID = w.ID, w.ConfigID
	}
	raw := w.Config03
	if len(raw) == 0 {
		raw = w.Config
	}
	if len(raw) == 0 && w.URL != "" {
		raw = b
	}
	if len(raw) > 0 {
		c, err := decodePushConfig(raw)
		if err != nil {
			return nil, err
		}
		c.TaskID = p.TaskID
		p.Config = &c
	}
	if p.TaskID == "" {
		return nil, errors.New("taskId is required")
	}
	return p, nil
}

func decodePushConfig(b []byte) (PushConfig, error) {
	var w struct {
		TaskID string `json:"taskId"`
		ID     string `json:"id"`
		URL    string `json:"url"`
		Token  string `json:"token"`
		Auth   *struct {
			Scheme      string   `json:"scheme"`
			Schemes     []string `json:"schemes"`
			Credentials string   `json:"credentials"`
		} `json:"authentication"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return PushConfig{}, err
	}
	if w.URL == "" {
		return PushConfig{}, errors.New("push notification config: url is required")
	}
	c := PushConfig{TaskID: w.TaskID, ID: w.ID, URL: w.URL, Token: w.Token}
	if a := w.Auth; a != nil {
		scheme := a.Scheme
		if scheme == "" && len(a.Schemes) > 0 {
			scheme = a.Schemes[0]
		}
		c.Auth = &PushAuth{Scheme: scheme, Credentials: a.Credentials}
	}
	return c, nil
}

// checkHistoryLength refuses a negative historyLength (nil = all, 0 = none).
func checkHistoryLength(n *int) error {
	if n != nil && *n < 0 {
		return errors.New("historyLength must not be negative")
	}
	return nil
}

// strictObject decodes a JSON object; params that are not an object (an
// array, a string, null) are refused.
func strictObject(b []byte, v any) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("params must be a JSON object")
	}
	return json.Unmarshal(b, v)
}
