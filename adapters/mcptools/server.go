package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// server is one upstream: its cached tools and its lazily dialled session.
type server struct {
	set *Set
	cfg ServerConfig

	// connMu serialises dialling, so concurrent first calls share one
	// connect. It is never held by tools() or by a call in flight.
	connMu sync.Mutex

	// mu guards the fields below; never held across I/O.
	mu       sync.Mutex
	sess     *mcp.ClientSession
	closeFn  func() // stops the transport's process group, if any
	failures int
	nextTry  time.Time
	lastErr  error
	list     []*mcp.Tool
	calls    map[string]func(stream, delta string) // progress token -> Output
	closed   bool
	listErr  error // of the last tools/list: nil once one succeeded since
	tokenSeq atomic.Int64

	// refused, when set, is why this stdio server is never started (the
	// depth guard, stdio.go); its calls and its discovery fail with it.
	refused error
	// started is set by Set.Start: from then on a first discovery is under
	// way or done, so WaitTool has something to wait for.
	started atomic.Bool
	// settled is closed when the first discovery has finished, succeeded
	// or failed, or was given up (ready.go); settleErr is its error.
	settled    chan struct{}
	settleOnce sync.Once
	settleErr  error

	// inflight counts calls and refreshes under way; retired is set when
	// Set.Reconfigure removed or replaced the server (see retire).
	inflight atomic.Int64
	retired  atomic.Bool
}

func newServer(s *Set, cfg ServerConfig) *server {
	sv := &server{set: s, cfg: cfg, calls: map[string]func(string, string){}, settled: make(chan struct{})}
	if cfg.Transport == TransportStdio && s.opts.StdioDepth >= MaxStdioDepth {
		sv.refused = errStdioRefused(s.opts.StdioDepth)
	}
	return sv
}

// tools returns the server's allowed tools from the in-memory cache.
func (sv *server) tools() []orchestrator.Tool {
	sv.mu.Lock()
	list := sv.list
	sv.mu.Unlock()
	var out []orchestrator.Tool
	for _, t := range list {
		if t != nil && t.Name != "" && allowed(sv.cfg, t.Name) {
			out = append(out, newTool(sv, t))
		}
	}
	return out
}

// loadCache fills the in-memory list from the store.
func (sv *server) loadCache(ctx context.Context) {
	if sv.set.opts.Cache == nil {
		return
	}
	raw, _, err := sv.set.opts.Cache.LoadMCPToolSpecs(ctx, sv.cfg.Name)
	if err != nil {
		if !errors.Is(err, orchestrator.ErrNotFound) {
			sv.set.log.Warn("mcp tool cache not read", "server", sv.cfg.Name, "err", err)
		}
		return
	}
	var list []*mcp.Tool
	if err := json.Unmarshal(raw, &list); err != nil {
		sv.set.log.Warn("mcp tool cache unreadable", "server", sv.cfg.Name, "err", err)
		return
	}
	sv.mu.Lock()
	if sv.list == nil {
		sv.list = list
	}
	sv.mu.Unlock()
}

// refresh lists the server's tools and caches them. Its end, success or
// failure, settles the first discovery.
func (sv *server) refresh(ctx context.Context) (err error) {
	defer func() {
		sv.mu.Lock()
		sv.listErr = err
		sv.mu.Unlock()
		sv.settle(err)
	}()
	ctx, cancel := context.WithTimeout(ctx, sv.cfg.Timeout)
	defer cancel()
	cs, err := sv.session(ctx)
	if err != nil {
		return err
	}
	var list []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		list = append(list, t)
	}
	sv.mu.Lock()
	sv.list = list
	sv.mu.Unlock()
	if c := sv.set.opts.Cache; c != nil {
		raw, err := json.Marshal(list)
		if err == nil {
			err = c.SaveMCPToolSpecs(ctx, sv.cfg.Name, raw)
		}
		if err != nil {
			sv.set.log.Warn("mcp tool cache not written", "server", sv.cfg.Name, "err", err)
		}
	}
	return nil
}

