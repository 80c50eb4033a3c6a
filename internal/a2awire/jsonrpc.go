package a2awire

import (
	"bytes"
	"encoding/json"
)

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
