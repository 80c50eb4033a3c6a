package a2awire

import (
	"errors"
	"slices"

	"github.com/wunder/wunder/orchestrator"
)

// THE error table of A2A: one row per kind of error, with its JSON-RPC
// code, its google.rpc.ErrorInfo reason, its HTTP status (the HTTP+JSON
// binding) and its gRPC code. The server maps an error to its row by the
// row's sentinel ([KindOf]); every decoder of the client side (JSON-RPC
// [Error.Unwrap], HTTP [FromHTTP], gRPC [FromGRPC]) maps what it reads back
// to the same row, so errors.Is(err, sentinel) holds on both sides. The
// table in docs/a2a.md is generated from it (errors_doc_test.go).
//
// The rows follow A2A 1.0 section 5.4 (codes, gRPC and HTTP statuses) and
// section 9.5 / 10.6 / 11.6 (ErrorInfo reasons in domain a2a-protocol.org).
// The spec names no JSON-RPC code for authentication and authorization
// ("JSON-RPC custom error"): those use a2a-go's -31401 and -31403 and its
// reasons. What A2A does not name at all (busy, unavailable, cancelled) is
// the implementation-defined server error -32000 with an ErrorInfo of
// domain wunder whose reason says which.

// JSON-RPC 2.0 and A2A error codes (A2A 0.3 section 8, 1.0 section 5.4),
// and the codes wunder uses where A2A names none.
const (
	CodeParseError                = -32700
	CodeInvalidRequest            = -32600
	CodeMethodNotFound            = -32601
	CodeInvalidParams             = -32602
	CodeInternal                  = -32603
	CodeServerError               = -32000
	CodeTaskNotFound              = -32001
	CodeTaskNotCancelable         = -32002
	CodePushNotSupported          = -32003
	CodeUnsupportedOperation      = -32004
	CodeContentTypeNotSupported   = -32005
	CodeInvalidAgentResponse      = -32006
	CodeExtendedCardNotConfigured = -32007
	CodeExtensionSupportRequired  = -32008
	CodeVersionNotSupported       = -32009
	CodeUnauthenticated           = -31401 // a2a-go's; the spec names none
	CodePermissionDenied          = -31403 // a2a-go's; the spec names none
)

// ErrorInfo domains: A2A's own reasons, and wunder's for -32000.
const (
	DomainA2A    = "a2a-protocol.org"
	DomainWunder = "wunder"
)

// The reasons of wunder's -32000 errors (domain wunder).
const (
	ReasonBusy        = "BUSY"
	ReasonUnavailable = "UNAVAILABLE"
	ReasonRateLimited = "RATE_LIMITED"
	ReasonCanceled    = "CANCELED"
)

// The A2A protocol's own errors, for the kinds the core has no sentinel
// of: a client tells them apart with errors.Is, and each also reads as
// its row's core sentinel ([Kind.Core]), so callers that speak only the
// core's vocabulary see what they did before.
var (
	ErrParse                     = errors.New("parse error")
	ErrInvalidRequest            = errors.New("invalid request")
	ErrMethodNotFound            = errors.New("method not found")
	ErrInternal                  = errors.New("internal error")
	ErrTaskNotCancelable         = errors.New("task not cancelable")
	ErrPushNotSupported          = errors.New("push notification not supported")
	ErrUnsupportedOperation      = errors.New("unsupported operation")
	ErrContentTypeNotSupported   = errors.New("content type not supported")
	ErrInvalidAgentResponse      = errors.New("invalid agent response")
	ErrExtendedCardNotConfigured = errors.New("extended agent card not configured")
	ErrExtensionSupportRequired  = errors.New("extension support required")
	ErrVersionNotSupported       = errors.New("version not supported")
)

// GRPCCode is a google.rpc.Code, the status of the gRPC binding (connect-go's
// codes have the same numbers); its String is the name the HTTP+JSON
// binding's google.rpc.Status carries as "status".
type GRPCCode int

// The gRPC codes of the table.
const (
	GRPCCanceled           GRPCCode = 1
	GRPCInvalidArgument    GRPCCode = 3
	GRPCNotFound           GRPCCode = 5
	GRPCPermissionDenied   GRPCCode = 7
	GRPCResourceExhausted  GRPCCode = 8
	GRPCFailedPrecondition GRPCCode = 9
	GRPCUnimplemented      GRPCCode = 12
	GRPCInternal           GRPCCode = 13
	GRPCUnavailable        GRPCCode = 14
	GRPCUnauthenticated    GRPCCode = 16
)

