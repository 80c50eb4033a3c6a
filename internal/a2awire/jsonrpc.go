package a2awire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/wunder/wunder/orchestrator"
)

// JSON-RPC 2.0 and A2A error codes (A2A 0.3 section 8, 1.0 section 5.4).
const (
	CodeParseError                = -32700
	CodeInvalidRequest            = -32600
	CodeMethodNotFound            = -32601
	CodeInvalidParams             = -32602
	CodeInternal                  = -32603
	CodeTaskNotFound              = -32001
	CodeTaskNotCancelable         = -32002
	CodePushNotSupported          = -32003
	CodeUnsupportedOperation      = -32004
	CodeContentTypeNotSupported   = -32005
	CodeInvalidAgentResponse      = -32006
	CodeExtendedCardNotConfigured = -32007
	CodeExtensionSupportRequired  = -32008
	CodeVersionNotSupported       = -32009
	errorInfoType                 = "type.googleapis.com/google.rpc.ErrorInfo"
	errorDomain                   = "a2a-protocol.org"
)

// reasons are the google.rpc.ErrorInfo reasons of 1.0 (section 9.5).
var reasons = map[int]string{
	CodeParseError: "PARSE_ERROR", CodeInvalidRequest: "INVALID_REQUEST", CodeMethodNotFound: "METHOD_NOT_FOUND",
	CodeInvalidParams: "INVALID_PARAMS", CodeInternal: "INTERNAL_ERROR", CodeTaskNotFound: "TASK_NOT_FOUND",
	CodeTaskNotCancelable: "TASK_NOT_CANCELABLE", CodePushNotSupported: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	CodeUnsupportedOperation: "UNSUPPORTED_OPERATION", CodeContentTypeNotSupported: "CONTENT_TYPE_NOT_SUPPORTED",
	CodeInvalidAgentResponse: "INVALID_AGENT_RESPONSE", CodeExtendedCardNotConfigured: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
	CodeExtensionSupportRequired: "EXTENSION_SUPPORT_REQUIRED", CodeVersionNotSupported: "VERSION_NOT_SUPPORTED",
}

// Reasons are the google.rpc.ErrorInfo reasons of 1.0 by code, a copy:
// every code A2A's errors carry but -32000 (see [NewRetryError]).
func Reasons() map[int]string { return maps.Clone(reasons) }

// ReasonOf is the ErrorInfo reason of code ("" for one A2A does not name).
func ReasonOf(code int) string { return reasons[code] }

// Request is a JSON-RPC request.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// Response is a JSON-RPC response: Result or Error.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object. It unwraps to the core sentinel of its
// code, so callers use errors.Is(err, orchestrator.ErrNotFound).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("a2a error %d: %s", e.Code, e.Message) }

// Unwrap maps the code to the core's vocabulary.
func (e *Error) Unwrap() error {
	switch e.Code {
	case CodeServerError:
		return e.retryable()
	case CodeTaskNotFound:
		return orchestrator.ErrNotFound
	case CodeTaskNotCancelable:
		return orchestrator.ErrConflict
	case CodeInvalidParams, CodeInvalidRequest, CodeParseError, CodeContentTypeNotSupported,
		CodePushNotSupported, CodeUnsupportedOperation, CodeMethodNotFound, CodeExtendedCardNotConfigured,
		CodeExtensionSupportRequired, CodeVersionNotSupported:
		return orchestrator.ErrInvalidArgument
	}
	return orchestrator.ErrUnavailable
}

// NewError builds the error object of code for version v: in 1.0 data is an
// array holding a google.rpc.ErrorInfo; in 0.3 it is omitted.
func NewError(v Version, code int, msg string) *Error {
	e := &Error{Code: code, Message: msg}
	if v == V10 {
		reason := reasons[code]
		if reason == "" {
			reason = "INTERNAL_ERROR"
		}
		e.Data, _ = json.Marshal([]map[string]any{{"@type": errorInfoType, "reason": reason, "domain": errorDomain}})
	}
	return e
}

// ValidID reports whether the id is a JSON-RPC id: a string, a number or
// null (absent is a notification, which A2A does not use).
func ValidID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case 'n':
		return string(id) == "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		return json.Unmarshal(id, &n) == nil
	}
	return false
}

// Methods are one version's method names, by operation.
type Methods struct {
	Send, Stream, Get, List, Cancel, Subscribe, PushSet, PushGet, PushList, PushDelete, ExtendedCard string
}

// Methods10 and Methods03 are each version's method names.
var (
	Methods10 = Methods{"SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"}
	Methods03 = Methods{"message/send", "message/stream", "tasks/get", "tasks/list", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
		"tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"}
)

// MethodsOf returns v's method names.
func MethodsOf(v Version) Methods {
	if v == V10 {
		return Methods10
	}
	return Methods03
}

// Has reports whether name is one of the set's methods.
func (m Methods) Has(name string) bool {
	switch name {
	case m.Send, m.Stream, m.Get, m.List, m.Cancel, m.Subscribe, m.PushSet, m.PushGet, m.PushList, m.PushDelete, m.ExtendedCard:
		return true
	}
	return false
}
