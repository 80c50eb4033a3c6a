package connectapi

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// runService implements wunder.v1.RunService.
type runService struct{ *API }

var _ wunderv1connect.RunServiceHandler = (*runService)(nil)

// runFields are the fields RunRequest and SubmitRequest share.
type runFields interface {
	GetUserId() string
	GetQuestion() string
	GetToolNames() []string
	GetSessionId() string
	GetModelName() string
	GetToolCallMode() wunderv1.ToolCallMode
	GetLanguage() string
	GetMaxRounds() int32
	GetPreloadSkills() []string
	GetApprovalMode() wunderv1.ApprovalMode
	GetAttachments() []*wunderv1.Attachment
}

// start decodes a run request and starts the run as an agent caller,
// read as delivery says: Run streams it (DeliverStreamed: Run's response
// headers, which carry the run's ids, go out with its first message, as
// connect-go writes them), Submit's caller follows it (DeliverFollowed).
func (s *runService) start(ctx context.Context, m runFields, delivery orchestrator.Delivery) (*orchestrator.Run, error) {
	userID, err := s.scope(ctx, m.GetUserId(), true)
	if err != nil {
		return nil, err
	}
	mode, err := coreMode(m.GetToolCallMode())
	if err != nil {
		return nil, err
	}
	approvalMode, err := coreApprovalMode(m.GetApprovalMode())
	if err != nil {
		return nil, err
	}
	atts, err := s.attachments(ctx, m.GetAttachments())
	if err != nil {
		return nil, err // before the run starts: nothing is stored
	}
	return s.b.Start(ctx, orchestrator.RunRequest{
		UserID: userID, SessionID: m.GetSessionId(), Question: m.GetQuestion(), ToolNames: m.GetToolNames(),
		ModelName: m.GetModelName(), ToolCallMode: mode, Language: m.GetLanguage(),
		MaxRounds: int(m.GetMaxRounds()), PreloadSkills: m.GetPreloadSkills(), Caller: orchestrator.CallerAgent, Frontend: orchestrator.FrontendConnect,
		ApprovalMode: approvalMode, Attachments: atts, Delivery: delivery,
	})
}

// attachments converts a request's attachments (internal/doc2md); one
// too large is RESOURCE_EXHAUSTED, another unusable one INVALID_ARGUMENT,
// the message naming it.
func (s *runService) attachments(ctx context.Context, in []*wunderv1.Attachment) ([]orchestrator.Attachment, error) {
	if len(in) == 0 {
		return nil, nil
	}
	as := make([]orchestrator.Attachment, len(in))
	for i, a := range in {
		as[i] = orchestrator.Attachment{Type: a.GetType(), Name: a.GetName(), Content: a.GetContent(), MimeType: a.GetMimeType()}
	}
	conv := s.opts.Attachments
	if conv == nil {
		conv = defaultConverter
	}
	out, err := conv.Prepare(ctx, as)
	var e *doc2md.Error
	if errors.As(err, &e) && e.Kind == doc2md.TooLarge {
		ce := connect.NewError(connect.CodeResourceExhausted, errors.New(e.Error()))
		addDetail(ce, &errdetails.ErrorInfo{Reason: "ATTACHMENT_TOO_LARGE", Domain: errorDomain})
		return nil, ce
	}
	return out, err
}

var defaultConverter = doc2md.New(nil)

// Run starts a run and streams its events until the final one.
func (s *runService) Run(ctx context.Context, req *connect.Request[wunderv1.RunRequest], stream *connect.ServerStream[wunderv1.RunResponse]) error {
	ctx = withLanguage(ctx, req.Msg.GetLanguage())
	run, err := s.start(ctx, req.Msg, orchestrator.DeliverStreamed)
	if err != nil {
		return s.toConnect(ctx, req.Spec().Procedure, err)
	}
	stream.ResponseHeader().Set("Wunder-Run-Id", run.ID)
	stream.ResponseHeader().Set("Wunder-Session-Id", run.SessionID)
	return s.follow(ctx, req.Spec().Procedure, run.UserID, run.ID, 0, func(ev *wunderv1.Event) error {
		return stream.Send(&wunderv1.RunResponse{Event: ev})
	})
}

// Follow streams an existing run's events after a seq.
func (s *runService) Follow(ctx context.Context, req *connect.Request[wunderv1.FollowRequest], stream *connect.ServerStream[wunderv1.FollowResponse]) error {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return s.toConnect(ctx, proc, err)
	}
	if req.Msg.GetRunId() == "" {
		return s.toConnect(ctx, proc, invalid("run_id is required"))
	}
	if req.Msg.GetAfterSeq() < 0 {
		return s.toConnect(ctx, proc, invalid("after_seq must not be negative"))
	}
	return s.follow(ctx, proc, userID, req.Msg.GetRunId(), req.Msg.GetAfterSeq(), func(ev *wunderv1.Event) error {
		return stream.Send(&wunderv1.FollowResponse{Event: ev})
	})
}

