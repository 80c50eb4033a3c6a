package a2a

import (
	"context"
	"errors"
	"fmt"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// codeError is an error the handler raises with its A2A code already
// chosen (bad params, unsupported operations).
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }

func errParams(format string, args ...any) error {
	return &codeError{w.CodeInvalidParams, "invalid params: " + fmt.Sprintf(format, args...)}
}

func errMethod(name string) error {
	return &codeError{w.CodeMethodNotFound, "method not found: " + name}
}

func errCode(code int, format string, args ...any) error {
	return &codeError{code, fmt.Sprintf(format, args...)}
}

// errorTable is THE mapping of the core's sentinels to A2A JSON-RPC codes
// (DESIGN.md section 7). Not-found and not-visible are the same answer.
var errorTable = []struct {
	sentinel error
	code     int
	msg      string
}{
	{orchestrator.ErrNotFound, w.CodeTaskNotFound, "task not found"},
	{orchestrator.ErrToolNotFound, w.CodeInvalidParams, ""},
	{orchestrator.ErrInvalidArgument, w.CodeInvalidParams, ""},
	{orchestrator.ErrConflict, w.CodeTaskNotCancelable, ""},
	{orchestrator.ErrUnauthenticated, w.CodeInvalidRequest, "unauthenticated"},
	{orchestrator.ErrPermissionDenied, w.CodeInvalidRequest, "permission denied"},
	{orchestrator.ErrCanceled, w.CodeTaskNotCancelable, ""},
}

// retryTable maps the errors that mean "try again later" to the -32000
// server error with a reason and a RetryInfo (a2awire.NewRetryError), so
// a peer can tell them from a crash; a2awire's client maps them back.
var retryTable = []struct {
	sentinel error
	reason   string
}{
	{orchestrator.ErrBusy, w.ReasonBusy},
	{orchestrator.ErrUnavailable, w.ReasonUnavailable},
}

// toError maps err to the JSON-RPC error of version v. Unknown errors
// become a generic internal error; the detail goes to the log.
func (h *Handler) toError(ctx context.Context, v w.Version, err error) *w.Error {
	var ce *codeError
	if errors.As(err, &ce) {
		return w.NewError(v, ce.code, ce.msg)
	}
	for _, rt := range retryTable {
		if errors.Is(err, rt.sentinel) {
			after, ok := orchestrator.RetryAfter(err)
			if !ok {
				after = time.Second
			}
			return w.NewRetryError(rt.reason, err.Error(), after)
		}
	}
	for _, row := range errorTable {
		if errors.Is(err, row.sentinel) {
			msg := row.msg
			if msg == "" {
				msg = err.Error()
			}
			return w.NewError(v, row.code, msg)
		}
	}
	h.opts.Logger.ErrorContext(ctx, "a2a: internal error", "err", err)
	return w.NewError(v, w.CodeInternal, "internal error")
}
