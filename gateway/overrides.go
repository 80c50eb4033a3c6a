package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// config_overrides of POST /wunder: per-request model settings, limited to
// the ones Options.RequestOverrides (llm.request_overrides) allows.
//
//	{"temperature": 0.2, "max_rounds": 3, "tool_call_mode": "function_call", "max_output": 1024}

// OverrideKeys are the settings a request may override, all of them.
var OverrideKeys = []string{"temperature", "max_rounds", "tool_call_mode", "max_output"}

// applyOverrides validates overrides against allowed and sets them on req.
// Errors wrap orchestrator.ErrInvalidArgument and name the key.
func applyOverrides(req *orchestrator.RunRequest, overrides map[string]json.RawMessage, allowed []string) error {
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		raw := overrides[k]
		if !slices.Contains(OverrideKeys, k) {
			return fmt.Errorf("%w: config_overrides.%s is not a setting a request can override (%s)",
				orchestrator.ErrInvalidArgument, k, strings.Join(OverrideKeys, ", "))
		}
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%w: config_overrides.%s is not allowed here (llm.request_overrides allows: %s)",
				orchestrator.ErrInvalidArgument, k, strings.Join(allowed, ", "))
		}
		bad := func(want string) error {
			return fmt.Errorf("%w: config_overrides.%s must be %s, got %s", orchestrator.ErrInvalidArgument, k, want, raw)
		}
		switch k {
		case "temperature":
			var t float64
			if json.Unmarshal(raw, &t) != nil || math.IsNaN(t) || t < 0 || t > 2 {
				return bad("a number from 0 to 2")
			}
			req.Temperature = &t
		case "max_rounds", "max_output":
			var n int
			if json.Unmarshal(raw, &n) != nil || n < 1 {
				return bad("a whole number >= 1")
			}
			if k == "max_rounds" {
				req.MaxRounds = n
			} else {
				req.MaxOutput = n
			}
		case "tool_call_mode":
			var m string
			if json.Unmarshal(raw, &m) != nil || (m != orchestrator.ModeToolCall && m != orchestrator.ModeFunctionCall) {
				return bad(`"tool_call" or "function_call"`)
			}
			req.ToolCallMode = m
		}
	}
	return nil
}
