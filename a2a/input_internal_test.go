package a2a

import "testing"

func TestTextDecision(t *testing.T) {
	for _, tc := range []struct {
		text, decision, reason string
	}{
		{"approve", "approve", ""},
		{"  Yes, go ahead", "approve", "go ahead"},
		{"y", "approve", ""},
		{"OK.", "approve", ""},
		{"同意", "approve", ""},
		{"reject: not on a Friday", "reject", "not on a Friday"},
		{"No - too risky", "reject", "too risky"},
		{"拒绝，太危险", "reject", "太危险"},
		{"cancel", "cancel", ""},
		{"取消", "cancel", ""},
		{"nope", "", ""},
		{"yesterday", "", ""},
		{"notably", "", ""},
		{"maybe", "", ""},
		{"", "", ""},
	} {
		r, ok := textDecision(tc.text)
		if ok != (tc.decision != "") || r.Decision != tc.decision || r.Reason != tc.reason {
			t.Errorf("textDecision(%q) = %+v, %v; want %q %q", tc.text, r, ok, tc.decision, tc.reason)
		}
	}
}
