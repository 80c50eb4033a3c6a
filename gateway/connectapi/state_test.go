package connectapi_test

import (
	"testing"

	"github.com/wunder/wunder/gateway/connectapi"
	"github.com/wunder/wunder/orchestrator"
)

// TestEveryRunStateHasAnEnum: every state of the lifecycle has its own
// RunState value; none falls to UNSPECIFIED, and no two share one.
func TestEveryRunStateHasAnEnum(t *testing.T) {
	seen := map[int32]orchestrator.RunState{}
	for _, s := range orchestrator.States() {
		v, ok := connectapi.RunStateOf(s)
		if !ok || v == 0 {
			t.Errorf("run state %s has no RunState value", s)
			continue
		}
		if other, dup := seen[v]; dup {
			t.Errorf("run states %s and %s share RunState %d", s, other, v)
		}
		seen[v] = s
	}
}