// session returns the live session, dialling it if there is none. Within
// the backoff window after a failed dial it fails at once.
func (sv *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	if sv.refused != nil {
		return nil, sv.refused
	}
	if cs, err := sv.current(); cs != nil || err != nil {
		return cs, err
	}
	sv.connMu.Lock()
	defer sv.connMu.Unlock()
	if cs, err := sv.current(); cs != nil || err != nil {
		return cs, err
	}
	cs, closeFn, err := sv.dial(ctx)
	sv.mu.Lock()
	if err != nil {
		sv.failures++
		backoff := min(sv.set.opts.MinBackoff<<min(sv.failures-1, 16), sv.set.opts.MaxBackoff)
		sv.nextTry = time.Now().Add(backoff)
		sv.lastErr = err
		sv.mu.Unlock()
		sv.set.log.Warn("mcp server not connected", "server", sv.cfg.Name, "retry_in", backoff, "err", err)
		return nil, err
	}
	if sv.closed {
		// The Set closed during the dial: release the session here, outside
		// the lock (a stdio child takes a while to stop).
		sv.mu.Unlock()
		_ = cs.Close()
		closeFn()
		return nil, errShuttingDown
	}
	sv.failures, sv.lastErr, sv.sess, sv.closeFn = 0, nil, cs, closeFn
	sv.set.wg.Add(1)
	sv.mu.Unlock()
	go sv.watch(cs, closeFn)
	return cs, nil
}

// errShuttingDown answers calls once the Set is closing.
var errShuttingDown = errors.New("shutting down")

// current returns the live session, or the error of the backoff window, or
// neither (dial now).
func (sv *server) current() (*mcp.ClientSession, error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	switch {
	case sv.closed:
		return nil, errShuttingDown
	case sv.sess != nil:
		return sv.sess, nil
	case sv.failures > 0 && time.Now().Before(sv.nextTry):
		return nil, fmt.Errorf("unavailable (retry in %s): %w", time.Until(sv.nextTry).Round(time.Millisecond), sv.lastErr)
	}
	return nil, nil
}

// watch forgets the session once it ends, so the next call dials again.
func (sv *server) watch(cs *mcp.ClientSession, closeFn func()) {
	defer sv.set.wg.Done()
	err := cs.Wait()
	closeFn()
	sv.mu.Lock()
	if sv.sess == cs {
		sv.sess = nil
		if !sv.closed {
			sv.set.log.Warn("mcp session ended", "server", sv.cfg.Name, "err", err)
		}
	}
	sv.mu.Unlock()
}

func (sv *server) dial(ctx context.Context) (*mcp.ClientSession, func(), error) {
	copts := &mcp.ClientOptions{
		Logger: sv.set.opts.Logger,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			sv.set.goRefresh(sv, "tools/list_changed")
		},
		ProgressNotificationHandler: sv.onProgress,
	}
	if !sv.set.opts.DropServerLogs {
		//lint:ignore SA1019 servers still log during the deprecation window (SEP-2577); their lines become the call's output
		copts.LoggingMessageHandler = sv.onLog
	}
	if sv.set.opts.Elicitation == ElicitDefaults {
		copts.ElicitationHandler = elicitWithDefaults // also advertises form elicitation
	}
	return sv.connect(ctx, copts)
}

// connect opens a session with copts. The session
// lives until it is closed or the Set closes; the dial itself is bounded by
// ctx and the server's timeout. The returned func releases what the session
// leaves behind (its context, a stdio child's process group).
func (sv *server) connect(ctx context.Context, copts *mcp.ClientOptions) (*mcp.ClientSession, func(), error) {
	o := sv.set.opts
	c := mcp.NewClient(&mcp.Implementation{Name: o.ClientName, Version: o.ClientVersion}, copts)
	t, closeFn, err := sv.transport()
	if err != nil {
		return nil, nil, err
	}
	// The SSE transport ties its event stream to the Connect context, so
	// that context lives as long as the session (until Close); the dial
	// itself is bounded by the caller's context and the server's timeout.
	life, cancel := context.WithCancel(sv.set.baseCtx)
	stopCall := context.AfterFunc(ctx, cancel)
	timer := time.AfterFunc(sv.cfg.Timeout, cancel)
	cs, err := c.Connect(life, t, nil)
	timer.Stop()
	stopCall()
	if err == nil && life.Err() != nil {
		_ = cs.Close()
		err = life.Err()
	}
	if err != nil {
		cancel()
		closeFn()
		return nil, nil, err
	}
	release := closeFn
	closeFn = func() { cancel(); release() }
	return cs, closeFn, nil
}

