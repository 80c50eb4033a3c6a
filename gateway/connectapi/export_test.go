package connectapi

import (
	"context"

	"github.com/wunder/wunder/orchestrator"
)

// Test hooks.

// ToConnect exposes the error table.
func (a *API) ToConnect(err error) error { return a.toConnect(context.Background(), "/test", err) }

// PageOf exposes the reading of page_size and page_token; it returns the
// page size and the page as the core is asked for it.
func PageOf(size int32, token string, filter ...any) (int, orchestrator.Page, error) {
	p, err := pageOf(size, token, "runs", filter...)
	return p.Size, p.Page, err
}

// Object exposes the JSON -> Struct conversion.
var Object = object

// Services lists the services health and reflection know.
var Services = services

// Reasons lists the error table's ErrorInfo reasons.
func Reasons() []string {
	var out []string
	for _, e := range errorTable {
		out = append(out, e.reason)
	}
	return out
}

// RunStateOf exposes the run state map.
func RunStateOf(s orchestrator.RunState) (int32, bool) {
	v, ok := runStates[s]
	return int32(v), ok
}
