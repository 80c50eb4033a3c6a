package toolconfig

import "time"

// SetClockForTest replaces the clock of c's cache.
func SetClockForTest(c *Configs, now func() time.Time) { c.now = now }