var grpcNames = map[GRPCCode]string{
	GRPCCanceled: "CANCELLED", GRPCInvalidArgument: "INVALID_ARGUMENT", GRPCNotFound: "NOT_FOUND",
	GRPCPermissionDenied: "PERMISSION_DENIED", GRPCResourceExhausted: "RESOURCE_EXHAUSTED",
	GRPCFailedPrecondition: "FAILED_PRECONDITION", GRPCUnimplemented: "UNIMPLEMENTED", GRPCInternal: "INTERNAL",
	GRPCUnavailable: "UNAVAILABLE", GRPCUnauthenticated: "UNAUTHENTICATED",
}

func (c GRPCCode) String() string {
	if n, ok := grpcNames[c]; ok {
		return n
	}
	return "UNKNOWN"
}

// Kind is one row of the table.
type Kind struct {
	// Err is the sentinel: the server sends the row for an error that
	// wraps it; the client's error wraps it.
	Err error
	// Core is the core sentinel the client's error wraps too; nil when
	// Err is one.
	Core error
	// Code is the JSON-RPC error code.
	Code int
	// Reason and Domain are the google.rpc.ErrorInfo the error carries:
	// in JSON-RPC 1.0's data and the other bindings' details always, in
	// 0.3's data only for domain wunder (A2A's own codes say enough).
	Reason, Domain string
	// HTTP is the status of the HTTP+JSON binding (the specification's
	// table, section 5.4).
	HTTP int
	// HTTPWas, when set, is the status this row was sent with before
	// wunder followed that table (a2a-go v2.4.0's servers still send it):
	// a client reads it as the row when the ErrorInfo reason names it.
	HTTPWas int
	// GRPC is the code of the gRPC binding.
	GRPC GRPCCode
	// GRPCWas, when set, is the code this row was sent with before wunder
	// followed section 5.4 (a2a-go v2.4.0's servers still send it): a
	// client reads it as the row when the ErrorInfo reason names it.
	GRPCWas GRPCCode
	// Message, when set, is what the server says instead of the error's
	// own text, which would tell a caller more than it should (whether a
	// task it may not see exists, which credential check failed).
	Message string
	// Retry marks the kinds that carry a google.rpc.RetryInfo (and, over
	// HTTP, Retry-After).
	Retry bool
	// Transport marks the kinds a proxy or the gateway's middleware answers
	// with its HTTP status in front of any binding; the JSON-RPC client
	// reads them from a non-2xx status too.
	Transport bool
	// Doc says when wunder answers it (docs/a2a.md's table).
	Doc string
}

// core is the core sentinel of the row.
func (k *Kind) core() error {
	if k.Core != nil {
		return k.Core
	}
	return k.Err
}

