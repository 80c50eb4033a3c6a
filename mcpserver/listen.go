package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// subscriptions/listen (SEP-2575, protocol 2026-07-28) on /wunder/mcp.
//
// A client that caches tools/list (ttlMs, list.go) learns that the caller's
// catalog changed from a list-changed notification on its listen stream.
// The catalog is per user (a toolset bound to a user, a skill another user
// shares, the tool-access policy, an upstream's tools), so its changes are
// per user too: nothing in the core announces them, and they happen on any
// replica. Each user with a listen stream open on this replica therefore
// has a watcher that reads the catalog as tools/list would answer it every
// Options.ListChangedPoll and compares a digest; a different digest is a
// change. Reading the store this way works on every replica alike, and it
// costs one catalog read per user and poll, whatever the number of that
// user's streams.
//
// go-sdk v1.8.0 does the protocol (the request's checks, the acknowledgement
// first on the stream, the subscription id in each notification's _meta, the
// result when the subscription ends), but it sends list-changed
// notifications only when a server's own feature set changes, to every
// subscriber of that server. So each watched user has a listen server of its
// own, which serves nothing but that user's listen streams, and a change is
// signalled by toggling a marker tool (and, with MCP Apps, a marker
// resource) on it: no client ever lists that server, so the marker is never
// seen; only the notification it causes is.
//
// The older revisions keep tools.listChanged false in their initialize
// result (the notification would come on their session's GET stream, which
// this server has no way to write to): they re-list after ttlMs.

// DefaultListChangedPoll is how often a watched user's catalog is read
// (Options.ListChangedPoll).
const DefaultListChangedPoll = 10 * time.Second

// DefaultMaxListens bounds a user's open subscriptions/listen streams on one
// replica (Options.MaxListens).
const DefaultMaxListens = 8

// listenMarker names the marker tool and resource of a listen server.
const listenMarker = "wunder-catalog-changed"

// listens serves the subscriptions/listen requests of /wunder/mcp.
type listens struct {
	h       *Handler
	handler http.Handler // go-sdk's stateless handler over the users' listen servers
	poll    time.Duration
	max     int
	// ctx ends with Close: every stream then gets its result and ends,
	// so that no listen stream holds a stopping server's shutdown.
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	users map[string]*userListen
}

// userListen is one watched user: its listen server and its streams.
type userListen struct {
	srv     *mcp.Server
	streams int
	stop    context.CancelFunc
	marked  bool // whether the marker is on srv now
	apps    bool // whether srv declares resources (MCP Apps)
}

// listenServerKey carries a request's listen server to the handler's
// getServer.
type listenServerKey struct{}

func newListens(h *Handler) *listens {
	l := &listens{h: h, poll: h.opts.ListChangedPoll, max: h.opts.MaxListens, users: map[string]*userListen{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.handler = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := r.Context().Value(listenServerKey{}).(*mcp.Server)
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true, Logger: h.opts.Logger, MaxRequestBodyBytes: h.opts.MaxBodyBytes,
		DisableLocalhostProtection: h.opts.HostsChecked})
	return l
}

// offered reports whether /wunder/mcp announces list changes: with a
// catalog (without one the list is wunder@run and wunder@approve, which
// never change) and a poll.
func (h *Handler) listChangesOffered() bool {
	return h.opts.Catalog != nil && h.opts.ListChangedPoll > 0
}

// route sends a sessionless subscriptions/listen (by its Mcp-Method header,
// which 2026-07-28 requires; go-sdk answers one without it) to the users'
// listen servers, and anything else to next.
func (l *listens) route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get(headerSession) == "" && r.Header.Get(headerMethod) == "subscriptions/listen" &&
			r.Header.Get(headerProtocol) >= revisionSessionless {
			l.serve(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serve holds one listen stream open for its caller.
func (l *listens) serve(w http.ResponseWriter, r *http.Request) {
	user := l.h.opts.UserID
	if p, ok := orchestrator.PrincipalFrom(r.Context()); ok && p.UserID != "" {
		user = p.UserID
	}
	u, err := l.acquire(r.Context(), user)
	if err != nil {
		writeRPCError(w, http.StatusTooManyRequests, l.requestID(r), err.Error())
		return
	}
	defer l.release(user, u)
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), listenServerKey{}, u.srv))
	defer cancel()
	defer context.AfterFunc(l.ctx, cancel)()
	l.handler.ServeHTTP(w, r.WithContext(ctx))
}

