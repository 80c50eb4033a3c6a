package mcpserver

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
)

// codeUnauthorized is the JSON-RPC code of an authentication or permission
// failure (implementation-defined; the standard codes are the SDK's
// jsonrpc.Code* constants).
const codeUnauthorized = -32001

// errorTable is the one mapping table of this edge: the core's sentinels
// that are a bad request become a JSON-RPC error of code, its message in
// the caller's language (key names its sentence in internal/i18n's
// catalog); those the caller's model can read and retry (busy,
// unavailable, conflict, cancelled) become a tool error result, in
// English, the text the model reads. The first match wins.
var errorTable = []struct {
	err    error
	code   int64
	key    string
	result bool
}{
	{orchestrator.ErrToolNotFound, jsonrpc.CodeInvalidParams, "tool_not_found", false},
	{orchestrator.ErrInvalidArgument, jsonrpc.CodeInvalidParams, "invalid_argument", false},
	{orchestrator.ErrNotFound, jsonrpc.CodeInvalidParams, "not_found", false},
	{orchestrator.ErrUnauthenticated, codeUnauthorized, "unauthenticated", false},
	{orchestrator.ErrPermissionDenied, codeUnauthorized, "permission_denied", false},
	{orchestrator.ErrBusy, 0, "busy", true},
	{orchestrator.ErrUnavailable, 0, "unavailable", true},
	{orchestrator.ErrConflict, 0, "conflict", true},
	{orchestrator.ErrCanceled, 0, "canceled", true},
}

// toolError maps a core error to either a tool error result (the caller's
// model can read and retry: busy, unavailable, cancelled) or a JSON-RPC
// error (a bad request) whose message is in lang.
func toolError(lang string, err error) (resultText string, rpcErr error) {
	for _, e := range errorTable {
		if !errors.Is(err, e.err) {
			continue
		}
		if e.result {
			return err.Error(), nil
		}
		msg, ok := "", false
		if lang != i18n.English {
			msg, ok = i18n.ErrorMessage(lang, err) // the core's own sentence
		}
		if !ok {
			msg = localize(lang, e.key, err.Error())
		}
		return "", &jsonrpc.Error{Code: e.code, Message: msg}
	}
	return "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: localize(lang, "internal", "internal error")}
}

// invalidParams is the JSON-RPC error of a bad argument, msg in lang.
func invalidParams(lang, msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: localize(lang, "invalid_params", msg)}
}

// localize is msg, an English message of the catalog's key, in lang: the
// catalog's sentence followed by what msg adds to its sentinel's text.
func localize(lang, key, msg string) string {
	return i18n.Detail(lang, key, msg, sentinelTexts...) // English: msg as it is
}

// sentinelTexts are the texts the core's sentinels start a message with.
var sentinelTexts = func() []string {
	texts := make([]string, 0, len(errorTable))
	for _, e := range errorTable {
		texts = append(texts, e.err.Error())
	}
	return texts
}()
