package connectapi

import (
	"context"
	"encoding/base64"
	"strconv"

	"github.com/wunder/wunder/orchestrator"
)

// Test hooks.

// ToConnect exposes the error table.
func (a *API) ToConnect(err error) error { return a.toConnect(context.Background(), "/test", err) }

// DecodePage exposes the page-token decoder to the fuzzer; it returns the
// page size and the page as the core is asked for it.
func DecodePage(size int32, token string, filter ...any) (int, orchestrator.Page, error) {
	p, err := decodePage(size, token, append([]any{"fuzz"}, filter...)...)
	return p.size, p.query(), err
}

// NextToken returns the token of the page after a page of size sessions
// whose last is last.
func NextToken(size int, last *orchestrator.Session) string {
	p := page{size: size, filter: filterHash("fuzz")}
	items := make([]*orchestrator.Session, size+1)
	items[size-1] = last
	_, next := cut(p, items, orchestrator.SessionKey)
	return next
}

// OffsetToken is a token of the earlier form (v1), for the page at offset.
func OffsetToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("v1." + strconv.Itoa(offset) + "." + filterHash("fuzz")))
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
