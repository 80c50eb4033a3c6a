package mcpserver

//lint:file-ignore SA1019 the pass-through forwards MCP logging, sampling and roots (docs/mcp.md). SEP-2577 deprecates them from protocol 2026-07-28 with no replacement; peers on earlier versions still use them.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// passThrough serves /wunder/mcp/{name}: every new downstream session gets
// its own proxy server and, at initialize, its own upstream session. The
// route is stateful even with Options.Stateless: forwarding needs the
// session.
func (h *Handler) passThrough(name string) http.Handler {
	// template answers the SDK's per-request questions (protocol versions)
	// for requests of existing sessions; it never gets a session itself.
	template := mcp.NewServer(&mcp.Implementation{Name: "wunder/" + name, Version: h.opts.Version}, nil)
	rt := &passRoute{h: h, name: name, sessions: map[string]*proxy{}}
	rt.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if r.Header.Get("Mcp-Session-Id") != "" {
			return template
		}
		return h.newProxy(rt)
	}, &mcp.StreamableHTTPOptions{Logger: h.opts.Logger, DisableLocalhostProtection: h.opts.HostsChecked}) // always stateful: a downstream session owns an upstream one
	return rt
}

// proxy bridges one downstream session to one upstream session.
type proxy struct {
	h      *Handler
	name   string
	route  *passRoute
	server *mcp.Server
	// raw is the upstream session's HTTP side for the raw path
	// (passthrough_raw.go); nil = everything goes through the SDK. Set
	// before the session is added to route.
	raw *rawUpstream
	// user is the principal's user the session was opened with: the one
	// the policy decides for (passthrough_policy.go). Set at initialize.
	user string

	// mu guards the fields below.
	mu       sync.Mutex
	up       *mcp.ClientSession
	ss       *mcp.ServerSession
	inflight []context.Context       // downstream request contexts, oldest first
	byToken  map[any]context.Context // progress token -> downstream request context
}

func (h *Handler) newProxy(rt *passRoute) *mcp.Server {
	p := &proxy{h: h, name: rt.name, route: rt, byToken: map[any]context.Context{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "wunder/" + rt.name, Version: h.opts.Version}, &mcp.ServerOptions{
		Logger:       h.opts.Logger,
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
		// The upstream keeps the subscriptions; the SDK only needs to
		// accept the methods after they were forwarded.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddReceivingMiddleware(p.middleware)
	s.AddSendingMiddleware(unvalidatedElicit)
	p.server = s
	return s
}

func (p *proxy) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return p.initialize(ctx, next, req)
		}
		p.mu.Lock()
		up := p.up
		p.mu.Unlock()
		if up == nil || !forwarded[method] {
			return next(ctx, method, req)
		}
		token, err := progressToken(req.GetParams())
		if err != nil {
			return nil, err
		}
		release := p.track(ctx, token)
		defer release()
		if err := p.single(ctx, method, req.GetParams()); err != nil {
			return nil, err // the policy hides it (passthrough_policy.go)
		}
		switch method {
		case "tools/list":
			res, err := up.ListTools(ctx, req.GetParams().(*mcp.ListToolsParams))
			if err != nil {
				return nil, err
			}
			return p.filter(ctx, res), nil
		case "tools/call":
			return p.callTool(ctx, up, req.GetParams().(*mcp.CallToolParamsRaw))
		case "resources/list":
			res, err := up.ListResources(ctx, req.GetParams().(*mcp.ListResourcesParams))
			if err != nil {
				return nil, err
			}
			return p.filter(ctx, res), nil
		case "resources/templates/list":
			res, err := up.ListResourceTemplates(ctx, req.GetParams().(*mcp.ListResourceTemplatesParams))
			if err != nil {
				return nil, err
			}
			return p.filter(ctx, res), nil
		case "resources/read":
			return up.ReadResource(ctx, req.GetParams().(*mcp.ReadResourceParams))
		case "resources/subscribe":
			if err := up.Subscribe(ctx, req.GetParams().(*mcp.SubscribeParams)); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		case "resources/unsubscribe":
			if err := up.Unsubscribe(ctx, req.GetParams().(*mcp.UnsubscribeParams)); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		case "prompts/list":
			res, err := up.ListPrompts(ctx, req.GetParams().(*mcp.ListPromptsParams))
			if err != nil {
				return nil, err
			}
			return p.filter(ctx, res), nil
		case "prompts/get":
			return up.GetPrompt(ctx, req.GetParams().(*mcp.GetPromptParams))
		case "completion/complete":
			return up.Complete(ctx, req.GetParams().(*mcp.CompleteParams))
		case "logging/setLevel":
			// Both sides keep the level: the SDK filters what we forward.
			if err := up.SetLoggingLevel(ctx, req.GetParams().(*mcp.SetLoggingLevelParams)); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// forwarded are the methods answered by the upstream session.
var forwarded = map[string]bool{
	"tools/list": true, "tools/call": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "resources/subscribe": true, "resources/unsubscribe": true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true, "logging/setLevel": true,
}

// initialize dials the upstream with the downstream client's capabilities,
// lets the SDK initialize the downstream session, and answers with the
// upstream's capabilities, identity and instructions.
func (p *proxy) initialize(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	params, _ := req.GetParams().(*mcp.InitializeParams)
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if params == nil || ss == nil {
		return next(ctx, "initialize", req)
	}
	opts := &mcp.ClientOptions{
		Logger:                      p.h.opts.Logger,
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: p.onProgress,
		LoggingMessageHandler:       p.onLog,
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			_ = p.server.ResourceUpdated(ctx, req.Params)
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	p.listChangedOptions(opts)
	opts.Capabilities.RootsV2 = rootsCapability(params.Capabilities)
	if c := params.Capabilities; c != nil {
		if c.Sampling != nil {
			opts.Capabilities.Sampling = c.Sampling
			opts.CreateMessageHandler = p.onCreateMessage
		}
		if c.Elicitation != nil {
			opts.Capabilities.Elicitation = c.Elicitation
			opts.ElicitationHandler = p.onElicit
		}
	}
	p.user = p.h.userOf(req.GetExtra())
	up, err := p.h.opts.Upstreams.Connect(ctx, p.name, opts, p.rawElicit, p.rawRoots)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("upstream %s is unavailable: %v", p.name, err)}
	}
	res, err := next(ctx, "initialize", req)
	if err != nil {
		_ = up.Close()
		return nil, err
	}
	ir, _ := res.(*mcp.InitializeResult)
	if ir != nil {
		if uir := up.InitializeResult(); uir != nil {
			ir.Capabilities, ir.ServerInfo, ir.Instructions = uir.Capabilities, uir.ServerInfo, uir.Instructions
		}
	}
	p.mu.Lock()
	p.up, p.ss = up, ss
	p.mu.Unlock()
	p.h.proxiesMu.Lock()
	if p.h.closed {
		p.h.proxiesMu.Unlock()
		_ = up.Close()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "wunder is shutting down"}
	}
	p.h.proxies[p] = true
	p.h.wg.Add(1)
	p.h.proxiesMu.Unlock()
	sid := ss.ID()
	if ir != nil && sid != "" {
		if p.raw = p.rawFor(up, ir.ProtocolVersion, req.GetExtra()); p.raw != nil {
			p.route.add(sid, p)
		}
	}
	go func() {
		defer p.h.wg.Done()
		_ = ss.Wait()
		if p.raw != nil {
			p.route.remove(sid)
			p.raw.close()
		}
		_ = up.Close()
		p.h.proxiesMu.Lock()
		delete(p.h.proxies, p)
		p.h.proxiesMu.Unlock()
	}()
	return res, nil
}

