package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// Worker states, as [WorkerInfo.State] reports them.
const (
	StateStarting = "starting"
	StateReady    = "ready"
	StateCrashed  = "crashed"
	StateStopping = "stopping"
	StateStopped  = "stopped"
)

// Worker is one running language server for one (user, root, server) key.
// Get one from [Pool.Acquire]; its methods are safe for concurrent use.
type Worker struct {
	key     Key
	srv     ServerConfig
	t       *transport
	conn    *jsonrpc2.Conn
	timeout time.Duration
	log     *slog.Logger
	started time.Time
	nextID  atomic.Uint64
	// Capabilities is the capabilities object of the server's initialize
	// result, as sent.
	capabilities json.RawMessage
	serverInfo   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	// broken is why the stream broke, if we know better than "closed": bad
	// output (a framing error) or input the server stopped reading.
	broken atomic.Pointer[error]
	// watched is closed when the watcher goroutine has seen the server go.
	watched chan struct{}

	// syncMu serialises [Worker.Sync], so versions reach the server in order.
	syncMu sync.Mutex

	// mu guards the fields below; never held while talking to the server.
	mu    sync.Mutex
	state string
	cause error               // why the worker crashed
	docs  map[string]int      // open documents: URI -> version
	sums  map[string][32]byte // open documents: URI -> SHA-256 of the text sent
	diags map[string]diagEntry
	seq   uint64        // publishDiagnostics received so far
	diagC chan struct{} // closed and replaced on every publish
}

// diagEntry is the last publishDiagnostics of one document.
type diagEntry struct {
	seq     uint64 // the worker's seq when it arrived
	version *int
	diags   []Diagnostic
}

// startWorker starts srv for key and runs the initialize/initialized
// handshake, bounded by ctx.
func startWorker(ctx context.Context, start startFunc, key Key, srv ServerConfig, o *Options) (*Worker, error) {
	t, err := start(ctx, srv, key.Root)
	if err != nil {
		return nil, err
	}
	w := &Worker{
		key: key, srv: srv, t: t, timeout: o.Timeout, log: o.Logger, started: time.Now(),
		watched: make(chan struct{}), state: StateStarting,
		docs: map[string]int{}, sums: map[string][32]byte{}, diags: map[string]diagEntry{}, diagC: make(chan struct{}),
	}
	stream := jsonrpc2.NewBufferedStream(t.rwc, codec{maxBody: o.MaxMessageBytes, failed: &w.broken})
	w.conn = jsonrpc2.NewConn(context.Background(), stream, replyAsync{jsonrpc2.HandlerWithError(w.handle)},
		jsonrpc2.SetLogger(discardLogger{}))
	go w.watch() // owned by the worker: ends when the server or the stream does
	if err := w.initialize(ctx); err != nil {
		_ = w.shutdown(o.ShutdownGrace)
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", ErrTimeout, o.Timeout)
		}
		return nil, fmt.Errorf("lsp: %s: initialize: %w", srv.ID, err)
	}
	w.mu.Lock()
	if w.state == StateStarting {
		w.state = StateReady
	}
	w.mu.Unlock()
	return w, nil
}

// watch marks the worker crashed when the server exits or its stream
// breaks, unless it is being stopped, and kills what is left of it.
func (w *Worker) watch() {
	defer close(w.watched)
	var cause error
	select {
	case <-w.t.done:
		cause = fmt.Errorf("server exited: %v", w.t.exitErr())
	case <-w.conn.DisconnectNotify():
		cause = errors.New("connection to the server closed")
	}
	if e := w.broken.Load(); e != nil {
		// Bad output (or a stalled input) closes the stream, and then the
		// server may exit: that is the cause, whichever was seen first.
		cause = *e
	}
	w.mu.Lock()
	crashed := w.state != StateStopping && w.state != StateStopped
	if crashed {
		w.state, w.cause = StateCrashed, cause
	}
	w.mu.Unlock()
	if crashed {
		w.log.Warn("language server crashed", "server", w.srv.ID, "root", w.key.Root, "cause", cause)
		_ = w.conn.Close()
		_ = w.t.signal(syscall.SIGKILL)
	}
}

// alive reports whether the worker can take requests.
func (w *Worker) alive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == StateReady || w.state == StateStarting
}

// Err returns why the worker crashed, or nil.
func (w *Worker) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cause
}

// Key returns the worker's key.
func (w *Worker) Key() Key { return w.key }

// Server returns the worker's server configuration.
func (w *Worker) Server() ServerConfig { return w.srv }

// Capabilities returns the server's capabilities as it sent them.
func (w *Worker) Capabilities() json.RawMessage { return w.capabilities }

// ServerInfo returns the name and version the server gave, if any.
func (w *Worker) ServerInfo() (name, version string) {
	return w.serverInfo.Name, w.serverInfo.Version
}

