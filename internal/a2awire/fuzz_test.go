package a2awire_test

import (
	"encoding/json"
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
)

// FuzzDecode feeds untrusted bytes to every decoder: none may panic, and
// an event that decodes must survive a round trip through both versions.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`,
		`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"}]}]}}`,
		`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_FAILED","message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":{"a":1}}]}}}}`,
		`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"file","file":{"uri":"http://x"}}]}}`,
		`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":false,"pushNotificationConfig":{"url":"http://h"}}}`,
		`{"taskId":"t","pushNotificationConfig":{"url":"http://h","authentication":{"schemes":["Bearer"]}}}`,
		`{"id":"t","historyLength":3}`, `{"historyLength":-1}`,
		`{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]},"configuration":{"historyLength":-1}}`, `[]`, `null`, `{"kind":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// A decoded historyLength is never negative: the handler slices
		// history with it.
		if p, err := w.DecodeSendParams(b); err == nil && p.HistoryLength != nil && *p.HistoryLength < 0 {
			t.Fatalf("DecodeSendParams accepted historyLength %d", *p.HistoryLength)
		}
		if p, err := w.DecodeTaskParams(b); err == nil && p.HistoryLength != nil && *p.HistoryLength < 0 {
			t.Fatalf("DecodeTaskParams accepted historyLength %d", *p.HistoryLength)
		}
		if p, err := w.DecodeListParams(b); err == nil && p.HistoryLength != nil && *p.HistoryLength < 0 {
			t.Fatalf("DecodeListParams accepted historyLength %d", *p.HistoryLength)
		}
		_, _ = w.DecodePushParams(b)
		_, _ = w.ParseCard(b)
		ev, err := w.DecodeEvent(b)
		if err != nil {
			return
		}
		for _, v := range []w.Version{w.V10, w.V03} {
			out, err := json.Marshal(w.EncodeEvent(v, ev))
			if err != nil {
				t.Fatalf("encode %s: %v", v, err)
			}
			if _, err := w.DecodeEvent(out); err != nil {
				t.Fatalf("round trip %s of %s: %v (%s)", v, b, err, out)
			}
		}
	})
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]w.Version{"": w.V03, "0.3": w.V03, "0.3.0": w.V03, "1.0": w.V10, "1": w.V10, "v1.0": w.V10, "1.0.1": w.V10} {
		if got, ok := w.ParseVersion(in); !ok || got != want {
			t.Errorf("ParseVersion(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"2.0", "0.2", "x"} {
		if _, ok := w.ParseVersion(in); ok {
			t.Errorf("ParseVersion(%q) accepted", in)
		}
	}
}