// acquire counts one more stream of user, making its watcher on the first:
// the catalog's digest read then is what a change is measured from. The
// read is made outside the lock (an upstream may be slow); of two first
// streams racing, one's digest is kept.
func (l *listens) acquire(ctx context.Context, user string) (*userListen, error) {
	l.mu.Lock()
	u := l.users[user]
	l.mu.Unlock()
	var base string
	if u == nil {
		var err error
		if base, err = l.h.catalogDigest(ctx, user); err != nil {
			l.h.opts.Logger.Warn("subscriptions/listen: reading the catalog", "user", user, "err", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ctx.Err() != nil {
		return nil, fmt.Errorf("subscriptions/listen: the server is shutting down")
	}
	if u = l.users[user]; u == nil {
		u = &userListen{apps: l.h.appsOffered()}
		caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
		if u.apps {
			caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
		}
		u.srv = mcp.NewServer(&mcp.Implementation{Name: "wunder", Version: l.h.opts.Version},
			&mcp.ServerOptions{Logger: l.h.opts.Logger, Capabilities: caps})
		wctx, stop := context.WithCancel(l.ctx)
		u.stop = stop
		l.users[user] = u
		go l.watch(wctx, user, u, base)
	}
	if u.streams >= l.max {
		return nil, fmt.Errorf("subscriptions/listen: user %q has %d listen streams open on this server, the most it allows (mcp.server.max_listens)", user, l.max)
	}
	u.streams++
	return u, nil
}

// release counts one stream fewer; the last one stops the watcher.
func (l *listens) release(user string, u *userListen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u.streams--
	if u.streams == 0 && l.users[user] == u {
		u.stop()
		delete(l.users, user)
	}
}

// watch reads user's catalog every poll until ctx ends, and signals u's
// streams when its digest changes. A failed read is logged and skipped: the
// next one compares with the last digest read.
func (l *listens) watch(ctx context.Context, user string, u *userListen, last string) {
	t := time.NewTicker(l.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		d, err := l.h.catalogDigest(ctx, user)
		if err != nil {
			if ctx.Err() == nil {
				l.h.opts.Logger.Warn("subscriptions/listen: reading the catalog", "user", user, "err", err)
			}
			continue
		}
		if d != last && last != "" {
			l.signal(u)
		}
		last = d
	}
}

// signal toggles u's markers, which makes go-sdk notify each of u's
// streams that subscribed (tools, and resources with MCP Apps).
func (l *listens) signal(u *userListen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u.marked {
		u.srv.RemoveTools(listenMarker)
		if u.apps {
			u.srv.RemoveResources("wunder:" + listenMarker)
		}
	} else {
		u.srv.AddTool(&mcp.Tool{Name: listenMarker, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		if u.apps {
			u.srv.AddResource(&mcp.Resource{URI: "wunder:" + listenMarker, Name: listenMarker},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{}, nil
				})
		}
	}
	u.marked = !u.marked
}

// close ends every listen stream with its result and stops the watchers.
func (l *listens) close() { l.cancel() }

// streams is how many listen streams user has open on this replica.
func (l *listens) streams(user string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.users[user]; u != nil {
		return u.streams
	}
	return 0
}

// catalogDigest is a digest of what tools/list answers user (our tools,
// then the catalog, every field a client may cache) and, with MCP Apps, of
// the tools' ui:// resources, which are named in the tools' _meta.
func (h *Handler) catalogDigest(ctx context.Context, user string) (string, error) {
	tools, err := h.catalogTools(ctx, user, "en")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

// sessionListenMiddleware refuses subscriptions/listen on a session as a
// method the session's revision lacks (-32601, which go-sdk words "method
// not found"): the method is 2026-07-28's, a revision without sessions
// (route serves it there), and a session's server is never told of the
// catalog's changes, which is why its initialize says tools.listChanged
// false. go-sdk would acknowledge the listen with the list changes its
// server declares, a promise nothing keeps.
func sessionListenMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, _ := req.GetSession().(*mcp.ServerSession); method == "subscriptions/listen" && ss != nil && ss.ID() != "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return next(ctx, method, req)
	}
}

// withoutListChanged is the initialize result of a session-based revision:
// its tools and resources do not announce list changes (see above).
func withoutListChanged(res mcp.Result) mcp.Result {
	ir, ok := res.(*mcp.InitializeResult)
	if !ok || ir == nil || ir.Capabilities == nil {
		return res
	}
	c := *ir.Capabilities
	if c.Tools != nil {
		t := *c.Tools
		t.ListChanged = false
		c.Tools = &t
	}
	if c.Resources != nil {
		r := *c.Resources
		r.ListChanged = false
		c.Resources = &r
	}
	out := *ir
	out.Capabilities = &c
	return &out
}

// requestID is the id of r's JSON-RPC request, read from its body for a
// refusal that no JSON-RPC handler writes; nil (null) when it holds none
// that is a string or a number.
func (l *listens) requestID(r *http.Request) json.RawMessage {
	limit := l.h.opts.MaxBodyBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if r.Body == nil || json.NewDecoder(io.LimitReader(r.Body, limit)).Decode(&msg) != nil {
		return nil
	}
	switch id := bytes.TrimSpace(msg.ID); {
	case len(id) == 0, id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9'):
		return nil
	}
	return msg.ID
}

// writeRPCError answers a request that reached no JSON-RPC handler with a
// JSON-RPC error for id (nil: null) and status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32000, "message": msg}})
	_, _ = w.Write(b)
}
