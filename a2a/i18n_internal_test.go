package a2a

import (
	"strings"
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/i18n"
)

// Every message key this edge can use has a sentence in every language:
// the reason of every A2A code, the reason of every retryable error and
// every key of errorTable.
func TestEveryA2AErrorInCatalog(t *testing.T) {
	keys := map[string]string{}
	for _, reason := range w.Reasons() {
		keys[strings.ToLower(reason)] = "code " + reason
	}
	for _, rt := range retryTable {
		keys[strings.ToLower(rt.reason)] = "retryTable"
	}
	keys[strings.ToLower(w.ReasonRateLimited)] = "the gateway's rate limit"
	for _, row := range errorTable {
		keys[row.key] = "errorTable " + row.sentinel.Error()
	}
	if len(keys) < 15 {
		t.Fatalf("only %d keys; the tables were not read", len(keys))
	}
	for key, where := range keys {
		if !i18n.Has(key) {
			t.Errorf("key %q (%s) has no message in every language of internal/i18n's catalog", key, where)
		}
	}
}
