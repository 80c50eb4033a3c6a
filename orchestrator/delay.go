package orchestrator

import "time"

// Delay is an optional wait among the orchestrator's options: its zero
// value takes the option's documented default, [NoDelay] waits not at
// all, and [DelayOf] waits as long as it says. It replaces a negative
// duration as the sign of "none".
type Delay struct {
	d   time.Duration
	set bool
}

// NoDelay does not wait.
var NoDelay = Delay{set: true}

// DelayOf waits d (DelayOf(0), or a negative d, is NoDelay).
func DelayOf(d time.Duration) Delay { return Delay{d: max(d, 0), set: true} }

// Or is the wait: d's when it is set, else def.
func (d Delay) Or(def time.Duration) time.Duration {
	if d.set {
		return d.d
	}
	return def
}

// withDefault is d, or def when d is unset.
func (d Delay) withDefault(def time.Duration) Delay { return DelayOf(d.Or(def)) }