// track records a downstream request's context so upstream messages that
// belong to it travel on its stream.
func (p *proxy) track(ctx context.Context, token any) func() {
	p.mu.Lock()
	p.inflight = append(p.inflight, ctx)
	if token != nil {
		p.byToken[token] = ctx
	}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for i, c := range p.inflight {
			if c == ctx {
				p.inflight = append(p.inflight[:i], p.inflight[i+1:]...)
				break
			}
		}
		if token != nil {
			delete(p.byToken, token)
		}
	}
}

// target is the downstream session and the context to send on: the request
// with that progress token, else the newest request in flight, else the
// session's standalone stream.
func (p *proxy) target(token any) (*mcp.ServerSession, context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if validToken(token) {
		if c, ok := p.byToken[token]; ok {
			return p.ss, c
		}
	}
	if n := len(p.inflight); n > 0 {
		return p.ss, p.inflight[n-1]
	}
	return p.ss, context.Background()
}

// progressToken is the request's progress token, nil when it has none. A
// token that is neither a string nor a number (the spec's types, and the
// only ones that can key byToken) is an invalid-params error.
func progressToken(params mcp.Params) (any, error) {
	pp, ok := params.(interface{ GetProgressToken() any })
	if !ok || reflect.ValueOf(params).IsNil() {
		return nil, nil
	}
	token := pp.GetProgressToken()
	if token != nil && !validToken(token) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "progress token must be a string or a number"}
	}
	return token, nil
}

// validToken reports whether token is a progress token of the spec's types,
// as decoded from JSON or set by the SDK.
func validToken(token any) bool {
	switch token.(type) {
	case string, float64, int, int32, int64:
		return true
	}
	return false
}

var errNoSession = errors.New("no downstream session")

func (p *proxy) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if ss, ctx := p.target(req.Params.ProgressToken); ss != nil {
		_ = ss.NotifyProgress(ctx, req.Params)
	}
}

func (p *proxy) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	if ss, ctx := p.target(nil); ss != nil {
		_ = ss.Log(ctx, req.Params)
	}
}

func (p *proxy) onCreateMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ss, dctx := p.target(nil)
	if ss == nil {
		return nil, errNoSession
	}
	dctx, cancel := linked(dctx, ctx)
	defer cancel()
	return ss.CreateMessage(dctx, req.Params)
}

func (p *proxy) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	ss, dctx := p.target(nil)
	if ss == nil {
		return nil, errNoSession
	}
	dctx, cancel := linked(dctx, ctx)
	defer cancel()
	return ss.Elicit(dctx, req.Params)
}

// rawElicit hands an upstream's elicitation/create to the downstream client
// before the SDK client validates its schema: a gateway forwards what the
// spec allows even where the SDK is stricter (SEP-1330 titled multi-select).
func (p *proxy) rawElicit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if er, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" && er.Params != nil {
			return p.onElicit(ctx, er)
		}
		return next(ctx, method, req)
	}
}

// unvalidatedElicit lets a forwarded elicitation's answer through unchanged:
// once the downstream client has answered, the schema is cleared from the
// (proxy-owned) params, so ServerSession.Elicit neither validates the
// answer against it nor fills in defaults — the upstream does that itself.
func unvalidatedElicit(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ep, ok := req.GetParams().(*mcp.ElicitParams); ok && method == "elicitation/create" && ep != nil {
			ep.RequestedSchema = nil
		}
		return res, err
	}
}

// linked returns a context with a's values that is also cancelled with b.
func linked(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
