package connectapi

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"slices"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// Backend is what the Connect front-end needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	GetRun(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error)
	Tools(ctx context.Context, userID string) ([]orchestrator.ToolSpec, error)
	GetSession(ctx context.Context, userID, sessionID string) (*orchestrator.Session, error)
	ListSessions(ctx context.Context, userID string, page orchestrator.Page) ([]*orchestrator.Session, error)
	History(ctx context.Context, userID, sessionID string, limit int) ([]orchestrator.Message, error)
	DeleteSession(ctx context.Context, userID, sessionID string) error
	RenameSession(ctx context.Context, userID, sessionID, title string) (*orchestrator.Session, error)
	Approvals(ctx context.Context, userID, runID string) ([]*orchestrator.Approval, error)
	Decide(ctx context.Context, userID, runID, approvalID string, d orchestrator.ApprovalDecision) (*orchestrator.Approval, error)
	Answer(ctx context.Context, userID, runID, questionID string, answer json.RawMessage) (*orchestrator.Approval, error)
	// Registry gives the wire encoding of tool names.
	Registry() *orchestrator.Registry
}

var _ Backend = (*orchestrator.Orchestrator)(nil)

// Options configure the API. Nil or zero fields mean the defaults stated.
type Options struct {
	// Scope returns the user id a call acts for, given the user_id the
	// request names ("" = all users, for an admin). The gateway provides it
	// from the principal on the context (gateway.ScopeOf); an error is
	// returned to the client through the error table. Default: the
	// requested id, as for an admin.
	Scope func(ctx context.Context, requested string) (string, error)
	// Ready reports whether the server's dependencies are usable; gRPC
	// health answers NOT_SERVING while it fails. Default: always ready.
	Ready func(ctx context.Context) error
	// Logger receives internal errors and panics. Default: discard.
	Logger *slog.Logger
	// Attachments converts the attachments of Run and Submit as POST
	// /wunder converts its attachments; nil = doc2md's default limits.
	Attachments *doc2md.Converter
	// PublicURL is the server's public base URL (server.public_url): the
	// download URIs of file artifacts are absolute under it; "" =
	// relative to the server.
	PublicURL string
	// OtherServices are the fully-qualified names of gRPC services others
	// serve on the same port (A2A's lf.a2a.v1.A2AService), which
	// reflection lists too; their descriptors must be linked in (their
	// generated package imported). Default none.
	OtherServices []string
}

func (o Options) withDefaults() Options {
	if o.Scope == nil {
		o.Scope = func(_ context.Context, requested string) (string, error) { return requested, nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// API is the wunder.v1 Connect API.
type API struct {
	b    Backend
	opts Options
}

// New returns the API over b.
func New(b Backend, opts *Options) *API {
	var o Options
	if opts != nil {
		o = *opts
	}
	return &API{b: b, opts: o.withDefaults()}
}

// services are the fully-qualified names of the services the API serves,
// as reflection and health list them.
var services = []string{
	wunderv1connect.RunServiceName,
	wunderv1connect.SessionServiceName,
	wunderv1connect.ToolServiceName,
	grpchealth.HealthV1ServiceName,
}

// compressMinBytes is the smallest response message compressed (when the
// client accepts gzip).
const compressMinBytes = 1024

// Mounter is where the API's handlers go; *gateway.Server is one.
type Mounter interface {
	Mount(pattern string, h http.Handler)
}

// MountOn mounts the three services, health and reflection on m, each
// under its "/package.Service/" path prefix.
func (a *API) MountOn(m Mounter) {
	for path, h := range a.Handlers() {
		m.Mount(path, h)
	}
}

// Handlers returns every handler by its path prefix.
func (a *API) Handlers() map[string]http.Handler {
	opts := []connect.HandlerOption{
		connect.WithRecover(a.recovered),
		// Most events are a few hundred bytes: gzip's per-message setup
		// costs more than it saves there (it halved streamed runs/s).
		connect.WithCompressMinBytes(compressMinBytes),
	}
	out := map[string]http.Handler{}
	add := func(path string, h http.Handler) { out[path] = h }
	add(wunderv1connect.NewRunServiceHandler(&runService{a}, opts...))
	add(wunderv1connect.NewSessionServiceHandler(&sessionService{a}, opts...))
	add(wunderv1connect.NewToolServiceHandler(&toolService{a}, opts...))
	add(grpchealth.NewHandler(&checker{ready: a.opts.Ready}, opts...))
	reflector := grpcreflect.NewStaticReflector(append(slices.Clone(services), a.opts.OtherServices...)...)
	add(grpcreflect.NewHandlerV1(reflector, opts...))
	add(grpcreflect.NewHandlerV1Alpha(reflector, opts...))
	return out
}

// recovered turns a handler panic into an internal error in the caller's
// protocol; the detail goes to the log.
func (a *API) recovered(ctx context.Context, spec connect.Spec, _ http.Header, p any) error {
	a.opts.Logger.ErrorContext(ctx, "connect handler panicked", "procedure", spec.Procedure, "panic", p)
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

// scope resolves the user a call acts for; required refuses "" (a call
// that must name one user).
func (a *API) scope(ctx context.Context, requested string, required bool) (string, error) {
	userID, err := a.opts.Scope(ctx, requested)
	if err != nil {
		return "", err
	}
	if required && userID == "" {
		return "", invalid("user_id is required")
	}
	return userID, nil
}

// checker answers gRPC health: SERVING while Ready succeeds, for the
// server ("") and each service; unknown services are NOT_FOUND.
type checker struct {
	ready func(ctx context.Context) error
}

func (c *checker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	known := req.Service == ""
	for _, s := range services {
		known = known || req.Service == s
	}
	if !known {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("unknown service "+req.Service))
	}
	if c.ready != nil {
		if err := c.ready(ctx); err != nil {
			return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
		}
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}
