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
