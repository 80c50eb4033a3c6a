package a2awire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/go-cmp/cmp"

	w "github.com/wunder/wunder/internal/a2awire"
)

// The wire types against the reference implementation of each version:
// what wunder encodes, a2a-go reads (v2.4.0 for 1.0, v0.3.15 for 0.3);
// what a2a-go writes back, wunder decodes to the value it started from.
// The corpus holds every part kind, every task state and every event
// kind, so a drift in a discriminator, an enum spelling or a field name
// on either side fails here.

var stamp = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// partKinds are one part of each kind and form the two versions share.
var partKinds = map[string]w.Part{
	"text":       {Kind: "text", Text: "hello, wörld", Metadata: map[string]any{"lang": "de"}},
	"empty text": {Kind: "text", Text: ""},
	"data":       {Kind: "data", Data: json.RawMessage(`{"a":1,"b":["x",true],"c":{"d":null}}`)},
	"file url":   {Kind: "file", URL: "https://example.com/report.pdf", MediaType: "application/pdf", Filename: "report.pdf"},
	"file raw":   {Kind: "file", Raw: []byte{0, 1, 2, 0xfe, 0xff}, MediaType: "image/png", Filename: "dot.png", Metadata: map[string]any{"n": 2.0}},
}

// corpus is one event of each kind, with parts of every kind and every
// known state.
func corpus() map[string]w.Event {
	var parts []w.Part
	for _, k := range []string{"text", "empty text", "data", "file url", "file raw"} {
		parts = append(parts, partKinds[k])
	}
	msg := func(role w.Role) *w.Message {
		return &w.Message{MessageID: "m-" + string(role), ContextID: "c1", TaskID: "t1", Role: role, Parts: parts,
			Metadata: map[string]any{"k": "v"}, ReferenceTaskIDs: []string{"t0"}, Extensions: []string{"https://ext.example/x"}}
	}
	ts := stamp
	out := map[string]w.Event{
		"message user":  {Message: msg(w.RoleUser)},
		"message agent": {Message: msg(w.RoleAgent)},
		"task": {Task: &w.Task{ID: "t1", ContextID: "c1",
			Status:    w.TaskStatus{State: w.StateCompleted, Message: msg(w.RoleAgent), Timestamp: &ts},
			Artifacts: []w.Artifact{{ArtifactID: "a1", Name: "answer", Description: "the answer", Parts: parts, Metadata: map[string]any{"x": 1.0}}},
			History:   []w.Message{*msg(w.RoleUser), *msg(w.RoleAgent)},
			Metadata:  map[string]any{"wunder.run": "r1"}}},
		"artifact update": {Artifact: &w.ArtifactUpdate{TaskID: "t1", ContextID: "c1", Append: true, LastChunk: true,
			Artifact: w.Artifact{ArtifactID: "a1", Parts: parts}, Metadata: map[string]any{"seq": 3.0}}},
	}
	for _, s := range []w.State{w.StateSubmitted, w.StateWorking, w.StateInputRequired, w.StateAuthRequired,
		w.StateCompleted, w.StateCanceled, w.StateFailed, w.StateRejected} {
		out["status "+string(s)] = w.Event{Status: &w.StatusUpdate{TaskID: "t1", ContextID: "c1",
			Status: w.TaskStatus{State: s, Timestamp: &ts}, Final: s.Terminal() || s.Interrupted(), Metadata: map[string]any{"s": string(s)}}}
		out["task "+string(s)] = w.Event{Task: &w.Task{ID: "t1", ContextID: "c1", Status: w.TaskStatus{State: s}}}
	}
	return out
}

// sameJSON compares raw JSON by value, not by spelling.
var sameJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return cmp.Equal(x, y)
})

// without10 is ev as 1.0 carries it: 1.0 has no final flag (a stream
// ends with the terminal or interrupted status itself).
func without10(ev w.Event) w.Event {
	if ev.Status != nil {
		s := *ev.Status
		s.Final = false
		ev.Status = &s
	}
	return ev
}

