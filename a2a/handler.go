package a2a

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/orchestrator"
)

// Backend is what the A2A front-end needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	// Wait follows a task to its end or to its pause for a person.
	Wait(ctx context.Context, userID, runID string, after int64, each func(orchestrator.Event) error) (orchestrator.Waited, error)
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	GetRun(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	ListRuns(ctx context.Context, f orchestrator.RunFilter) ([]*orchestrator.Run, error)
	// Approvals and Decide serve input-required tasks (input.go).
	Approvals(ctx context.Context, userID, runID string) ([]*orchestrator.Approval, error)
	Decide(ctx context.Context, userID, runID, approvalID string, d orchestrator.ApprovalDecision) (*orchestrator.Approval, error)
}

var _ Backend = (*orchestrator.Orchestrator)(nil)

// RunCounter is an optional [Backend] method that makes ListTasks'
// totalSize exact; *orchestrator.Orchestrator has it (it fails when its
// store cannot count, and totalSize falls back to a lower bound).
type RunCounter interface {
	CountRuns(ctx context.Context, f orchestrator.RunFilter) (int, error)
}

var _ RunCounter = (*orchestrator.Orchestrator)(nil)

// Options configure the handler. Zero values mean the defaults stated.
type Options struct {
	// Identify returns the user a request acts for, given the user it
	// names (requested: its tenant's, or its X-Wunder-User header; ""
	// when none, see tenant.go). Default: requested when set, else
	// DefaultUser. The gateway's authentication has run before (the
	// handler is mounted behind it). "" means every user (an admin
	// naming none): lookups and listings reach every user's tasks, and
	// what a call creates belongs to DefaultUser (a new task) or to the
	// task's owner (a push config).
	Identify func(r *http.Request, requested string) (string, error)
	// Tenants maps an A2A 1.0 tenant to the user it names (tenant.go);
	// empty: a tenant is a user id.
	Tenants map[string]string
	// DefaultUser is the user of A2A callers that name none. Default "a2a".
	DefaultUser string
	// ToolNames are offered to runs started over A2A.
	ToolNames []string
	// ModelName selects the model; "" = the default model.
	ModelName string
	// ToolActivity sends tool calls as working status messages. Default
	// off: callers see the answer only.
	ToolActivity bool
	// ExtendedCard returns the authenticated extended card of a user in
	// the shape of the call's version; nil = not configured (-32007).
	ExtendedCard func(r *http.Request, userID string, v w.Version) (json.RawMessage, error)
	// Push enables push notifications; nil = not supported (-32003).
	Push *PushOptions
	// Heartbeat is the idle interval of SSE comment lines. Default 15s.
	Heartbeat time.Duration
	// Path is where JSON-RPC is served, and the namespace the handler
	// owns (routes.go). Default DefaultPath.
	Path string
	// RESTPath is where the HTTP+JSON binding is served (rest.go); the
	// handler must be mounted there too. Default DefaultRESTPath.
	RESTPath string
	// MaxBodyBytes caps a request. Default 1 MiB (the gateway may cap lower).
	// Messages with files need more (attachments.max_request_bytes).
	MaxBodyBytes int64
	// Attachments converts the files of a message (inline file parts) as
	// POST /wunder converts its attachments; nil = doc2md's default limits.
	Attachments *doc2md.Converter
	// Files saves the files and data parts of a message that starts a
	// task in the caller's workspace, and fetches file parts given by URL
	// (files.go); nil = neither: files reach the model converted only, a
	// URL as text.
	Files *FileOptions
	// PassThrough publishes peer agents at {Path}/{peer}
	// (passthrough.go); nil = none.
	PassThrough *PassThroughOptions
	// PublicURL is the server's public base URL (server.public_url): the
	// download links of file artifacts too large to carry inline are
	// absolute under it; "" = relative to the server.
	PublicURL string
	Logger    *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.DefaultUser == "" {
		o.DefaultUser = "a2a"
	}
	if o.Path == "" {
		o.Path = DefaultPath
	}
	o.Path = strings.TrimSuffix(o.Path, "/")
	if o.RESTPath == "" {
		o.RESTPath = DefaultRESTPath
	}
	o.RESTPath = strings.TrimSuffix(o.RESTPath, "/")
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Handler serves A2A JSON-RPC (1.0 and 0.3) on one endpoint and the 1.0
// HTTP+JSON binding under Options.RESTPath (rest.go).
//
// Goroutines: a request's stream runs on the request's goroutine; push
// delivery runs one watcher per task with push configs, owned by the
// handler's WaitGroup and stopped by Close.
type Handler struct {
	b     Backend
	opts  Options
	push  *pusher
	files *files       // nil without Options.Files
	pass  *passThrough // nil: no peer published
	wg    sync.WaitGroup
}

// New returns the A2A handler over b.
func New(b Backend, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	h := &Handler{b: b, opts: o.withDefaults()}
	if h.opts.Push != nil {
		h.push = newPusher(h, *h.opts.Push)
	}
	if h.opts.Files != nil && h.opts.Files.Store != nil {
		h.files = newFiles(*h.opts.Files, h.opts.Logger)
	}
	if h.opts.PassThrough != nil {
		h.pass = newPassThrough(h, *h.opts.PassThrough)
	}
	return h
}

// Close stops push delivery and waits for it.
func (h *Handler) Close() {
	if h.push != nil {
		h.push.close()
	}
	h.wg.Wait()
}

// call is one decoded request.
type call struct {
	v      w.Version
	m      w.Request
	userID string
	r      *http.Request
	// rest is set when the call came through the HTTP+JSON binding
	// (rest.go): results and errors are written in its shape.
	rest bool
	// sink, when set, receives a stream's items (a result or an error)
	// instead of an SSE stream on the response (the gRPC binding, grpc.go).
	sink func(raw json.RawMessage, e *w.Error) error
	// grpc, when set, takes a result or error instead of a response
	// (the gRPC binding).
	grpc *grpcResult
	// a2ui: the request activated the A2UI extension (a2ui.go).
	a2ui bool
}

// reply writes a call's result in its binding's shape.
func (c *call) reply(rw http.ResponseWriter, result any) {
	if c.grpc != nil {
		raw, err := json.Marshal(result)
		if err == nil {
			err = c.grpc.fill(raw)
		}
		if err != nil {
			c.grpc.err, c.grpc.bug = w.NewError(w.V10, w.CodeInternal, "internal error"), err
		}
		return
	}
	if c.rest {
		writeRESTResult(rw, result)
		return
	}
	writeResult(rw, c.m.ID, result)
}

// fail writes a call's error in its binding's shape.
func (c *call) fail(rw http.ResponseWriter, e *w.Error) {
	if c.grpc != nil {
		c.grpc.err = e
		return
	}
	if c.rest {
		writeRESTError(rw, e)
		return
	}
	writeError(rw, c.m.ID, e)
}

// item is the data of one SSE event of a streamed result (raw) or error
// (e): a JSON-RPC response, or, in the HTTP+JSON binding, the bare
// StreamResponse or google.rpc.Status.
func (c *call) item(raw json.RawMessage, e *w.Error) []byte {
	if c.rest {
		if e != nil {
			b, _ := json.Marshal(e.Status())
			return b
		}
		return raw
	}
	b, _ := json.Marshal(w.Response{JSONRPC: "2.0", ID: c.m.ID, Result: raw, Error: e})
	return b
}

// ServeHTTP decodes the envelope, picks the version from the method name
// and the A2A-Version header, and dispatches. Errors are JSON-RPC errors
// with HTTP 200.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if sub, ok := strings.CutPrefix(r.URL.Path, h.opts.RESTPath+"/"); ok {
		h.serveREST(rw, r, sub)
		return
	}
	if h.pass != nil {
		if peer, sub, ok := h.pass.route(r.URL.Path); ok {
			h.pass.serve(rw, r, peer, sub)
			return
		}
	}
	if !h.jsonRPCPath(r.URL.Path) {
		// Nothing else lives under the endpoint: a path that is no
		// binding's is not found, in the shape of a REST error (routes.go).
		writeRESTStatus(rw, http.StatusNotFound, "NOT_FOUND", "no A2A route "+r.Method+" "+r.URL.Path, nil)
		return
	}
	hv := requestVersion(r)
	v, ok := w.ParseVersion(hv)
	ev := v // the shape of errors found before the method is known
	if !ok {
		ev = w.V10
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		writeError(rw, nil, newError(r.Context(), ev, w.ErrInvalidRequest, "A2A JSON-RPC needs POST"))
		return
	}
	if !jsonBody(r) {
		writeError(rw, nil, newError(r.Context(), ev, w.ErrContentTypeNotSupported, contentTypeWanted(r)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		writeError(rw, nil, newError(r.Context(), ev, w.ErrInvalidRequest, "request body too large or unreadable"))
		return
	}
	c := call{r: r}
	if err := json.Unmarshal(body, &c.m); err != nil {
		writeError(rw, nil, newError(r.Context(), ev, w.ErrParse, "parse error: "+err.Error()))
		return
	}
	known := w.Methods10.Has(c.m.Method) || w.Methods03.Has(c.m.Method)
	if c.m.JSONRPC == "2.0" && c.m.Method != "" && !known {
		// The method is checked before the id: an unknown method is
		// -32601 even in a request without an id.
		id := c.m.ID
		if !w.ValidID(id) {
			id = nil
		}
		writeError(rw, id, newError(r.Context(), ev, w.ErrMethodNotFound, "method not found: "+c.m.Method))
		return
	}
	if c.m.JSONRPC == "2.0" && known && len(c.m.ID) == 0 && paramsInvalid(c.m.Method, w.ProtoNames(c.m.Params)) {
		// A request without an id is served no result, but its params
		// are checked first: bad params are -32602 whatever the id.
		writeError(rw, nil, h.toError(r.Context(), ev, errParams("the params of %s are not valid", c.m.Method)))
		return
	}
	if c.m.JSONRPC != "2.0" || !w.ValidID(c.m.ID) || c.m.Method == "" {
		id := c.m.ID
		if !w.ValidID(id) {
			id = nil
		}
		writeError(rw, id, newError(r.Context(), ev, w.ErrInvalidRequest, `invalid request: need jsonrpc "2.0", an id and a method`))
		return
	}
	c.m.Params = w.ProtoNames(c.m.Params)
	if !ok {
		writeError(rw, c.m.ID, newError(r.Context(), w.V10, w.ErrVersionNotSupported, "A2A-Version "+hv+" is not supported; use 1.0 or 0.3"))
		return
	}
	// The method name decides the method set; the header must not contradict it.
	c.v = v
	switch {
	case w.Methods10.Has(c.m.Method):
		c.v = w.V10
	case w.Methods03.Has(c.m.Method):
		c.v = w.V03
	default:
		writeError(rw, c.m.ID, newError(r.Context(), v, w.ErrMethodNotFound, "method not found: "+c.m.Method))
		return
	}
	if hv != "" && c.v != v {
		writeError(rw, c.m.ID, newError(r.Context(), v, w.ErrVersionNotSupported, "method "+c.m.Method+" is not part of A2A "+string(v)))
		return
	}
	if err := h.identify(r, &c); err != nil {
		c.fail(rw, h.toError(r.Context(), c.v, err))
		return
	}
	h.dispatch(rw, r, &c)
}

// actor is the user a call acts as when it creates something (a task, an
// extended card for its catalog): the identified user, or DefaultUser
// when the caller is an admin that named none (c.userID "" reaches every
// user's tasks).
func (h *Handler) actor(c *call) string {
	if c.userID == "" {
		return h.opts.DefaultUser
	}
	return c.userID
}

func (h *Handler) dispatch(rw http.ResponseWriter, r *http.Request, c *call) {
	if rw != nil {
		activate(c, rw.Header())
	}
	ms := w.MethodsOf(c.v)
	ctx := r.Context()
	var result any
	var err error
	switch c.m.Method {
	case ms.Stream:
		h.stream(rw, r, c)
		return
	case ms.Subscribe:
		h.subscribe(rw, r, c)
		return
	case ms.Send:
		result, err = h.send(ctx, c)
	case ms.Get:
		result, err = h.getTask(ctx, c)
	case ms.List:
		if c.v != w.V10 {
			err = errMethod(c.m.Method)
			break
		}
		result, err = h.listTasks(ctx, c)
	case ms.Cancel:
		result, err = h.cancelTask(ctx, c)
	case ms.PushSet, ms.PushGet, ms.PushList, ms.PushDelete:
		result, err = h.pushMethod(ctx, c)
	case ms.ExtendedCard:
		result, err = h.extendedCard(ctx, c)
	}
	if err != nil {
		c.fail(rw, h.toError(ctx, c.v, err))
		return
	}
	c.reply(rw, result)
}

func writeResult(rw http.ResponseWriter, id json.RawMessage, result any) {
	raw, err := json.Marshal(result)
	if err != nil {
		writeError(rw, id, w.NewError(w.V10, w.CodeInternal, "internal error"))
		return
	}
	writeJSON(rw, w.Response{JSONRPC: "2.0", ID: id, Result: raw})
}

func writeError(rw http.ResponseWriter, id json.RawMessage, e *w.Error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	writeJSON(rw, w.Response{JSONRPC: "2.0", ID: id, Error: e})
}

func writeJSON(rw http.ResponseWriter, resp w.Response) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK) // JSON-RPC errors travel with 200 (NOTES.md)
	_ = json.NewEncoder(rw).Encode(resp)
}

// jsonBody reports whether r's body says it is JSON (application/json,
// application/a2a+json or another +json type). A body without a type is
// refused: a web page can send one cross-site without a preflight.
func jsonBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// contentTypeWanted says what jsonBody wants, naming what r sent.
func contentTypeWanted(r *http.Request) string {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		return "content type " + ct + " is not supported: send application/json"
	}
	return "the request has no Content-Type: send application/json"
}

// paramsInvalid reports whether params cannot be the params of method (a
// known method of either set), as the method's own decoder finds.
func paramsInvalid(method string, params json.RawMessage) bool {
	var err error
	for _, ms := range []w.Methods{w.Methods10, w.Methods03} {
		switch method {
		case ms.Send, ms.Stream:
			_, err = w.DecodeSendParams(params)
		case ms.Get, ms.Cancel, ms.Subscribe:
			_, err = w.DecodeTaskParams(params)
		case ms.List:
			_, err = w.DecodeListParams(params)
		case ms.PushSet, ms.PushGet, ms.PushList, ms.PushDelete:
			_, err = w.DecodePushParams(params)
		default:
			continue
		}
		return err != nil
	}
	return false
}
