package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Defaults of [Options].
const (
	DefaultTimeout       = 30 * time.Second
	DefaultIdleTTL       = 10 * time.Minute
	DefaultMaxWorkers    = 8
	DefaultShutdownGrace = 2 * time.Second
	DefaultRetryAfter    = 30 * time.Second
)

// Errors of [Pool.Acquire].
var (
	ErrUnknownServer = errors.New("lsp: unknown server")
	ErrBusy          = errors.New("lsp: every worker is in use")
	ErrClosed        = errors.New("lsp: pool closed")
)

// Options configures a [Pool]. Zero fields mean the documented defaults.
type Options struct {
	// Servers are the servers the pool may start, by ID.
	Servers []ServerConfig
	// Timeout bounds one request, and the start and handshake of a server.
	// Default 30s.
	Timeout time.Duration
	// IdleTTL is how long a worker nobody holds lives on. Default 10m.
	IdleTTL time.Duration
	// MaxWorkers bounds the running workers; when the pool is full the least
	// recently used idle worker is stopped. Default 8.
	MaxWorkers int
	// ShutdownGrace is each step of the bounded shutdown (shutdown/exit,
	// SIGTERM, SIGKILL). Default 2s.
	ShutdownGrace time.Duration
	// MaxMessageBytes bounds one message from a server. Default 64 MiB.
	MaxMessageBytes int
	// RetryAfter is how long a failed start is remembered: Acquire returns
	// its error at once meanwhile. Default 30s.
	RetryAfter time.Duration
	// Logger; default slog.Default().
	Logger *slog.Logger

	// start replaces the subprocess start in tests.
	start startFunc
}

func (o *Options) withDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	d.Servers = slices.Clone(d.Servers)
	if d.Timeout <= 0 {
		d.Timeout = DefaultTimeout
	}
	if d.IdleTTL <= 0 {
		d.IdleTTL = DefaultIdleTTL
	}
	if d.MaxWorkers <= 0 {
		d.MaxWorkers = DefaultMaxWorkers
	}
	if d.ShutdownGrace <= 0 {
		d.ShutdownGrace = DefaultShutdownGrace
	}
	if d.RetryAfter <= 0 {
		d.RetryAfter = DefaultRetryAfter
	}
	if d.MaxMessageBytes <= 0 {
		d.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.start == nil {
		d.start = startProcess
	}
	return d
}

// Key names a worker: one server per user and project root.
type Key struct {
	User   string
	Root   string // absolute, symlinks resolved; see [FindRoot]
	Server string // [ServerConfig.ID]
}

// Pool runs language servers on demand, one [Worker] per [Key], shared by
// the callers that hold it (ref-counted) and stopped when idle.
type Pool struct {
	opts Options
	// wg counts the goroutines the pool owns: starts and shutdowns.
	wg sync.WaitGroup

	// mu guards the fields below.
	mu      sync.Mutex
	entries map[Key]*entry
	closed  bool
}

// entry is one key's slot: a worker starting or running.
type entry struct {
	key      Key
	ready    chan struct{} // closed when w or err is set
	w        *Worker
	err      error
	refs     int
	lastUsed time.Time
	idle     *time.Timer
	restarts int
}

// NewPool returns a pool of the servers in opts (nil means no servers).
func NewPool(opts *Options) *Pool {
	return &Pool{opts: opts.withDefaults(), entries: map[Key]*entry{}}
}

// Servers returns the servers the pool may start.
func (p *Pool) Servers() []ServerConfig { return slices.Clone(p.opts.Servers) }

// Server returns the server with id.
func (p *Pool) Server(id string) (ServerConfig, bool) {
	i := slices.IndexFunc(p.opts.Servers, func(s ServerConfig) bool { return s.ID == id })
	if i < 0 {
		return ServerConfig{}, false
	}
	return p.opts.Servers[i], true
}

// ServerFor returns the first server that handles the file at path.
func (p *Pool) ServerFor(path string) (ServerConfig, bool) {
	for _, s := range p.opts.Servers {
		if s.Handles(path) {
			return s, true
		}
	}
	return ServerConfig{}, false
}