func TestEventsReadBackThroughA2AGo10(t *testing.T) {
	for name, ev := range corpus() {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(w.EncodeEvent(w.V10, ev))
			if err != nil {
				t.Fatal(err)
			}
			var sr sdk.StreamResponse
			if err := json.Unmarshal(b, &sr); err != nil {
				t.Fatalf("a2a-go cannot read wunder's 1.0 %s: %v\n%s", name, err, b)
			}
			checkSDK10(t, ev, sr.Event)
			back, err := json.Marshal(sr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.DecodeEvent(back)
			if err != nil {
				t.Fatalf("wunder cannot read a2a-go's 1.0 %s: %v\n%s", name, err, back)
			}
			if d := cmp.Diff(without10(ev), got, sameJSON); d != "" {
				t.Errorf("1.0 round trip through a2a-go (-sent +read):\n%s", d)
			}
		})
	}
}

// checkSDK10 checks what a2a-go read: the event's type, states and roles
// in its own enums, each part's content type.
func checkSDK10(t *testing.T, ev w.Event, got sdk.Event) {
	t.Helper()
	state10 := func(s w.State) sdk.TaskState {
		return map[w.State]sdk.TaskState{w.StateSubmitted: sdk.TaskStateSubmitted, w.StateWorking: sdk.TaskStateWorking,
			w.StateInputRequired: sdk.TaskStateInputRequired, w.StateAuthRequired: sdk.TaskStateAuthRequired,
			w.StateCompleted: sdk.TaskStateCompleted, w.StateCanceled: sdk.TaskStateCanceled, w.StateFailed: sdk.TaskStateFailed,
			w.StateRejected: sdk.TaskStateRejected}[s]
	}
	checkParts := func(ps []w.Part, got sdk.ContentParts) {
		if len(got) != len(ps) {
			t.Fatalf("a2a-go read %d parts; want %d", len(got), len(ps))
		}
		for i, p := range ps {
			var ok bool
			switch p.Kind {
			case "text":
				ok = got[i].Text() == p.Text
				_, isText := got[i].Content.(sdk.Text)
				ok = ok && isText
			case "data":
				_, ok = got[i].Content.(sdk.Data)
			case "file":
				if p.URL != "" {
					ok = string(got[i].URL()) == p.URL
				} else {
					ok = bytes.Equal(got[i].Raw(), p.Raw)
				}
				ok = ok && got[i].MediaType == p.MediaType && got[i].Filename == p.Filename
			}
			if !ok {
				t.Errorf("part %d (%s): a2a-go read %#v", i, p.Kind, got[i])
			}
		}
	}
	checkMessage := func(m *w.Message, got *sdk.Message) {
		role := map[w.Role]sdk.MessageRole{w.RoleUser: sdk.MessageRoleUser, w.RoleAgent: sdk.MessageRoleAgent}[m.Role]
		if got == nil || got.ID != m.MessageID || got.Role != role || string(got.TaskID) != m.TaskID {
			t.Fatalf("a2a-go read message %+v; want %s %s", got, m.MessageID, role)
		}
		checkParts(m.Parts, got.Parts)
	}
	switch {
	case ev.Message != nil:
		m, ok := got.(*sdk.Message)
		if !ok {
			t.Fatalf("a2a-go read a %T; want a message", got)
		}
		checkMessage(ev.Message, m)
	case ev.Task != nil:
		tk, ok := got.(*sdk.Task)
		if !ok || string(tk.ID) != ev.Task.ID || tk.Status.State != state10(ev.Task.Status.State) {
			t.Fatalf("a2a-go read %T %+v; want task %s %s", got, got, ev.Task.ID, ev.Task.Status.State)
		}
		if len(tk.Artifacts) != len(ev.Task.Artifacts) || len(tk.History) != len(ev.Task.History) {
			t.Fatalf("a2a-go read %d artifacts, %d messages", len(tk.Artifacts), len(tk.History))
		}
		for i, a := range ev.Task.Artifacts {
			checkParts(a.Parts, tk.Artifacts[i].Parts)
		}
		for i := range ev.Task.History {
			checkMessage(&ev.Task.History[i], tk.History[i])
		}
	case ev.Status != nil:
		s, ok := got.(*sdk.TaskStatusUpdateEvent)
		if !ok || s.Status.State != state10(ev.Status.Status.State) || s.Status.Timestamp == nil || !s.Status.Timestamp.Equal(stamp) {
			t.Fatalf("a2a-go read %T %+v; want status %s", got, got, ev.Status.Status.State)
		}
	case ev.Artifact != nil:
		a, ok := got.(*sdk.TaskArtifactUpdateEvent)
		if !ok || !a.Append || !a.LastChunk || string(a.Artifact.ID) != ev.Artifact.Artifact.ArtifactID {
			t.Fatalf("a2a-go read %T %+v; want the artifact update", got, got)
		}
		checkParts(ev.Artifact.Artifact.Parts, a.Artifact.Parts)
	}
}