// kinds is the table. Order matters: the server takes the first row whose
// Err an error wraps; a decoder takes the first row of a code (then of a
// reason), of an HTTP status, of a gRPC code. The last rows are aliases:
// other sentinels the server sends in the same shape as a row above, which
// clients read as that row.
var kinds = []Kind{
	{Err: orchestrator.ErrInvalidArgument, Code: CodeInvalidParams, Reason: "INVALID_PARAMS", Domain: DomainA2A, HTTP: 400, GRPC: GRPCInvalidArgument,
		Doc: "params not an object, a missing field, an invalid part, a file too large, unreadable or not fetched (an SSRF-refused URL, a failed fetch), a file the workspace refuses, more than 32 data parts, a bad page token, an issued `contextId` not the caller's or a client-named one too long, an SSRF-refused webhook"},
	{Err: orchestrator.ErrNotFound, Code: CodeTaskNotFound, Reason: "TASK_NOT_FOUND", Domain: DomainA2A, HTTP: 404, GRPC: GRPCNotFound, Message: "task not found",
		Doc: "the task does not exist or is not the caller's (the two are one answer)"},
	{Err: orchestrator.ErrUnauthenticated, Code: CodeUnauthenticated, Reason: "UNAUTHENTICATED", Domain: DomainA2A, HTTP: 401, GRPC: GRPCUnauthenticated,
		Message: "unauthenticated", Transport: true,
		Doc: "no or wrong credentials (the gateway answers HTTP 401 with `WWW-Authenticate`, its body in the binding's shape)"},
	{Err: orchestrator.ErrPermissionDenied, Code: CodePermissionDenied, Reason: "UNAUTHORIZED", Domain: DomainA2A, HTTP: 403, GRPC: GRPCPermissionDenied,
		Message: "permission denied", Transport: true,
		Doc: "a user's credential naming another user in `X-Wunder-User`"},
	{Err: orchestrator.ErrUnavailable, Code: CodeServerError, Reason: ReasonUnavailable, Domain: DomainWunder, HTTP: 503, GRPC: GRPCUnavailable, Retry: true, Transport: true,
		Doc: "try again later: the queue is full, no model, the store is down, shutting down"},
	{Err: orchestrator.ErrBusy, Code: CodeServerError, Reason: ReasonBusy, Domain: DomainWunder, HTTP: 429, GRPC: GRPCResourceExhausted, Retry: true, Transport: true,
		Doc: "try again later: the context (session) already has a running task, or the user is at `concurrency.per_user_agents`"},
	{Err: orchestrator.ErrCanceled, Code: CodeServerError, Reason: ReasonCanceled, Domain: DomainWunder, HTTP: 499, GRPC: GRPCCanceled,
		Doc: "a cancelled run reported as an error (no A2A method does so today: a cancelled task is a task in state `canceled`)"},
	{Err: ErrInternal, Core: orchestrator.ErrUnavailable, Code: CodeInternal, Reason: "INTERNAL_ERROR", Domain: DomainA2A, HTTP: 500, GRPC: GRPCInternal, Message: "internal error",
		Doc: "any other failure (the detail goes to the log only)"},
	{Err: ErrTaskNotCancelable, Core: orchestrator.ErrConflict, Code: CodeTaskNotCancelable, Reason: "TASK_NOT_CANCELABLE", Domain: DomainA2A, HTTP: 409, HTTPWas: 400, GRPC: GRPCFailedPrecondition,
		Doc: "cancelling a task that already ended"},
	{Err: ErrPushNotSupported, Core: orchestrator.ErrInvalidArgument, Code: CodePushNotSupported, Reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", Domain: DomainA2A, HTTP: 400, GRPC: GRPCFailedPrecondition,
		Doc: "push notifications are off (`a2a.push.enabled: false`)"},
	{Err: ErrUnsupportedOperation, Core: orchestrator.ErrInvalidArgument, Code: CodeUnsupportedOperation, Reason: "UNSUPPORTED_OPERATION", Domain: DomainA2A, HTTP: 400, GRPC: GRPCFailedPrecondition,
		Doc: "a message for a task that is working or ended; subscribing to a terminal task; deciding an approval twice"},
	{Err: ErrContentTypeNotSupported, Core: orchestrator.ErrInvalidArgument, Code: CodeContentTypeNotSupported, Reason: "CONTENT_TYPE_NOT_SUPPORTED", Domain: DomainA2A, HTTP: 415, HTTPWas: 400, GRPC: GRPCInvalidArgument,
		Doc: "a request body without a JSON `Content-Type`; a message with no text, data or inline file part; a file of a type wunder does not convert ([attachments.md](attachments.md#errors))"},
	{Err: ErrInvalidAgentResponse, Core: orchestrator.ErrUnavailable, Code: CodeInvalidAgentResponse, Reason: "INVALID_AGENT_RESPONSE", Domain: DomainA2A, HTTP: 502, HTTPWas: 500, GRPC: GRPCInternal,
		Doc: "never sent by wunder; its client reports a peer's answer it cannot read as this"},
	{Err: ErrExtendedCardNotConfigured, Core: orchestrator.ErrInvalidArgument, Code: CodeExtendedCardNotConfigured, Reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", Domain: DomainA2A, HTTP: 400, GRPC: GRPCFailedPrecondition,
		Doc: "no extended card: no credentials are configured (`security.api_key`), so there is nothing to authenticate and the card does not declare one"},
	{Err: ErrExtensionSupportRequired, Core: orchestrator.ErrInvalidArgument, Code: CodeExtensionSupportRequired, Reason: "EXTENSION_SUPPORT_REQUIRED", Domain: DomainA2A, HTTP: 400, GRPC: GRPCFailedPrecondition,
		Doc: "never sent by wunder (it requires no extension); read from peers"},
	// Before VersionNotSupported: a bare UNIMPLEMENTED (no ErrorInfo) is an
	// unknown method.
	{Err: ErrMethodNotFound, Core: orchestrator.ErrInvalidArgument, Code: CodeMethodNotFound, Reason: "METHOD_NOT_FOUND", Domain: DomainA2A, HTTP: 501, GRPC: GRPCUnimplemented,
		Doc: "an unknown method (`tasks/list` in 0.3 too), checked before the id"},
	{Err: ErrVersionNotSupported, Core: orchestrator.ErrInvalidArgument, Code: CodeVersionNotSupported, Reason: "VERSION_NOT_SUPPORTED", Domain: DomainA2A, HTTP: 400, GRPC: GRPCUnimplemented, GRPCWas: GRPCFailedPrecondition,
		Doc: "an unknown `A2A-Version`, one that contradicts the method, or any but 1.0 on the HTTP+JSON and gRPC bindings"},
	{Err: ErrParse, Core: orchestrator.ErrInvalidArgument, Code: CodeParseError, Reason: "PARSE_ERROR", Domain: DomainA2A, HTTP: 400, GRPC: GRPCInvalidArgument,
		Doc: "the body is not JSON"},
	{Err: ErrInvalidRequest, Core: orchestrator.ErrInvalidArgument, Code: CodeInvalidRequest, Reason: "INVALID_REQUEST", Domain: DomainA2A, HTTP: 400, GRPC: GRPCInvalidArgument,
		Doc: "no `jsonrpc: \"2.0\"`, no method, a bad id (for a known method), not POST, a body over the limit"},
	// Aliases.
	{Err: orchestrator.ErrConflict, Code: CodeTaskNotCancelable, Reason: "TASK_NOT_CANCELABLE", Domain: DomainA2A, HTTP: 409, GRPC: GRPCFailedPrecondition,
		Doc: "the core's conflict with a task's state"},
	{Err: orchestrator.ErrToolNotFound, Code: CodeInvalidParams, Reason: "INVALID_PARAMS", Domain: DomainA2A, HTTP: 400, GRPC: GRPCInvalidArgument,
		Doc: "a tool the caller may not use"},
	{Err: orchestrator.ErrBusy, Code: CodeServerError, Reason: ReasonRateLimited, Domain: DomainWunder, HTTP: 429, GRPC: GRPCResourceExhausted, Retry: true, Transport: true,
		Doc: "the gateway's rate limit (`auth.rate_limit`)"},
}

