package connectapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
)

// errorDomain is the ErrorInfo domain of wunder's errors.
const errorDomain = "wunder"

// errorTable is the one mapping from the core's sentinels (and context
// errors) to connect codes. The first match wins, so more specific errors
// come first. reason becomes the google.rpc.ErrorInfo detail's reason;
// lower-cased, it names the message's sentence in internal/i18n's catalog.
var errorTable = []struct {
	err    error
	code   connect.Code
	reason string
}{
	{orchestrator.ErrToolNotFound, connect.CodeInvalidArgument, "TOOL_NOT_FOUND"},
	{orchestrator.ErrInvalidArgument, connect.CodeInvalidArgument, "INVALID_ARGUMENT"},
	{orchestrator.ErrNotFound, connect.CodeNotFound, "NOT_FOUND"},
	{orchestrator.ErrConflict, connect.CodeFailedPrecondition, "CONFLICT"},
	{orchestrator.ErrBusy, connect.CodeResourceExhausted, "BUSY"},
	{orchestrator.ErrUnavailable, connect.CodeUnavailable, "UNAVAILABLE"},
	{orchestrator.ErrUnauthenticated, connect.CodeUnauthenticated, "UNAUTHENTICATED"},
	{orchestrator.ErrPermissionDenied, connect.CodePermissionDenied, "PERMISSION_DENIED"},
	{orchestrator.ErrCanceled, connect.CodeCanceled, "CANCELED"},
	{context.Canceled, connect.CodeCanceled, "CANCELED"},
	{context.DeadlineExceeded, connect.CodeDeadlineExceeded, "DEADLINE_EXCEEDED"},
}

// toConnect maps err through errorTable. The error carries a
// google.rpc.ErrorInfo detail (domain "wunder", reason from the table) and,
// when the core attached a retry hint (a full queue), a google.rpc.RetryInfo.
// An error outside the table is internal: the client gets a generic message,
// the log gets the detail. The message is in the language of the request
// ctx belongs to (the gateway's Accept-Language rule, or the request's
// language field; see withLanguage): the catalog's sentence for the
// reason, then the English specifics.
func (a *API) toConnect(ctx context.Context, procedure string, err error) error {
	if ce := new(connect.Error); errors.As(err, &ce) {
		return err
	}
	lang := i18n.FromContext(ctx)
	for _, e := range errorTable {
		if !errors.Is(err, e.err) {
			continue
		}
		msg, ok := "", false
		if lang != i18n.English {
			msg, ok = i18n.ErrorMessage(lang, err) // the core's own sentence
		}
		if !ok {
			msg = localize(lang, strings.ToLower(e.reason), err.Error())
		}
		ce := connect.NewError(e.code, errors.New(msg))
		addDetail(ce, &errdetails.ErrorInfo{Reason: e.reason, Domain: errorDomain})
		if after, ok := orchestrator.RetryAfter(err); ok {
			addDetail(ce, &errdetails.RetryInfo{RetryDelay: durationpb.New(after)})
		}
		return ce
	}
	a.opts.Logger.ErrorContext(ctx, "internal error", "procedure", procedure, "err", err)
	return connect.NewError(connect.CodeInternal, errors.New(i18n.Message(lang, "internal_see_server_log")))
}

// localize is msg, an English message of the catalog's key, in lang.
func localize(lang, key, msg string) string {
	return i18n.Detail(lang, key, msg, sentinelTexts...) // English: msg as it is
}

// sentinelTexts are the texts the core's sentinels (and the context
// errors) start a message with.
var sentinelTexts = func() []string {
	texts := make([]string, 0, len(errorTable))
	for _, e := range errorTable {
		texts = append(texts, e.err.Error())
	}
	return texts
}()

// withLanguage returns ctx with the messages' language set to a request's
// language field, when it names one of the catalog's; else ctx as it is
// (the gateway's Accept-Language rule decided).
func withLanguage(ctx context.Context, requested string) context.Context {
	if slices.Contains(i18n.Languages(), requested) {
		return i18n.WithLanguage(ctx, requested)
	}
	return ctx
}

func addDetail(ce *connect.Error, msg proto.Message) {
	if d, err := connect.NewErrorDetail(msg); err == nil {
		ce.AddDetail(d)
	}
}

// invalid returns an InvalidArgument core error with a message.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, args...))
}
