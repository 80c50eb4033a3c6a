package orchestrator_test

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// A Delay's zero value takes the default; NoDelay and DelayOf(0) wait not
// at all, whatever the default; a negative DelayOf is none too.
func TestDelay(t *testing.T) {
	const def = 20 * time.Millisecond
	for _, c := range []struct {
		name string
		d    orchestrator.Delay
		want time.Duration
	}{
		{"unset", orchestrator.Delay{}, def},
		{"none", orchestrator.NoDelay, 0},
		{"zero", orchestrator.DelayOf(0), 0},
		{"negative", orchestrator.DelayOf(-time.Second), 0},
		{"set", orchestrator.DelayOf(time.Second), time.Second},
	} {
		if got := c.d.Or(def); got != c.want {
			t.Errorf("%s: Or = %v, want %v", c.name, got, c.want)
		}
	}
}
