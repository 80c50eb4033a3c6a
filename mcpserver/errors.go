package mcpserver

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wunder/wunder/orchestrator"
)

// codeUnauthorized is the JSON-RPC code of an authentication or permission
// failure (implementation-defined; the standard codes are the SDK's
// jsonrpc.Code* constants).
const codeUnauthorized = -32001

// toolError maps a core error to either a tool error result (the caller's
// model can read and retry: busy, unavailable, cancelled) or a JSON-RPC
// error (a bad request). The one mapping table of this edge.
func toolError(err error) (resultText string, rpcErr error) {
	switch {
	case errors.Is(err, orchestrator.ErrInvalidArgument), errors.Is(err, orchestrator.ErrToolNotFound),
		errors.Is(err, orchestrator.ErrNotFound):
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case errors.Is(err, orchestrator.ErrUnauthenticated), errors.Is(err, orchestrator.ErrPermissionDenied):
		return "", &jsonrpc.Error{Code: codeUnauthorized, Message: err.Error()}
	case errors.Is(err, orchestrator.ErrBusy), errors.Is(err, orchestrator.ErrUnavailable),
		errors.Is(err, orchestrator.ErrConflict), errors.Is(err, orchestrator.ErrCanceled):
		return err.Error(), nil
	default:
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
}
