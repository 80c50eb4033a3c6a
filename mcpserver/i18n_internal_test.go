package mcpserver

import (
	"testing"

	"github.com/wunder/wunder/internal/i18n"
)

// Every key of this edge's error table, and those of its own errors, has a
// sentence in every language of the catalog.
func TestEveryMCPErrorInCatalog(t *testing.T) {
	keys := []string{"internal", "invalid_params"}
	for _, e := range errorTable {
		keys = append(keys, e.key)
	}
	for _, key := range keys {
		if !i18n.Has(key) {
			t.Errorf("key %q has no message in every language of internal/i18n's catalog", key)
		}
	}
}