// Acquire returns the worker of key, starting its server if none runs (or
// if the last one crashed), and a release func the caller must call once
// when done with it. Concurrent callers of one key share one start. The
// start is bounded by the pool's timeout; ctx bounds only the wait.
func (p *Pool) Acquire(ctx context.Context, key Key) (*Worker, func(), error) {
	srv, ok := p.Server(key.Server)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownServer, key.Server)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, ErrClosed
	}
	e := p.entries[key]
	restarts := 0
	if e != nil && isClosed(e.ready) && e.err != nil && time.Since(e.lastUsed) < p.opts.RetryAfter {
		// A start failed a moment ago: say so at once rather than make
		// every write wait for another failing start.
		err := e.err
		p.mu.Unlock()
		return nil, nil, err
	}
	if e != nil && isClosed(e.ready) && e.refs == 0 && (e.err != nil || !e.w.alive()) {
		// A failed start or a crashed server: start afresh.
		p.removeLocked(e)
		restarts = e.restarts + 1
		e = nil
	}
	if e == nil {
		if !p.makeRoomLocked() {
			p.mu.Unlock()
			return nil, nil, fmt.Errorf("%w (max_workers %d)", ErrBusy, p.opts.MaxWorkers)
		}
		e = &entry{key: key, ready: make(chan struct{}), restarts: restarts}
		p.entries[key] = e
		p.wg.Add(1)
		go p.start(e, srv)
	}
	e.refs++
	e.lastUsed = time.Now()
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	p.mu.Unlock()

	release := sync.OnceFunc(func() { p.release(e) })
	select {
	case <-e.ready:
	case <-ctx.Done():
		release()
		return nil, nil, ctx.Err()
	}
	if e.err != nil {
		release()
		return nil, nil, e.err
	}
	if !e.w.alive() {
		release()
		return nil, nil, fmt.Errorf("lsp: %s: %w: %v", key.Server, ErrCrashed, e.w.Err())
	}
	return e.w, release, nil
}

// start starts e's server; owned by p.wg.
func (p *Pool) start(e *entry, srv ServerConfig) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Timeout)
	defer cancel()
	w, err := startWorker(ctx, p.opts.start, e.key, srv, &p.opts)
	p.mu.Lock()
	e.w, e.err = w, err
	closed := p.closed
	p.mu.Unlock()
	close(e.ready)
	if err != nil {
		p.opts.Logger.Warn("language server did not start", "server", srv.ID, "root", e.key.Root, "err", err)
		return
	}
	p.opts.Logger.Info("language server started", "server", srv.ID, "root", e.key.Root, "pid", w.PID(),
		"took", time.Since(w.started).Round(time.Millisecond))
	if closed {
		_ = w.shutdown(p.opts.ShutdownGrace)
	}
}

// release drops one reference; the last one arms the idle timer.
func (p *Pool) release(e *entry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.refs--
	e.lastUsed = time.Now()
	if e.refs > 0 || p.closed || p.entries[e.key] != e {
		return
	}
	if e.err != nil {
		return // kept for RetryAfter, so that the failure is answered at once
	}
	e.idle = time.AfterFunc(p.opts.IdleTTL, func() { p.expire(e) })
}

// expire stops e's worker if it is still idle.
func (p *Pool) expire(e *entry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.entries[e.key] != e || e.refs > 0 {
		return
	}
	p.opts.Logger.Info("language server idle, stopping", "server", e.key.Server, "root", e.key.Root)
	p.removeLocked(e)
}

// makeRoomLocked stops the least recently used idle worker if the pool is
// full, and reports whether there is room for one more.
func (p *Pool) makeRoomLocked() bool {
	if len(p.entries) < p.opts.MaxWorkers {
		return true
	}
	var lru *entry
	for _, e := range p.entries {
		if e.refs == 0 && isClosed(e.ready) && (lru == nil || e.lastUsed.Before(lru.lastUsed)) {
			lru = e
		}
	}
	if lru == nil {
		return false
	}
	p.opts.Logger.Info("language server evicted", "server", lru.key.Server, "root", lru.key.Root)
	p.removeLocked(lru)
	return true
}

// removeLocked takes e out of the pool and stops its worker in the
// background (owned by p.wg).
func (p *Pool) removeLocked(e *entry) {
	delete(p.entries, e.key)
	if e.idle != nil {
		e.idle.Stop()
	}
	if e.w == nil {
		return
	}
	w := e.w
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := w.shutdown(p.opts.ShutdownGrace); err != nil {
			p.opts.Logger.Warn("language server did not stop", "server", w.srv.ID, "pid", w.PID(), "err", err)
		}
	}()
}

// Close stops every worker and waits for them, or for ctx.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for _, e := range p.entries {
			if isClosed(e.ready) {
				p.removeLocked(e)
			} else {
				delete(p.entries, e.key) // its start stops it
			}
		}
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("lsp: close: %w", ctx.Err())
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
