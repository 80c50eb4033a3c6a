package a2awire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// The table's rows on each binding's wire, both ways: [Kind.New] builds
// the JSON-RPC error of a row (whose data are the details of the other
// bindings), [Error.Status] is its HTTP+JSON body, and [Error.Kind],
// [FromHTTP] and [FromGRPC] read a row back from what a peer sent.

const (
	errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"
	retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"
)

// Error is a JSON-RPC error object, and what every binding's decoder
// returns. It unwraps to the sentinels of its row of the table, so
// callers write errors.Is(err, orchestrator.ErrNotFound) or
// errors.Is(err, a2awire.ErrTaskNotCancelable) whatever the binding.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// kind is the row the error was built from, or decoded as from an
	// HTTP status or gRPC code; nil: Code and Data say it.
	kind *Kind
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

// Kind returns the error's row: the one of its code and, where several
// rows share the code (-32000), of the ErrorInfo reason in its data; the
// internal error's for a code the table does not have.
func (e *Error) Kind() *Kind {
	if e.kind != nil {
		return e.kind
	}
	if k := byCode(e.Code, infoOf(e.Data).reason); k != nil {
		return k
	}
	return internal
}

// Unwrap gives the row's sentinel, with the retry delay the error carries
// (orchestrator.RetryAfter reads it), and the row's core sentinel.
func (e *Error) Unwrap() []error {
	k := e.Kind()
	err := k.Err
	if after, ok := RetryDelay(e); ok {
		err = orchestrator.WithRetryAfter(fmt.Errorf("%w: %s", err, e.Message), after)
	}
	if k.core() == k.Err {
		return []error{err}
	}
	return []error{err, k.core()}
}

// New builds the JSON-RPC error of row k for version v. Its data: in 1.0
// an ErrorInfo; for domain wunder, in both versions, the ErrorInfo and,
// for the kinds that carry one, a RetryInfo of after (at least a second;
// also in the ErrorInfo's metadata as retry_after_ms).
func (k *Kind) New(v Version, msg string, after time.Duration) *Error {
	e := &Error{Code: k.Code, Message: msg, kind: k}
	info := map[string]any{"@type": errorInfoType, "reason": k.Reason, "domain": k.Domain}
	details := []map[string]any{info}
	switch {
	case k.Domain == DomainWunder && k.Retry:
		after = max(after, time.Second)
		info["metadata"] = map[string]string{"retry_after_ms": strconv.FormatInt(after.Milliseconds(), 10)}
		details = append(details, map[string]any{"@type": retryInfoType, "retryDelay": retryDelay(after)})
	case k.Domain == DomainWunder, v == V10:
	default:
		return e
	}
	e.Data, _ = json.Marshal(details)
	return e
}

func retryDelay(after time.Duration) string {
	return strconv.FormatFloat(after.Seconds(), 'f', -1, 64) + "s"
}

// NewError builds the error of the row of code (the first, see the table)
// for version v; an unknown code is an internal error.
func NewError(v Version, code int, msg string) *Error {
	k := byCode(code, "")
	if k == nil {
		k = internal
	}
	return k.New(v, msg, 0)
}

// NewRetryError builds the -32000 error of a reason of domain wunder
// (ReasonBusy, ReasonUnavailable, ReasonRateLimited) with its retry delay.
func NewRetryError(reason, msg string, after time.Duration) *Error {
	k := byReason(reason, DomainWunder, func(*Kind) bool { return true })
	if k == nil {
		k = byCode(CodeServerError, ReasonUnavailable)
	}
	return k.New(V10, msg, after)
}

// info is what an error's data or details say: the ErrorInfo's reason
// and domain, the RetryInfo's delay.
type info struct {
	reason, domain string
	after          time.Duration
}

func infoOf(data json.RawMessage) info {
	var details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`
		Domain     string `json:"domain"`
		RetryDelay string `json:"retryDelay"`
	}
	var in info
	if len(data) == 0 || json.Unmarshal(data, &details) != nil {
		return in
	}
	for _, d := range details {
		switch d.Type {
		case errorInfoType:
			in.reason, in.domain = d.Reason, d.Domain
		case retryInfoType:
			in.after, _ = time.ParseDuration(d.RetryDelay)
		}
	}
	return in
}

// RetryDelay reports the retry delay an error's data carries (a
// google.rpc.RetryInfo).
func RetryDelay(e *Error) (time.Duration, bool) {
	after := infoOf(e.Data).after
	return after, after > 0
}

// Status is the body of an error of A2A's HTTP+JSON binding: a
// google.rpc.Status under "error" (AIP-193), whose details are the
// ErrorInfo (and RetryInfo) a JSON-RPC error carries as data.
type Status struct {
	Error StatusError `json:"error"`
}

// StatusError is a Status's inner object.
type StatusError struct {
	Code    int             `json:"code"`
	Status  string          `json:"status"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}