// follow sends a run's events after seq until the final one. An unknown
// run fails before any message, so the client gets a plain NOT_FOUND.
// Artifact and final events carry their artifacts typed, whose download
// URIs name the run's owner (read once for an admin, who may follow any
// user's run).
func (s *runService) follow(ctx context.Context, proc, userID, runID string, after int64, send func(*wunderv1.Event) error) error {
	owner := userID
	for ev, err := range s.b.Events(ctx, userID, runID, after) {
		if err != nil {
			return s.toConnect(ctx, proc, err)
		}
		pb := eventProto(ev)
		if ev.Type == orchestrator.EventArtifact || ev.Type == orchestrator.EventFinal {
			if owner == "" {
				r, err := s.b.GetRun(ctx, "", runID)
				if err != nil {
					return s.toConnect(ctx, proc, err)
				}
				owner = r.UserID
			}
			pb.Artifacts = s.eventArtifacts(owner, ev)
		}
		if err := send(pb); err != nil {
			return err // the client went away; the run goes on
		}
	}
	return nil
}

// Submit starts a run and returns at once.
func (s *runService) Submit(ctx context.Context, req *connect.Request[wunderv1.SubmitRequest]) (*connect.Response[wunderv1.SubmitResponse], error) {
	ctx = withLanguage(ctx, req.Msg.GetLanguage())
	run, err := s.start(ctx, req.Msg, orchestrator.DeliverFollowed)
	if err != nil {
		return nil, s.toConnect(ctx, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&wunderv1.SubmitResponse{Run: runProto(run)}), nil
}

// Cancel asks a run to stop.
func (s *runService) Cancel(ctx context.Context, req *connect.Request[wunderv1.CancelRequest]) (*connect.Response[wunderv1.CancelResponse], error) {
	run, err := s.lookup(ctx, req.Msg, s.b.Cancel)
	if err != nil {
		return nil, s.toConnect(ctx, req.Spec().Procedure, err)
	}
	pb, err := s.runWithArtifacts(ctx, run)
	if err != nil {
		return nil, s.toConnect(ctx, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&wunderv1.CancelResponse{Run: pb}), nil
}

// GetRun returns a run.
func (s *runService) GetRun(ctx context.Context, req *connect.Request[wunderv1.GetRunRequest]) (*connect.Response[wunderv1.GetRunResponse], error) {
	run, err := s.lookup(ctx, req.Msg, s.b.GetRun)
	if err != nil {
		return nil, s.toConnect(ctx, req.Spec().Procedure, err)
	}
	pb, err := s.runWithArtifacts(ctx, run)
	if err != nil {
		return nil, s.toConnect(ctx, req.Spec().Procedure, err)
	}
	return connect.NewResponse(&wunderv1.GetRunResponse{Run: pb}), nil
}

// lookup scopes and validates a request that names one run, then calls f.
func (s *runService) lookup(ctx context.Context, m interface {
	GetUserId() string
	GetRunId() string
}, f func(ctx context.Context, userID, runID string) (*orchestrator.Run, error)) (*orchestrator.Run, error) {
	userID, err := s.scope(ctx, m.GetUserId(), false)
	if err != nil {
		return nil, err
	}
	if m.GetRunId() == "" {
		return nil, invalid("run_id is required")
	}
	return f(ctx, userID, m.GetRunId())
}

// ListRuns lists runs, newest first, a page at a time.
func (s *runService) ListRuns(ctx context.Context, req *connect.Request[wunderv1.ListRunsRequest]) (*connect.Response[wunderv1.ListRunsResponse], error) {
	proc := req.Spec().Procedure
	userID, err := s.scope(ctx, req.Msg.GetUserId(), false)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	f := orchestrator.RunFilter{UserID: userID, SessionID: req.Msg.GetSessionId()}
	for _, st := range req.Msg.GetStates() {
		cs, err := coreState(st)
		if err != nil {
			return nil, s.toConnect(ctx, proc, err)
		}
		f.States = append(f.States, cs)
	}
	pg, err := pageOf(req.Msg.GetPageSize(), req.Msg.GetPageToken(), "runs", userID, f.SessionID, f.States)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	f.Page = pg.Page
	runs, err := s.b.ListRuns(ctx, f)
	if err != nil {
		return nil, s.toConnect(ctx, proc, err)
	}
	runs, next := orchestrator.CutPage(pg, runs, orchestrator.RunKey)
	out := &wunderv1.ListRunsResponse{NextPageToken: next}
	for _, r := range runs {
		pb := runProto(r)
		if req.Msg.GetIncludeArtifacts() {
			if pb, err = s.runWithArtifacts(ctx, r); err != nil {
				return nil, s.toConnect(ctx, proc, err)
			}
		}
		out.Runs = append(out.Runs, pb)
	}
	return connect.NewResponse(out), nil
}