func TestEventsReadBackThroughA2AGo03(t *testing.T) {
	for name, ev := range corpus() {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(w.EncodeEvent(w.V03, ev))
			if err != nil {
				t.Fatal(err)
			}
			got, err := legacy.UnmarshalEventJSON(b)
			if err != nil {
				t.Fatalf("a2a-go 0.3 cannot read wunder's 0.3 %s: %v\n%s", name, err, b)
			}
			checkLegacy(t, ev, got)
			back, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			read, err := w.DecodeEvent(back)
			if err != nil {
				t.Fatalf("wunder cannot read a2a-go's 0.3 %s: %v\n%s", name, err, back)
			}
			if d := cmp.Diff(ev, read, sameJSON); d != "" {
				t.Errorf("0.3 round trip through a2a-go (-sent +read):\n%s", d)
			}
		})
	}
}

// checkLegacy checks what a2a-go 0.3 read: the kind of event, the state
// spelling, the final flag, the part types.
func checkLegacy(t *testing.T, ev w.Event, got legacy.Event) {
	t.Helper()
	checkParts := func(ps []w.Part, got legacy.ContentParts) {
		if len(got) != len(ps) {
			t.Fatalf("a2a-go read %d parts; want %d", len(got), len(ps))
		}
		for i, p := range ps {
			var ok bool
			switch g := got[i].(type) {
			case legacy.TextPart:
				ok = p.Kind == "text" && g.Text == p.Text
			case legacy.DataPart:
				ok = p.Kind == "data" && g.Data["a"] == 1.0
			case legacy.FilePart:
				switch f := g.File.(type) {
				case legacy.FileURI:
					ok = f.URI == p.URL && f.MimeType == p.MediaType && f.Name == p.Filename
				case legacy.FileBytes:
					ok = p.Raw != nil && f.MimeType == p.MediaType && f.Name == p.Filename
				}
			}
			if !ok {
				t.Errorf("part %d (%s): a2a-go read %#v", i, p.Kind, got[i])
			}
		}
	}
	switch {
	case ev.Message != nil:
		m, ok := got.(*legacy.Message)
		if !ok || string(m.Role) != string(ev.Message.Role) {
			t.Fatalf("a2a-go read %T %+v; want a %s message", got, got, ev.Message.Role)
		}
		checkParts(ev.Message.Parts, m.Parts)
	case ev.Task != nil:
		tk, ok := got.(*legacy.Task)
		if !ok || string(tk.Status.State) != string(ev.Task.Status.State) {
			t.Fatalf("a2a-go read %T %+v; want task in %s", got, got, ev.Task.Status.State)
		}
		for i, a := range ev.Task.Artifacts {
			checkParts(a.Parts, tk.Artifacts[i].Parts)
		}
	case ev.Status != nil:
		s, ok := got.(*legacy.TaskStatusUpdateEvent)
		if !ok || string(s.Status.State) != string(ev.Status.Status.State) || s.Final != ev.Status.Final {
			t.Fatalf("a2a-go read %T %+v; want status %s final %v", got, got, ev.Status.Status.State, ev.Status.Final)
		}
	case ev.Artifact != nil:
		a, ok := got.(*legacy.TaskArtifactUpdateEvent)
		if !ok || !a.Append || !a.LastChunk {
			t.Fatalf("a2a-go read %T %+v; want the artifact update", got, got)
		}
		checkParts(ev.Artifact.Artifact.Parts, a.Artifact.Parts)
	}
}

