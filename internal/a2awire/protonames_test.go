package a2awire

import (
	"encoding/json"
	"testing"
)

func TestProtoNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"task_id":"t1","history_length":2}`, `{"historyLength":2,"taskId":"t1"}`},
		{`{"taskId":"camel","task_id":"snake"}`, `{"taskId":"camel"}`},
		{`{"task_id":"t","push_notification_config":{"url":"u","authentication":{"schemes":["Bearer"]}}}`,
			`{"pushNotificationConfig":{"authentication":{"schemes":["Bearer"]},"url":"u"},"taskId":"t"}`},
		// Free-form values keep their keys, under either spelling.
		{`{"message":{"message_id":"m","metadata":{"user_key":1},"parts":[{"data":{"a_b":1}},{"text":"x_y"}]}}`,
			`{"message":{"messageId":"m","metadata":{"user_key":1},"parts":[{"data":{"a_b":1}},{"text":"x_y"}]}}`},
		{`{"id":"a_b"}`, `{"id":"a_b"}`},
		{`{"page_size":12345678901234567890}`, `{"pageSize":12345678901234567890}`},
		// A key after a string value that holds an escaped quote, and
		// white space before the colon.
		{`{"a":"x\"_","task_id" : "t"}`, `{"a":"x\"_","taskId":"t"}`},
	} {
		got := ProtoNames(json.RawMessage(tc.in))
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal([]byte(tc.want), &w) != nil {
			t.Fatalf("ProtoNames(%s) = %s: not JSON", tc.in, got)
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("ProtoNames(%s)\n got %s\nwant %s", tc.in, gb, wb)
		}
	}
	for _, same := range []string{`{"taskId":"x"}`, `[1,"a_b"]`, `"a_b"`, `{"a_b":`, ``,
		// '_' only in values, escaped quotes and colons in strings: no key to rename.
		`{"message":{"messageId":"m","parts":[{"text":"x_y"}],"role":"ROLE_USER"}}`,
		`{"id":"a_b\":","x":"\"c_d\":1"}`, `{"id" : "a_b"  }`} {
		if got := string(ProtoNames(json.RawMessage(same))); got != same {
			t.Errorf("ProtoNames(%q) = %q; want it unchanged", same, got)
		}
	}
}

// FuzzProtoNamesSkip checks the shortcut: params ProtoNames returns
// without decoding (no key holds a '_') are params whose decoding would
// rename nothing.
func FuzzProtoNamesSkip(f *testing.F) {
	for _, s := range []string{
		`{"message":{"messageId":"m","parts":[{"text":"x_y"}],"role":"ROLE_USER"}}`,
		`{"task_id":"t"}`, `{"a":"x\"_","task_id" : "t"}`, `{"id":"a_b\":","x":"\"c_d\":1"}`,
		`{"metadata":{"user_key":1}}`, `{"a":{"b_c":[{"d_e":1}]}}`, `["a_b"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil || snakeKey(b) {
			return
		}
		before, _ := json.Marshal(v)
		after, _ := json.Marshal(camelKeys(v))
		if string(before) != string(after) {
			t.Fatalf("snakeKey(%s) = false, but its keys are renamed: %s", b, after)
		}
	})
}

func TestSameField(t *testing.T) {
	for _, tc := range []struct{ in, a, b string }{
		{`{"id":"x","ID":"y"}`, "id", "ID"},
		{`{"id":"x","id":"y"}`, "id", "id"},
		{`{"message":{"taskId":"x","task_id":"y"}}`, "taskId", "task_id"},
		{`{"message":{"taskId":"x","ta\u017fkId":"y"}}`, "taskId", "taſkId"},
		{`{"message":{"contextId":"x","CONTEXT_ID":"y"}}`, "contextId", "CONTEXT_ID"},
		{`{"configuration":{"pushNotificationConfig":{"url":"a"}},"configuration":{}}`, "configuration", "configuration"},
		{`{"message":{"parts":[{"text":"a"},{"text":"b","Text":"c"}]}}`, "text", "Text"},
		{`{"metadata":{"a":1},"Metadata":{}}`, "metadata", "Metadata"},
		{`[{"a":1,"A":2}]`, "a", "A"},
	} {
		a, b, found := SameField([]byte(tc.in))
		if !found || a != tc.a || b != tc.b {
			t.Errorf("SameField(%s) = %q, %q, %v; want %q and %q", tc.in, a, b, found, tc.a, tc.b)
		}
	}
	for _, none := range []string{
		`{"id":"x","historyLength":1}`, `{"message":{"taskId":"x","contextId":"y","referenceTaskIds":["a","a"]}}`,
		// Free-form values are the caller's, in any spelling of their field.
		`{"message":{"metadata":{"k":1,"K":2},"parts":[{"data":{"id":1,"ID":2}},{"DATA":{"a":1,"a":2}}]},"Metadata":null}`,
		`{"a":{"x":1},"b":{"x":1}}`, `[1,2,{"x":1}]`, `"a"`, ``, `{"id":`, `{"a":1e999}`,
	} {
		if a, b, found := SameField([]byte(none)); found {
			t.Errorf("SameField(%s) = %q, %q; want none", none, a, b)
		}
	}
}

// FuzzSameField checks that params SameField passes read the same to
// wunder and to a peer that reads keys exactly: the task a GetTask or a
// message names, as encoding/json (after ProtoNames) reads it, is the one
// under its exact key, when that key is there.
func FuzzSameField(f *testing.F) {
	for _, s := range []string{`{"id":"x","ID":"y"}`, `{"Id":"x"}`, `{"message":{"taskId":"x","task_id":"y"}}`,
		`{"message":{"taskId":"x","ta\u017fkId":"y"}}`, `{"message":{"taskId":"x"},"Message":{"taskId":"y"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		if _, _, found := SameField(b); found {
			return
		}
		var ours struct {
			ID      string `json:"id"`
			Message *struct {
				TaskID string `json:"taskId"`
			} `json:"message"`
		}
		if json.Unmarshal(ProtoNames(b), &ours) != nil {
			return
		}
		var theirs map[string]json.RawMessage
		if json.Unmarshal(b, &theirs) != nil {
			return
		}
		var id string
		if raw, ok := theirs["id"]; ok && json.Unmarshal(raw, &id) == nil && id != ours.ID {
			t.Fatalf("%s: wunder reads id %q, an exact reader %q", b, ours.ID, id)
		}
		var msg map[string]json.RawMessage
		if raw, ok := theirs["message"]; ok && json.Unmarshal(raw, &msg) == nil && ours.Message != nil {
			var task string
			if raw, ok := msg["taskId"]; ok && json.Unmarshal(raw, &task) == nil && task != ours.Message.TaskID {
				t.Fatalf("%s: wunder reads taskId %q, an exact reader %q", b, ours.Message.TaskID, task)
			}
		}
	})
}