// initialize runs the handshake with the capabilities wunder uses.
func (w *Worker) initialize(ctx context.Context) error {
	rootURI := PathToURI(w.key.Root)
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]string{"name": "wunder"},
		"rootUri":    rootURI,
		"rootPath":   w.key.Root,
		"workspaceFolders": []map[string]string{
			{"uri": rootURI, "name": filepath.Base(w.key.Root)},
		},
		"capabilities": clientCapabilities,
	}
	if len(w.srv.InitializationOptions) > 0 {
		params["initializationOptions"] = w.srv.InitializationOptions
	}
	var res struct {
		Capabilities json.RawMessage `json:"capabilities"`
		ServerInfo   *struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if err := w.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	w.capabilities = res.Capabilities
	if res.ServerInfo != nil {
		w.serverInfo.Name, w.serverInfo.Version = res.ServerInfo.Name, res.ServerInfo.Version
		// gopls sends its whole build info as JSON; keep its version.
		var bi struct{ Version string }
		if json.Unmarshal([]byte(res.ServerInfo.Version), &bi) == nil && bi.Version != "" {
			w.serverInfo.Version = bi.Version
		}
	}
	return w.Notify(ctx, "initialized", struct{}{})
}

// clientCapabilities are what wunder tells servers it understands.
var clientCapabilities = map[string]any{
	"general": map[string]any{"positionEncodings": []string{"utf-16"}},
	"textDocument": map[string]any{
		"synchronization":    map[string]any{"didSave": true, "dynamicRegistration": false},
		"publishDiagnostics": map[string]any{"versionSupport": true},
		"definition":         map[string]any{"linkSupport": false},
		"references":         map[string]any{},
		"implementation":     map[string]any{"linkSupport": false},
		"hover":              map[string]any{"contentFormat": []string{"plaintext", "markdown"}},
		"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
		"callHierarchy":      map[string]any{},
	},
	"workspace": map[string]any{
		"symbol":           map[string]any{},
		"workspaceFolders": true,
		"configuration":    true,
	},
	"window": map[string]any{"workDoneProgress": false},
}

// ErrTimeout is returned when a request outlives the pool's timeout.
var ErrTimeout = errors.New("lsp: request timed out")

// Call sends a request and decodes its result into result (nil to drop it).
// It is bounded by ctx and by the pool's timeout; when either ends first,
// the server gets $/cancelRequest for it. A server error is returned as a
// *jsonrpc2.Error.
func (w *Worker) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: w.nextID.Add(1)}
	var waiter jsonrpc2.Waiter
	err := w.send(func() (err error) {
		waiter, err = w.conn.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
		return err
	})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	err = waiter.Wait(cctx, result)
	if err == nil {
		return nil
	}
	if cctx.Err() != nil {
		// The server may still be working: tell it to stop.
		_ = w.Notify(context.WithoutCancel(ctx), "$/cancelRequest", map[string]any{"id": id.Num})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s after %s", ErrTimeout, method, w.timeout)
	}
	return w.connErr(err)
}

// connErr explains a closed connection by the crash behind it.
func (w *Worker) connErr(err error) error {
	if errors.Is(err, jsonrpc2.ErrClosed) {
		<-w.watched // the connection is closed, so the watcher is done or about to be
		if cause := w.Err(); cause != nil {
			return fmt.Errorf("lsp: %s: %w: %v", w.srv.ID, ErrCrashed, cause)
		}
		return fmt.Errorf("lsp: %s: %w", w.srv.ID, ErrCrashed)
	}
	return err
}

// ErrCrashed is returned by calls to a worker whose server went away; the
// pool starts a new one on the next [Pool.Acquire].
var ErrCrashed = errors.New("server crashed")

// Notify sends a notification.
func (w *Worker) Notify(ctx context.Context, method string, params any) error {
	return w.send(func() error { return w.conn.Notify(ctx, method, params) })
}

// send runs write, a write to the server. jsonrpc2's writes ignore ctx, so
// a server that stops reading its input would hold the writer, and every
// writer after it, forever: a write still blocked after the pool's timeout
// breaks the connection, and the worker counts as crashed.
func (w *Worker) send(write func() error) error {
	stall := time.AfterFunc(w.timeout, func() {
		err := fmt.Errorf("server did not read its input for %s", w.timeout)
		w.broken.CompareAndSwap(nil, &err)
		_ = w.conn.Close()
	})
	defer stall.Stop()
	return w.connErr(write())
}

// handle answers the requests and notifications a server sends the client.
func (w *Worker) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil && p.URI != "" {
			w.publish(p)
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": PathToURI(w.key.Root), "name": filepath.Base(w.key.Root)}}, nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability",
		"window/showMessageRequest", "window/showDocument", "workspace/diagnostic/refresh",
		"workspace/semanticTokens/refresh", "workspace/inlayHint/refresh", "workspace/codeLens/refresh":
		return nil, nil
	}
	if req.Notif {
		return nil, nil // window/logMessage, $/progress, telemetry/event, ...
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "wunder does not handle " + req.Method}
}

// replyAsync handles notifications in the connection's read loop, in
// order (diagnostics must not overtake each other), and answers requests in
// a goroutine of their own, so that the read loop never blocks writing to a
// server that is itself blocked writing to us. Each such goroutine ends when
// its reply is written or the connection closes.
type replyAsync struct{ h jsonrpc2.Handler }

func (r replyAsync) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		r.h.Handle(ctx, c, req)
		return
	}
	go r.h.Handle(ctx, c, req)
}

// discardLogger silences jsonrpc2's own log (it writes to stderr by default).
type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
