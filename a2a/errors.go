package a2a

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/i18n"
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
// key names the message's sentence in internal/i18n's catalog.
var errorTable = []struct {
	sentinel error
	code     int
	msg      string
	key      string
}{
	{orchestrator.ErrNotFound, w.CodeTaskNotFound, "task not found", "task_not_found"},
	{orchestrator.ErrToolNotFound, w.CodeInvalidParams, "", "tool_not_found"},
	{orchestrator.ErrInvalidArgument, w.CodeInvalidParams, "", "invalid_argument"},
	{orchestrator.ErrConflict, w.CodeTaskNotCancelable, "", "conflict"},
	{orchestrator.ErrUnauthenticated, w.CodeInvalidRequest, "unauthenticated", "unauthenticated"},
	{orchestrator.ErrPermissionDenied, w.CodeInvalidRequest, "permission denied", "permission_denied"},
	{orchestrator.ErrCanceled, w.CodeTaskNotCancelable, "", "canceled"},
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

// toError maps err to the JSON-RPC error of version v, its message in the
// request's language (ctx's, see newError). Unknown errors become a generic
// internal error; the detail goes to the log.
func (h *Handler) toError(ctx context.Context, v w.Version, err error) *w.Error {
	var ce *codeError
	if errors.As(err, &ce) {
		return newError(ctx, v, ce.code, ce.msg)
	}
	lang := i18n.FromContext(ctx)
	for _, rt := range retryTable {
		if errors.Is(err, rt.sentinel) {
			after, ok := orchestrator.RetryAfter(err)
			if !ok {
				after = time.Second
			}
			return w.NewRetryError(rt.reason, localizeErr(lang, strings.ToLower(rt.reason), err), after)
		}
	}
	for _, row := range errorTable {
		if errors.Is(err, row.sentinel) {
			if row.msg != "" {
				return w.NewError(v, row.code, localize(lang, row.key, row.msg))
			}
			return w.NewError(v, row.code, localizeErr(lang, row.key, err))
		}
	}
	h.opts.Logger.ErrorContext(ctx, "a2a: internal error", "err", err)
	return newError(ctx, v, w.CodeInternal, "internal error")
}

// newError is w.NewError with msg in the language of the request ctx
// belongs to (the gateway puts it there: Accept-Language, else
// i18n.default_language): the catalog's sentence for the code's reason,
// followed by what msg says beyond it. The code and data are unchanged.
func newError(ctx context.Context, v w.Version, code int, msg string) *w.Error {
	return w.NewError(v, code, localize(i18n.FromContext(ctx), strings.ToLower(w.ReasonOf(code)), msg))
}

// localize is msg, an English message of the catalog's key, in lang.
func localize(lang, key, msg string) string {
	if lang == i18n.English {
		return msg
	}
	return i18n.Detail(lang, key, msg, append([]string{i18n.Message(i18n.English, key)}, sentinelTexts...)...)
}

// localizeErr is err's message in lang: the core's own sentence when err
// names one (orchestrator.KeyedError), else its English message given as
// the catalog's sentence for key (see localize).
func localizeErr(lang, key string, err error) string {
	if lang != i18n.English {
		if m, ok := i18n.ErrorMessage(lang, err); ok {
			return m
		}
	}
	return localize(lang, key, err.Error())
}

// sentinelTexts are the texts the core's sentinels start a message with.
var sentinelTexts = func() []string {
	var texts []string
	for _, row := range errorTable {
		texts = append(texts, row.sentinel.Error())
	}
	for _, rt := range retryTable {
		texts = append(texts, rt.sentinel.Error())
	}
	return texts
}()
