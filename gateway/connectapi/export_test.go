package connectapi

import "context"

// Test hooks.

// ToConnect exposes the error table.
func (a *API) ToConnect(err error) error { return a.toConnect(context.Background(), "/test", err) }

// DecodePage exposes the page-token decoder to the fuzzer; it returns the
// offset a token decodes to.
func DecodePage(size int32, token string) (int, int, error) {
	p, err := decodePage(size, token, "fuzz")
	return p.size, p.offset, err
}

// NextToken returns the token of the page after offset with size items.
func NextToken(size, offset int) string {
	p := page{size: size, offset: offset, filter: filterHash("fuzz")}
	_, next := cut(p, make([]int, size+1))
	return next
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
