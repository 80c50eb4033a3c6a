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

// codeError is an error the handler raises with its message and its row
// of the error table (internal/a2awire's kinds) chosen: the sentinel it
// wraps picks the row, and the message is said as is (in the request's
// language, see newError), not after the sentinel's text.
type codeError struct {
	kind error
	msg  string
}

func (e *codeError) Error() string { return e.msg }
func (e *codeError) Unwrap() error { return e.kind }

func errParams(format string, args ...any) error {
	return &codeError{orchestrator.ErrInvalidArgument, "invalid params: " + fmt.Sprintf(format, args...)}
}

func errMethod(name string) error {
	return &codeError{w.ErrMethodNotFound, "method not found: " + name}
}

// errKind is an error of kind (a sentinel of the error table) saying
// format.
func errKind(kind error, format string, args ...any) error {
	return &codeError{kind, fmt.Sprintf(format, args...)}
}

// toError maps err to the JSON-RPC error of version v through the one
// error table (internal/a2awire's Kinds; DESIGN.md section 7), its message
// in the request's language (ctx's, see newError). Not-found and
// not-visible are the same answer (the row's fixed message). Unknown
// errors become the internal error; the detail goes to the log. The
// HTTP+JSON and gRPC bindings send the same error in their shapes
// (rest.go, grpc.go).
func (h *Handler) toError(ctx context.Context, v w.Version, err error) *w.Error {
	k, known := w.KindOf(err)
	if !known {
		h.opts.Logger.ErrorContext(ctx, "a2a: internal error", "err", err)
	}
	lang := i18n.FromContext(ctx)
	var msg string
	var ce *codeError
	switch {
	case errors.As(err, &ce):
		msg = localize(lang, strings.ToLower(k.Reason), ce.msg)
	case k.Message != "":
		msg = localize(lang, messageKey(k.Message), k.Message)
	default:
		msg = localizeErr(lang, messageKey(k.Err.Error()), err)
	}
	after, ok := orchestrator.RetryAfter(err)
	if !ok {
		after = time.Second
	}
	return k.New(v, msg, after)
}

// messageKey is the catalog key of a sentinel's text or a fixed message:
// "permission denied" is permission_denied.
func messageKey(text string) string { return strings.ReplaceAll(text, " ", "_") }

// newError is the error of kind (a sentinel of the error table) for
// version v, with msg in the language of the request ctx belongs to (the
// gateway puts it there: Accept-Language, else i18n.default_language): the
// catalog's sentence for the row's reason, followed by what msg says
// beyond it. The code and data do not change with the language.
func newError(ctx context.Context, v w.Version, kind error, msg string) *w.Error {
	k, _ := w.KindOf(kind)
	return k.New(v, localize(i18n.FromContext(ctx), strings.ToLower(k.Reason), msg), time.Second)
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

// sentinelTexts are the texts the table's sentinels start a message with.
var sentinelTexts = func() []string {
	var texts []string
	for _, k := range w.Kinds() {
		texts = append(texts, k.Err.Error())
	}
	return texts
}()
