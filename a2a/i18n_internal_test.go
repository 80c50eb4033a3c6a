package a2a

import (
	"strings"
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/i18n"
)

// Every message key this edge can use has a sentence in every language:
// for every row of the error table, its reason (what newError and a
// codeError use), its sentinel's text and its fixed message (toError).
func TestEveryA2AErrorInCatalog(t *testing.T) {
	keys := map[string]string{}
	for _, k := range w.Kinds() {
		keys[strings.ToLower(k.Reason)] = "reason " + k.Reason
		keys[messageKey(k.Err.Error())] = "sentinel " + k.Err.Error()
		if k.Message != "" {
			keys[messageKey(k.Message)] = "message " + k.Message
		}
	}
	if len(keys) < 15 {
		t.Fatalf("only %d keys; the table was not read", len(keys))
	}
	for key, where := range keys {
		if !i18n.Has(key) {
			t.Errorf("key %q (%s) has no message in every language of internal/i18n's catalog", key, where)
		}
	}
}
