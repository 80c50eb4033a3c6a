package a2awire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	w "github.com/wunder/wunder/internal/a2awire"
)

// encodeJSON marshals what an Encode* function returned, as a generic
// value for comparison with a literal.
func encodeJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func literal(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("literal %s: %v", s, err)
	}
	return v
}

// Each part kind has one exact shape per version: 1.0 flat with no kind,
// 0.3 with its kind and files under "file" (uri|bytes, mimeType, name).
func TestPartShapes(t *testing.T) {
	for name, tc := range map[string]struct {
		part     w.Part
		v10, v03 string
	}{
		"text": {w.TextPart("hi"), `{"text":"hi"}`, `{"kind":"text","text":"hi"}`},
		"text without kind": {w.Part{Text: "hi"},
			`{"text":"hi"}`, `{"kind":"text","text":"hi"}`},
		"empty text keeps its field": {w.TextPart(""), `{"text":""}`, `{"kind":"text","text":""}`},
		"data": {w.Part{Kind: "data", Data: json.RawMessage(`{"a":[1]}`), Metadata: map[string]any{"m": "x"}},
			`{"data":{"a":[1]},"metadata":{"m":"x"}}`, `{"kind":"data","data":{"a":[1]},"metadata":{"m":"x"}}`},
		"data that is not an object": {w.Part{Kind: "data", Data: json.RawMessage(`[1,2]`)}, `{"data":[1,2]}`, `{"kind":"data","data":[1,2]}`},
		"file url": {w.Part{Kind: "file", URL: "https://h/f.pdf", MediaType: "application/pdf", Filename: "f.pdf"},
			`{"url":"https://h/f.pdf","mediaType":"application/pdf","filename":"f.pdf"}`,
			`{"kind":"file","file":{"uri":"https://h/f.pdf","mimeType":"application/pdf","name":"f.pdf"}}`},
		"file bytes": {w.Part{Kind: "file", Raw: []byte("abc"), MediaType: "text/plain"},
			`{"raw":"YWJj","mediaType":"text/plain"}`, `{"kind":"file","file":{"bytes":"YWJj","mimeType":"text/plain"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			m := w.Message{MessageID: "m", Role: w.RoleUser, Parts: []w.Part{tc.part}}
			for v, want := range map[w.Version]string{w.V10: tc.v10, w.V03: tc.v03} {
				enc := encodeJSON(t, w.EncodeEvent(v, w.Event{Message: &m}))
				if v == w.V10 {
					enc = enc.(map[string]any)["message"]
				}
				got := enc.(map[string]any)["parts"].([]any)[0]
				if d := cmp.Diff(literal(t, want), got); d != "" {
					t.Errorf("%s part (-want +got):\n%s", v, d)
				}
			}
			// Part's own MarshalJSON writes the 1.0 shape.
			b, err := json.Marshal(tc.part)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(literal(t, tc.v10), literal(t, string(b))); d != "" {
				t.Errorf("MarshalJSON (-want +got):\n%s", d)
			}
		})
	}
}

// A part that says nothing, or contradicts its kind, is refused with a
// reason; one of an unknown kind too.
func TestPartDecodeRefusals(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{`{}`, "no content"},
		{`{"metadata":{"a":1}}`, "no content"},
		{`{"data":null}`, "no content"},
		{`{"kind":"data"}`, "data part has no content"},
		{`{"kind":"data","data":null}`, "data part has no content"},
		{`{"kind":"file","file":{"mimeType":"text/plain"}}`, "file part has no content"},
		{`{"kind":"file"}`, "file part has no content"},
		{`{"kind":"image","text":"x"}`, `part kind "image"`},
		{`{"text":5}`, "cannot unmarshal"},
		{`[]`, "cannot unmarshal"},
	} {
		var p w.Part
		err := json.Unmarshal([]byte(tc.in), &p)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("part %s: %v; want an error with %q", tc.in, err, tc.err)
		}
	}
	// Each form of each kind is read, both versions' spellings.
	for in, want := range map[string]w.Part{
		`{"text":"a"}`:                            {Kind: "text", Text: "a"},
		`{"kind":"text"}`:                         {Kind: "text"},
		`{"data":{"x":1}}`:                        {Kind: "data", Data: json.RawMessage(`{"x":1}`)},
		`{"url":"u","mediaType":"m"}`:             {Kind: "file", URL: "u", MediaType: "m"},
		`{"raw":"AAE="}`:                          {Kind: "file", Raw: []byte{0, 1}},
		`{"kind":"file","file":{"uri":"u"}}`:      {Kind: "file", URL: "u"},
		`{"kind":"file","file":{"bytes":"AAE="}}`: {Kind: "file", Raw: []byte{0, 1}},
	} {
		var p w.Part
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Errorf("part %s: %v", in, err)
			continue
		}
		if d := cmp.Diff(want, p, sameJSON); d != "" {
			t.Errorf("part %s (-want +got):\n%s", in, d)
		}
	}
}

// Every state has its spelling in each version, and reads back from
// either spelling, from ProtoJSON's enum numbers and from the British
// "cancelled"; what is not a state of the spec is not Known.
func TestStateSpellings(t *testing.T) {
	for _, tc := range []struct {
		s                     w.State
		v10                   string
		num                   int
		terminal, interrupted bool
	}{
		{w.StateSubmitted, "TASK_STATE_SUBMITTED", 1, false, false},
		{w.StateWorking, "TASK_STATE_WORKING", 2, false, false},
		{w.StateCompleted, "TASK_STATE_COMPLETED", 3, true, false},
		{w.StateFailed, "TASK_STATE_FAILED", 4, true, false},
		{w.StateCanceled, "TASK_STATE_CANCELED", 5, true, false},
		{w.StateInputRequired, "TASK_STATE_INPUT_REQUIRED", 6, false, true},
		{w.StateRejected, "TASK_STATE_REJECTED", 7, true, false},
		{w.StateAuthRequired, "TASK_STATE_AUTH_REQUIRED", 8, false, true},
	} {
		task := &w.Task{ID: "t", ContextID: "c", Status: w.TaskStatus{State: tc.s}}
		for v, want := range map[w.Version]string{w.V10: tc.v10, w.V03: string(tc.s)} {
			got := encodeJSON(t, w.EncodeTask(v, task)).(map[string]any)["status"].(map[string]any)["state"]
			if got != want {
				t.Errorf("%s in %s: %v; want %s", tc.s, v, got, want)
			}
		}
		for _, in := range []string{`"` + tc.v10 + `"`, `"` + string(tc.s) + `"`, strings.ToUpper(`"` + string(tc.s) + `"`), `` + string(rune('0'+tc.num))} {
			var s w.State
			if err := json.Unmarshal([]byte(in), &s); err != nil || s != tc.s {
				t.Errorf("state %s: %q %v; want %s", in, s, err, tc.s)
			}
		}
		if !tc.s.Known() || tc.s.Terminal() != tc.terminal || tc.s.Interrupted() != tc.interrupted {
			t.Errorf("%s: known %v terminal %v interrupted %v", tc.s, tc.s.Known(), tc.s.Terminal(), tc.s.Interrupted())
		}
	}
	if got := w.ParseState("cancelled"); got != w.StateCanceled {
		t.Errorf(`ParseState("cancelled") = %q`, got)
	}
	for _, in := range []string{`0`, `9`, `-1`, `"TASK_STATE_UNSPECIFIED"`, `"UNRECOGNIZED"`, `"paused"`} {
		var s w.State
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Errorf("state %s: %v", in, err)
		}
		if s.Known() || s.Terminal() || s.Interrupted() {
			t.Errorf("state %s read as %q, which counts as a state", in, s)
		}
	}
	var s w.State
	if err := json.Unmarshal([]byte(`{"state":1}`), &s); err == nil {
		t.Error("an object read as a state")
	}
	// An unset state is unspecified in 1.0 and unknown in 0.3.
	for v, want := range map[w.Version]string{w.V10: "TASK_STATE_UNSPECIFIED", w.V03: "unknown"} {
		for _, st := range []w.State{"", w.StateUnknown} {
			got := encodeJSON(t, w.EncodeTask(v, &w.Task{ID: "t", Status: w.TaskStatus{State: st}})).(map[string]any)["status"].(map[string]any)["state"]
			if got != want {
				t.Errorf("state %q in %s: %v; want %s", st, v, got, want)
			}
		}
	}
}

// Roles: 1.0 writes ROLE_*, 0.3 the bare word, and both are read, as are
// ProtoJSON's numbers.
func TestRoleSpellings(t *testing.T) {
	for _, tc := range []struct {
		role     w.Role
		v10, v03 string
	}{
		{w.RoleUser, "ROLE_USER", "user"},
		{w.RoleAgent, "ROLE_AGENT", "agent"},
		{"", "ROLE_UNSPECIFIED", ""},
	} {
		m := &w.Message{MessageID: "m", Role: tc.role, Parts: []w.Part{w.TextPart("x")}}
		got10 := encodeJSON(t, w.EncodeEvent(w.V10, w.Event{Message: m})).(map[string]any)["message"].(map[string]any)
		got03 := encodeJSON(t, w.EncodeEvent(w.V03, w.Event{Message: m})).(map[string]any)
		if got10["role"] != tc.v10 || got03["role"] != tc.v03 || got03["kind"] != "message" || got10["kind"] != nil {
			t.Errorf("role %q: 1.0 %v, 0.3 %v kind %v", tc.role, got10["role"], got03["role"], got03["kind"])
		}
	}
	for in, want := range map[string]w.Role{`"ROLE_USER"`: w.RoleUser, `"user"`: w.RoleUser, `"ROLE_AGENT"`: w.RoleAgent,
		`"agent"`: w.RoleAgent, `1`: w.RoleUser, `2`: w.RoleAgent, `0`: "unspecified", `7`: "unrecognized"} {
		var r w.Role
		if err := json.Unmarshal([]byte(in), &r); err != nil || r != want {
			t.Errorf("role %s: %q %v; want %q", in, r, err, want)
		}
	}
	var r w.Role
	if err := json.Unmarshal([]byte(`["user"]`), &r); err == nil {
		t.Error("an array read as a role")
	}
}

// The event wrappers: 1.0 names the event by its field, 0.3 by kind, and
// only 0.3's status update has the final flag (false written out).
func TestEventWrappers(t *testing.T) {
	task := &w.Task{ID: "t", ContextID: "c", Status: w.TaskStatus{State: w.StateWorking}}
	for _, tc := range []struct {
		ev            w.Event
		key10, kind03 string
	}{
		{w.Event{Task: task}, "task", "task"},
		{w.Event{Message: &w.Message{MessageID: "m", Role: w.RoleAgent}}, "message", "message"},
		{w.Event{Status: &w.StatusUpdate{TaskID: "t", ContextID: "c", Status: w.TaskStatus{State: w.StateWorking}}}, "statusUpdate", "status-update"},
		{w.Event{Artifact: &w.ArtifactUpdate{TaskID: "t", ContextID: "c", Artifact: w.Artifact{ArtifactID: "a"}}}, "artifactUpdate", "artifact-update"},
	} {
		got10 := encodeJSON(t, w.EncodeEvent(w.V10, tc.ev)).(map[string]any)
		if len(got10) != 1 || got10[tc.key10] == nil {
			t.Errorf("1.0 %s: %v", tc.key10, got10)
		}
		if _, hasFinal := got10[tc.key10].(map[string]any)["final"]; hasFinal {
			t.Errorf("1.0 %s carries final", tc.key10)
		}
		got03 := encodeJSON(t, w.EncodeEvent(w.V03, tc.ev)).(map[string]any)
		if got03["kind"] != tc.kind03 {
			t.Errorf("0.3 %s: kind %v", tc.kind03, got03["kind"])
		}
		if final, ok := got03["final"]; tc.kind03 == "status-update" && (!ok || final != false) {
			t.Errorf("0.3 status update: final %v %v; want false written", final, ok)
		}
		// Parts are an array even when empty: both versions require it.
		if tc.kind03 == "message" && got03["parts"] == nil {
			t.Errorf("0.3 message without parts: %v", got03)
		}
	}
	if got := w.EncodeEvent(w.V03, w.Event{}); got != nil {
		t.Errorf("0.3 encoding of no event = %v", got)
	}
}

// DecodeEvent tells the shapes apart by their keys and refuses what is
// neither.
func TestDecodeEventShapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"t","contextId":"c","status":{"state":"working"}}`:                                "task working",
		`{"messageId":"m","role":"agent","parts":[{"text":"x"}]}`:                                "message agent x",
		`{"task":{"id":"t","status":{"state":"TASK_STATE_REJECTED"}}}`:                           "task rejected",
		`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"y"}]}}`:               "message agent y",
		`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`:          "status auth-required false",
		`{"artifactUpdate":{"taskId":"t","artifact":{"artifactId":"a","parts":[{"text":"z"}]}}}`: "artifact z",
		`{"kind":"status-update","taskId":"t","status":{"state":"completed"},"final":true}`:      "status completed true",
	} {
		ev, err := w.DecodeEvent([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := summary(ev); got != want {
			t.Errorf("%s read as %q; want %q", in, got, want)
		}
	}
	for in, errText := range map[string]string{
		`{}`:                                    "not an A2A event",
		`{"kind":"push"}`:                       `unknown event kind "push"`,
		`{"task":"t"}`:                          "cannot unmarshal",
		`{"kind":"task","status":{"state":{}}}`: "cannot unmarshal",
		`{"message":{"messageId":"m","parts":[{}]}}`: "no content",
		`not json`: "invalid character",
	} {
		if _, err := w.DecodeEvent([]byte(in)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("%s: %v; want an error with %q", in, err, errText)
		}
	}
}

// Text joins the text of parts: text as it is, data as its JSON, files by
// URL; empty parts and inline bytes add nothing.
func TestPartsText(t *testing.T) {
	m := &w.Message{Parts: []w.Part{
		w.TextPart("one"), w.TextPart(""), {Kind: "data", Data: json.RawMessage(`{"a":1}`)},
		{Kind: "file", URL: "https://h/f"}, {Kind: "file", Raw: []byte("bytes")}, {Text: "kindless"},
	}}
	if got, want := m.Text(), "one\n{\"a\":1}\nhttps://h/f\nkindless"; got != want {
		t.Errorf("Message.Text() = %q; want %q", got, want)
	}
	a := &w.Artifact{Parts: m.Parts[:1]}
	if got := a.Text(); got != "one" {
		t.Errorf("Artifact.Text() = %q", got)
	}
	var none *w.Message
	if none.Text() != "" {
		t.Error("a nil message has text")
	}
}

// Push configs: 1.0 flat with one scheme, 0.3 nested with a list of
// schemes; each decodes back from its own shape to the same config.
func TestPushConfigShapes(t *testing.T) {
	c := w.PushConfig{TaskID: "t1", ID: "p1", URL: "https://hook.example/a2a", Token: "tok", Auth: &w.PushAuth{Scheme: "Bearer", Credentials: "s3cret"}}
	want10 := `{"taskId":"t1","id":"p1","url":"https://hook.example/a2a","token":"tok","authentication":{"scheme":"Bearer","credentials":"s3cret"}}`
	want03 := `{"taskId":"t1","pushNotificationConfig":{"id":"p1","url":"https://hook.example/a2a","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"s3cret"}}}`
	for v, want := range map[w.Version]string{w.V10: want10, w.V03: want03} {
		b, _ := json.Marshal(w.EncodePushConfig(v, c))
		if d := cmp.Diff(literal(t, want), literal(t, string(b))); d != "" {
			t.Errorf("%s push config (-want +got):\n%s", v, d)
		}
		p, err := w.DecodePushParams(b)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if p.TaskID != "t1" || p.Config == nil {
			t.Fatalf("%s: read %+v", v, p)
		}
		if d := cmp.Diff(c, *p.Config); d != "" {
			t.Errorf("%s push config round trip (-want +got):\n%s", v, d)
		}
	}
	// Without authentication neither version writes the field.
	for _, v := range []w.Version{w.V10, w.V03} {
		b, _ := json.Marshal(w.EncodePushConfig(v, w.PushConfig{TaskID: "t", URL: "u"}))
		if strings.Contains(string(b), "authentication") {
			t.Errorf("%s: %s", v, b)
		}
	}
}

// The params of the push methods in each version's shape name the task
// and config the same way.
func TestDecodePushParams(t *testing.T) {
	for _, tc := range []struct {
		in, task, config, url string
	}{
		{`{"taskId":"t","id":"p"}`, "t", "p", ""},                             // 1.0 get/delete
		{`{"id":"t","pushNotificationConfigId":"p"}`, "t", "p", ""},           // 0.3 get/delete
		{`{"id":"t"}`, "t", "", ""},                                           // 0.3 list
		{`{"taskId":"t"}`, "t", "", ""},                                       // 1.0 list
		{`{"taskId":"t","url":"https://h"}`, "t", "", "https://h"},            // 1.0 create, flat
		{`{"taskId":"t","config":{"url":"https://h"}}`, "t", "", "https://h"}, // 1.0 create, nested
		{`{"taskId":"t","pushNotificationConfig":{"url":"https://h","authentication":{"scheme":"Basic"}}}`, "t", "", "https://h"},
	} {
		p, err := w.DecodePushParams([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		gotURL := ""
		if p.Config != nil {
			gotURL = p.Config.URL
			if p.Config.TaskID != tc.task {
				t.Errorf("%s: config of task %q", tc.in, p.Config.TaskID)
			}
		}
		if p.TaskID != tc.task || p.ConfigID != tc.config || gotURL != tc.url {
			t.Errorf("%s: %+v url %q; want task %q config %q url %q", tc.in, p, gotURL, tc.task, tc.config, tc.url)
		}
	}
	for in, errText := range map[string]string{
		`{}`:                  "taskId is required",
		`{"url":"https://h"}`: "taskId is required",
		`{"taskId":"t","pushNotificationConfig":{}}`: "url is required",
		`{"taskId":"t","config":{"url":5}}`:          "cannot unmarshal",
		`["t"]`:                                      "JSON object",
		`null`:                                       "JSON object",
	} {
		if _, err := w.DecodePushParams([]byte(in)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("%s: %v; want %q", in, err, errText)
		}
	}
}

// SendMessage params: blocking unless the client said otherwise in its
// version's words; the push config of either name; history bounds.
func TestDecodeSendParams(t *testing.T) {
	const m = `"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}`
	for _, tc := range []struct {
		in       string
		blocking bool
		history  int // -1: none given
		push     string
	}{
		{`{` + m + `}`, true, -1, ""},
		{`{` + m + `,"configuration":{}}`, true, -1, ""},
		{`{` + m + `,"configuration":{"returnImmediately":true}}`, false, -1, ""},
		{`{` + m + `,"configuration":{"blocking":false}}`, false, -1, ""},
		{`{` + m + `,"configuration":{"blocking":true,"historyLength":0}}`, true, 0, ""},
		{`{` + m + `,"configuration":{"historyLength":5,"taskPushNotificationConfig":{"url":"https://a"}}}`, true, 5, "https://a"},
		{`{` + m + `,"configuration":{"pushNotificationConfig":{"url":"https://b"}}}`, true, -1, "https://b"},
		{`{` + m + `,"configuration":{"pushNotificationConfig":null}}`, true, -1, ""},
	} {
		p, err := w.DecodeSendParams([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		h := -1
		if p.HistoryLength != nil {
			h = *p.HistoryLength
		}
		push := ""
		if p.Push != nil {
			push = p.Push.URL
		}
		if p.Blocking != tc.blocking || h != tc.history || push != tc.push || p.Message.Text() != "hi" {
			t.Errorf("%s: blocking %v history %d push %q; want %v %d %q", tc.in, p.Blocking, h, push, tc.blocking, tc.history, tc.push)
		}
	}
	for in, errText := range map[string]string{
		`{}`: "message is required",
		`[]`: "JSON object",
		``:   "JSON object",
		`{` + m + `,"configuration":{"historyLength":-2}}`:                       "historyLength",
		`{` + m + `,"configuration":{"pushNotificationConfig":{"token":"x"}}}`:   "url is required",
		`{"message":{"messageId":"m","role":"user","parts":[{"kind":"video"}]}}`: "video",
	} {
		if _, err := w.DecodeSendParams([]byte(in)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("%s: %v; want %q", in, err, errText)
		}
	}
}

func TestDecodeTaskAndListParams(t *testing.T) {
	p, err := w.DecodeTaskParams([]byte(` {"id":"t1","historyLength":2,"metadata":{"a":"b"}}`))
	if err != nil || p.ID != "t1" || *p.HistoryLength != 2 || p.Metadata["a"] != "b" {
		t.Errorf("task params: %+v %v", p, err)
	}
	for in, errText := range map[string]string{`{}`: "id is required", `{"id":"t","historyLength":-1}`: "historyLength", `"t"`: "JSON object", `{"id":7}`: "cannot unmarshal"} {
		if _, err := w.DecodeTaskParams([]byte(in)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("task params %s: %v; want %q", in, err, errText)
		}
	}

	for in, want := range map[string]w.ListParams{
		``:     {},
		`null`: {},
		`{"contextId":"c","status":"TASK_STATE_WORKING","pageSize":10,"pageToken":"p","includeArtifacts":true}`: {ContextID: "c", Status: w.StateWorking, PageSize: 10, PageToken: "p", IncludeArtifacts: true},
		// No filter: what the @a2a-js/sdk client sends when none is set.
		`{"status":"UNRECOGNIZED"}`:           {},
		`{"status":"TASK_STATE_UNSPECIFIED"}`: {},
		`{"status":0}`:                        {},
	} {
		p, err := w.DecodeListParams([]byte(in))
		if err != nil {
			t.Errorf("list params %s: %v", in, err)
			continue
		}
		if d := cmp.Diff(want, *p); d != "" {
			t.Errorf("list params %s (-want +got):\n%s", in, d)
		}
	}
	for in, errText := range map[string]string{`{"pageSize":-1}`: "pageSize", `{"historyLength":-1}`: "historyLength", `[1]`: "JSON object", `{"pageSize":"x"}`: "cannot unmarshal"} {
		if _, err := w.DecodeListParams([]byte(in)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("list params %s: %v; want %q", in, err, errText)
		}
	}
}

func TestValidID(t *testing.T) {
	for in, want := range map[string]bool{
		`1`: true, `-7`: true, `1.5`: true, `0`: true, `"abc"`: true, `""`: true, `null`: true, ` 3 `: true,
		``: false, `{}`: false, `[1]`: false, `true`: false, `"unterminated`: false, `nul`: false, `1x`: false, `-`: false,
	} {
		if got := w.ValidID(json.RawMessage(in)); got != want {
			t.Errorf("ValidID(%q) = %v; want %v", in, got, want)
		}
	}
}

// Each version's methods are its own: no 1.0 method is a 0.3 one, and
// every field of each set is filled.
func TestMethodSets(t *testing.T) {
	if w.MethodsOf(w.V10) != w.Methods10 || w.MethodsOf(w.V03) != w.Methods03 || w.MethodsOf("") != w.Methods03 {
		t.Fatal("MethodsOf picks the wrong set")
	}
	for _, set := range []struct {
		m     w.Methods
		other w.Methods
	}{{w.Methods10, w.Methods03}, {w.Methods03, w.Methods10}} {
		names := []string{set.m.Send, set.m.Stream, set.m.Get, set.m.List, set.m.Cancel, set.m.Subscribe,
			set.m.PushSet, set.m.PushGet, set.m.PushList, set.m.PushDelete, set.m.ExtendedCard}
		seen := map[string]bool{}
		for _, n := range names {
			if n == "" || seen[n] || !set.m.Has(n) || set.other.Has(n) {
				t.Errorf("method %q: empty, repeated, or in both versions", n)
			}
			seen[n] = true
		}
		if set.m.Has("") || set.m.Has("tasks/unknown") {
			t.Error("Has accepts a name that is no method")
		}
	}
}
