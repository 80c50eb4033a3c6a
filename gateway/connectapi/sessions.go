package connectapi

import (
	"context"

	"connectrpc.com/connect"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/orchestrator"
)

// sessionService implements wunder.v1.SessionService.
type sessionService struct{ *API }

var _ wunderv1connect.SessionServiceHandler = (*sessionService)(nil)

// ListSessions lists a user's sessions, most recently updated first.
func (s *sessionService) ListSessions(ctx context.Context, req *connect.Request[wunderv1.ListSessionsRequest]) (*connect.Response[wunderv1.ListSessionsResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), true)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	pg, err := pageOf(req.Msg.GetPageSize(), req.Msg.GetPageToken(), "sessions", userID)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	sessions, err := s.b.ListSessions(ctx, userID, pg.Page)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	sessions, next := orchestrator.CutPage(pg, sessions, orchestrator.SessionKey)
	out := &wunderv1.ListSessionsResponse{NextPageToken: next}
	for _, sess := range sessions {
		out.Sessions = append(out.Sessions, sessionProto(sess))
	}
	return connect.NewResponse(out), nil
}

// GetSession returns a session with its history.
func (s *sessionService) GetSession(ctx context.Context, req *connect.Request[wunderv1.GetSessionRequest]) (*connect.Response[wunderv1.GetSessionResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	id := req.Msg.GetSessionId()
	switch {
	case id == "":
		return nil, s.toConnect(ctx, proc, invalid("session_id is required"))
	case req.Msg.GetHistoryLimit() < 0:
		return nil, s.toConnect(ctx, proc, invalid("history_limit must not be negative"))
	}
	sess, err := s.b.GetSession(ctx, userID, id)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	msgs, err := s.b.History(ctx, userID, id, int(req.Msg.GetHistoryLimit()))
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	out := &wunderv1.GetSessionResponse{Session: sessionProto(sess)}
	for _, m := range msgs {
		out.Messages = append(out.Messages, messageProto(m))
	}
	return connect.NewResponse(out), nil
}

// DeleteSession removes a session with its runs and events.
func (s *sessionService) DeleteSession(ctx context.Context, req *connect.Request[wunderv1.DeleteSessionRequest]) (*connect.Response[wunderv1.DeleteSessionResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	if req.Msg.GetSessionId() == "" {
		return nil, s.toConnect(ctx, proc, invalid("session_id is required"))
	}
	if err := s.b.DeleteSession(ctx, userID, req.Msg.GetSessionId()); err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	return connect.NewResponse(&wunderv1.DeleteSessionResponse{}), nil
}

// RenameSession gives a session a new title (POST /wunder/sessions/{id}/title
// over HTTP).
func (s *sessionService) RenameSession(ctx context.Context, req *connect.Request[wunderv1.RenameSessionRequest]) (*connect.Response[wunderv1.RenameSessionResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	if req.Msg.GetSessionId() == "" {
		return nil, s.toConnect(ctx, proc, invalid("session_id is required"))
	}
	sess, err := s.b.RenameSession(ctx, userID, req.Msg.GetSessionId(), req.Msg.GetTitle())
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	return connect.NewResponse(&wunderv1.RenameSessionResponse{Session: sessionProto(sess)}), nil
}