// Kinds returns a copy of the table, in its order.
func Kinds() []Kind { return slices.Clone(kinds) }

// internal is the row of errors no row names.
var internal = func() *Kind {
	for i := range kinds {
		if kinds[i].Err == ErrInternal {
			return &kinds[i]
		}
	}
	panic("a2awire: the table has no internal error")
}()

// KindOf returns the row of err: the first whose sentinel err wraps; ok
// is false (and the row is the internal error's) when none is.
func KindOf(err error) (k *Kind, ok bool) {
	for i := range kinds {
		if errors.Is(err, kinds[i].Err) {
			return &kinds[i], true
		}
	}
	return internal, false
}

// first returns the first row that match accepts, or nil.
func first(match func(k *Kind) bool) *Kind {
	for i := range kinds {
		if match(&kinds[i]) {
			return &kinds[i]
		}
	}
	return nil
}

// byCode returns the row of a JSON-RPC code and, where several share it,
// of the ErrorInfo reason; nil for a code A2A and wunder do not use.
func byCode(code int, reason string) *Kind {
	if k := first(func(k *Kind) bool { return k.Code == code && k.Reason == reason }); k != nil {
		return k
	}
	return first(func(k *Kind) bool { return k.Code == code })
}

// byReason returns the row of an ErrorInfo reason in its domain that
// agrees with the binding's own status (ok), or nil.
func byReason(reason, domain string, ok func(k *Kind) bool) *Kind {
	if reason == "" {
		return nil
	}
	return first(func(k *Kind) bool { return k.Reason == reason && k.Domain == domain && ok(k) })
}
