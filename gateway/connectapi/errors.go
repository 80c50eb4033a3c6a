package connectapi

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wunder/wunder/orchestrator"
)

// errorDomain is the ErrorInfo domain of wunder's errors.
const errorDomain = "wunder"

// errorTable is the one mapping from the core's sentinels (and context
// errors) to connect codes. The first match wins, so more specific errors
// come first. reason becomes the google.rpc.ErrorInfo detail's reason.
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
// the log gets the detail.
func (a *API) toConnect(ctx context.Context, procedure string, err error) error {
	if ce := new(connect.Error); errors.As(err, &ce) {
		return err
	}
	for _, e := range errorTable {
		if !errors.Is(err, e.err) {
			continue
		}
		ce := connect.NewError(e.code, errors.New(err.Error()))
		addDetail(ce, &errdetails.ErrorInfo{Reason: e.reason, Domain: errorDomain})
		if after, ok := orchestrator.RetryAfter(err); ok {
			addDetail(ce, &errdetails.RetryInfo{RetryDelay: durationpb.New(after)})
		}
		return ce
	}
	a.opts.Logger.ErrorContext(ctx, "internal error", "procedure", procedure, "err", err)
	return connect.NewError(connect.CodeInternal, errors.New("internal error; see the server log"))
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