// Status is e as the HTTP+JSON binding's body: the HTTP status and gRPC
// code name of its row, its data as details.
func (e *Error) Status() Status {
	k := e.Kind()
	return Status{Error: StatusError{Code: k.HTTP, Status: k.GRPC.String(), Message: e.Message, Details: e.Data}}
}

// FromHTTP reads an error answer of the HTTP+JSON binding (or of anything
// in front of a binding: a gateway, a proxy): the row of the ErrorInfo
// reason of its google.rpc.Status when that row has the answer's HTTP
// status, else of the Status's code name, else of the HTTP status; an
// unknown 5xx is unavailable, an unknown 4xx an invalid request. A
// Retry-After header stands for a missing RetryInfo. It reads (up to
// 64 KiB of) the body; the caller closes it.
func FromHTTP(resp *http.Response) *Error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return fromHTTP(resp.StatusCode, resp.Header, b)
}

func fromHTTP(status int, h http.Header, body []byte) *Error {
	var st Status
	_ = json.Unmarshal(body, &st)
	in := infoOf(st.Error.Details)
	k := byReason(in.reason, in.domain, func(k *Kind) bool { return k.HTTP == status || k.HTTPWas == status })
	if k == nil && st.Error.Status != "" {
		k = first(func(k *Kind) bool { return k.GRPC.String() == st.Error.Status })
	}
	if k == nil {
		k = first(func(k *Kind) bool { return k.HTTP == status })
	}
	if k == nil && status >= 500 {
		k = byCode(CodeServerError, ReasonUnavailable)
	}
	if k == nil {
		k = byCode(CodeInvalidRequest, "")
	}
	msg := st.Error.Message
	if msg == "" {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 512 {
			msg = msg[:512]
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{Code: k.Code, Message: msg, Data: st.Error.Details, kind: k}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err == nil && secs > 0 && k.Retry && in.after == 0 {
		e.Data = withRetry(e.Data, time.Duration(secs)*time.Second)
	}
	return e
}

// withRetry appends a RetryInfo of after to details.
func withRetry(details json.RawMessage, after time.Duration) json.RawMessage {
	var list []json.RawMessage
	_ = json.Unmarshal(details, &list)
	ri, _ := json.Marshal(map[string]any{"@type": retryInfoType, "retryDelay": retryDelay(after)})
	out, _ := json.Marshal(append(list, ri))
	return out
}

// FromGRPC reads an error of the gRPC binding: its status code, message
// and details (as JSON: each an Any with its "@type", as ProtoJSON writes
// it). The row is the ErrorInfo reason's when that row has the code, else
// the code's; an unknown code is an internal error.
func FromGRPC(code int, msg string, details json.RawMessage) *Error {
	c := GRPCCode(code)
	in := infoOf(details)
	k := byReason(in.reason, in.domain, func(k *Kind) bool { return k.GRPC == c || k.GRPCWas != 0 && k.GRPCWas == c })
	if k == nil {
		k = first(func(k *Kind) bool { return k.GRPC == c })
	}
	if k == nil {
		k = internal
	}
	return &Error{Code: k.Code, Message: msg, Data: details, kind: k}
}

// kindError is an error the client raises itself as one of the table's
// kinds (a peer's answer it cannot read): it wraps the row's sentinels.
type kindError struct{ k *Kind }

func (e kindError) Error() string   { return e.k.Err.Error() }
func (e kindError) Unwrap() []error { return []error{e.k.Err, e.k.core()} }

// errorf is fmt.Errorf("<kind>: "+format) wrapping err's row's sentinels.
func errorf(sentinel error, format string, args ...any) error {
	k, _ := KindOf(sentinel)
	return fmt.Errorf("%w: "+format, append([]any{kindError{k}}, args...)...)
}