// connectRaw opens a connection for messages forwarded as they are,
// bounded and kept alive as connect's sessions are; the returned func
// releases it.
func (sv *server) connectRaw(ctx context.Context) (mcp.Connection, func(), error) {
	if sv.cfg.Transport == TransportStreamableHTTP {
		return nil, nil, errors.New("a streamable-http server is reached over HTTPEndpoint")
	}
	t, closeFn, err := sv.transport()
	if err != nil {
		return nil, nil, err
	}
	life, cancel := context.WithCancel(sv.set.baseCtx)
	stopCall := context.AfterFunc(ctx, cancel)
	timer := time.AfterFunc(sv.cfg.Timeout, cancel)
	conn, err := t.Connect(life)
	timer.Stop()
	stopCall()
	if err == nil && life.Err() != nil {
		_ = conn.Close()
		err = life.Err()
	}
	if err != nil {
		cancel()
		closeFn()
		return nil, nil, err
	}
	return conn, func() { cancel(); closeFn() }, nil
}

func (sv *server) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	token := fmt.Sprint(p.ProgressToken)
	sv.mu.Lock()
	out := sv.calls[token]
	sv.mu.Unlock()
	if out == nil {
		return
	}
	msg := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		msg += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		msg += " " + p.Message
	}
	out("progress", msg+"\n")
}

func (sv *server) onLog(_ context.Context, req *mcp.LoggingMessageRequest) {
	p := req.Params
	data, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		data = string(b)
	}
	line := string(p.Level) + ": " + data + "\n"
	if p.Logger != "" {
		line = "[" + p.Logger + "] " + line
	}
	sv.mu.Lock()
	outs := make([]func(string, string), 0, len(sv.calls))
	for _, o := range sv.calls {
		outs = append(outs, o)
	}
	sv.mu.Unlock()
	for _, o := range outs {
		o("log", line)
	}
}

// track registers a call's Output under a fresh progress token.
func (sv *server) track(out func(stream, delta string)) (token string, untrack func()) {
	token = sv.cfg.Name + "-" + strconv.FormatInt(sv.tokenSeq.Add(1), 10)
	sv.mu.Lock()
	sv.calls[token] = out
	sv.mu.Unlock()
	return token, func() {
		sv.mu.Lock()
		delete(sv.calls, token)
		sv.mu.Unlock()
	}
}

// drop forgets cs if it is still the live session, and closes it.
func (sv *server) drop(cs *mcp.ClientSession) {
	sv.mu.Lock()
	if sv.sess == cs {
		sv.sess = nil
	}
	sv.mu.Unlock()
	_ = cs.Close()
}

// retire marks sv as removed by Set.Reconfigure. Its session closes once
// no call is in flight (now, if none is); a run that still holds its tools
// can call them: the call dials again and the session closes after it.
func (sv *server) retire() {
	sv.retired.Store(true)
	if sv.inflight.Load() == 0 {
		sv.dropSession()
	}
}

// begin and end bracket a use of the session (a call, a refresh).
func (sv *server) begin() { sv.inflight.Add(1) }

func (sv *server) end() {
	if sv.inflight.Add(-1) == 0 && sv.retired.Load() {
		sv.dropSession()
	}
}

// dropSession closes the live session, if any; the next use dials again.
func (sv *server) dropSession() {
	sv.mu.Lock()
	cs, closeFn := sv.sess, sv.closeFn
	sv.sess = nil
	sv.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
		closeFn()
	}
}

// close ends the session and stops the process group.
func (sv *server) close() {
	sv.mu.Lock()
	sv.closed = true
	cs, closeFn := sv.sess, sv.closeFn
	sv.sess = nil
	sv.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
		closeFn()
	}
}