// What a2a-go writes on its own (its constructors, not wunder's encoder)
// wunder reads: the events an a2a-go agent streams, in both versions.
func TestReadsWhatA2AGoWrites(t *testing.T) {
	info := sdk.TaskInfo{TaskID: "t9", ContextID: "c9"}
	msg := sdk.NewMessageForTask(sdk.MessageRoleAgent, info, sdk.NewTextPart("need more"), sdk.NewDataPart(map[string]any{"q": "which"}),
		sdk.NewFileURLPart("https://x.example/f", "text/csv"), sdk.NewRawPart([]byte("raw")))
	events10 := []sdk.Event{
		sdk.NewSubmittedTask(info, sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))),
		sdk.NewStatusUpdateEvent(info, sdk.TaskStateWorking, nil),
		sdk.NewArtifactEvent(info, sdk.NewTextPart("partial")),
		sdk.NewStatusUpdateEvent(info, sdk.TaskStateInputRequired, msg),
		msg,
	}
	for i, e := range events10 {
		b, err := json.Marshal(sdk.StreamResponse{Event: e})
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.DecodeEvent(b)
		if err != nil {
			t.Fatalf("event %d %T: %v\n%s", i, e, err, b)
		}
		checkSDK10Back(t, e, got)
	}

	linfo := legacy.TaskInfo{TaskID: "t9", ContextID: "c9"}
	lmsg := legacy.NewMessageForTask(legacy.MessageRoleAgent, linfo, legacy.TextPart{Text: "need more"},
		legacy.DataPart{Data: map[string]any{"q": "which"}}, legacy.FilePart{File: legacy.FileURI{URI: "https://x.example/f", FileMeta: legacy.FileMeta{MimeType: "text/csv"}}})
	final := legacy.NewStatusUpdateEvent(linfo, legacy.TaskStateInputRequired, lmsg)
	final.Final = true
	for i, tc := range []struct {
		e    legacy.Event
		want string
	}{
		{legacy.NewSubmittedTask(linfo, legacy.NewMessage(legacy.MessageRoleUser, legacy.TextPart{Text: "hi"})), "task submitted"},
		{legacy.NewStatusUpdateEvent(linfo, legacy.TaskStateWorking, nil), "status working false"},
		{legacy.NewArtifactEvent(linfo, legacy.TextPart{Text: "partial"}), "artifact partial"},
		{final, "status input-required true"},
		{lmsg, "message agent need more\n{\"q\":\"which\"}\nhttps://x.example/f"},
	} {
		b, err := json.Marshal(tc.e)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := w.DecodeEvent(b)
		if err != nil {
			t.Fatalf("0.3 event %d: %v\n%s", i, err, b)
		}
		if got := summary(ev); got != tc.want {
			t.Errorf("0.3 event %d read as %q; want %q\n%s", i, got, tc.want, b)
		}
	}
}

func checkSDK10Back(t *testing.T, e sdk.Event, got w.Event) {
	t.Helper()
	switch e := e.(type) {
	case *sdk.Task:
		if got.Task == nil || got.Task.ID != string(e.ID) || got.Task.Status.State != w.StateSubmitted || got.Task.History[0].Text() != "hi" {
			t.Errorf("task read as %+v", got)
		}
	case *sdk.TaskStatusUpdateEvent:
		want := w.ParseState(string(e.Status.State))
		if got.Status == nil || got.Status.Status.State != want || !want.Known() {
			t.Errorf("status %s read as %+v", e.Status.State, got)
		}
		if e.Status.Message != nil && got.Status.Status.Message.Role != w.RoleAgent {
			t.Errorf("status message role %q", got.Status.Status.Message.Role)
		}
	case *sdk.TaskArtifactUpdateEvent:
		if got.Artifact == nil || got.Artifact.Artifact.Text() != "partial" || got.Artifact.Artifact.ArtifactID != string(e.Artifact.ID) {
			t.Errorf("artifact read as %+v", got)
		}
	case *sdk.Message:
		m := got.Message
		if m == nil || m.Role != w.RoleAgent || len(m.Parts) != 4 {
			t.Fatalf("message read as %+v", got)
		}
		kinds := []string{m.Parts[0].Kind, m.Parts[1].Kind, m.Parts[2].Kind, m.Parts[3].Kind}
		if fmt.Sprint(kinds) != "[text data file file]" || m.Parts[2].MediaType != "text/csv" || string(m.Parts[3].Raw) != "raw" {
			t.Errorf("parts read as %+v", m.Parts)
		}
	}
}

// summary is an event in a line, for tables.
func summary(ev w.Event) string {
	switch {
	case ev.Task != nil:
		return "task " + string(ev.Task.Status.State)
	case ev.Status != nil:
		return fmt.Sprintf("status %s %v", ev.Status.Status.State, ev.Status.Final)
	case ev.Artifact != nil:
		return "artifact " + ev.Artifact.Artifact.Text()
	case ev.Message != nil:
		return "message " + string(ev.Message.Role) + " " + ev.Message.Text()
	}
	return "none"
}
