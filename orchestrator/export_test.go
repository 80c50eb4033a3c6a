package orchestrator

import "time"

// FinalResponseToolForTest is the always-on final_response tool.
var FinalResponseToolForTest Tool = finalResponse{}

// SetConfigsClock replaces the clock of u's cache.
func SetConfigsClock(u *UserToolConfigs, now func() time.Time) { u.now = now }

// RenderMemoryForTest is the [Long-term Memory] block of records given
// newest first, within budget estimated tokens.
var RenderMemoryForTest = renderMemory
