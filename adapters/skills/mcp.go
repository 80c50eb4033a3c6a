package skills

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Connector connects the MCP servers skills declare. cmd/wunder implements
// it over adapters/mcptools (adapters do not import each other).
type Connector interface {
	// Check reports why server is not a usable mcp.servers[] entry (nil
	// when it is); uploads are refused with its error.
	Check(server MCPServer) error
	// Connect connects server and lists its tools, named server@tool;
	// release disconnects it (stopping a stdio server). The connection
	// outlives ctx, which bounds only the connect.
	Connect(ctx context.Context, server MCPServer) (tools []orchestrator.Tool, release func(), err error)
}

// Defaults of the MCP pool.
const (
	// DefaultMCPIdle is how long a skill's MCP server stays connected
	// after its skill was last in a prompt or one of its tools last ran.
	DefaultMCPIdle = 5 * time.Minute
	// mcpRetry is how long a failed connect is remembered (runs in that
	// window get the error without dialling).
	mcpRetry = 30 * time.Second
)

// mcpPool holds the connections of loaded skills' MCP servers, ref-counted
// (caddy's usagepool): a prompt that carries a loaded skill touches its
// servers, a call of one of their tools holds a reference while it runs,
// and the janitor (Set.janitor) closes a connection nobody holds that
// was not touched for idle.
type mcpPool struct {
	conn Connector
	idle time.Duration
	log  *slog.Logger

	// mu guards entries, shut and each entry's fields but ready.
	mu      sync.Mutex
	entries map[string]*mcpEntry
	shut    bool // closed: connects that end now are released at once
}

type mcpEntry struct {
	ready    chan struct{} // closed when the connect has ended
	tools    []orchestrator.Tool
	release  func()
	err      error
	failedAt time.Time
	refs     int
	lastUsed time.Time
	closed   bool
}

func newMCPPool(conn Connector, idle time.Duration, log *slog.Logger) *mcpPool {
	return &mcpPool{conn: conn, idle: idle, log: log, entries: map[string]*mcpEntry{}}
}

// mcpKey names one server of one version of one skill.
func mcpKey(sk *Skill, server string) string {
	return sk.Owner + "\x00" + sk.Name + "\x00" + sk.Hash + "\x00" + sk.Dir + "\x00" + server
}

// acquire returns the tools of sk's server, connecting it when it is not
// connected (concurrent callers share one connect).
func (p *mcpPool) acquire(ctx context.Context, sk *Skill, srv MCPServer) ([]orchestrator.Tool, error) {
	key := mcpKey(sk, srv.Name)
	p.mu.Lock()
	e := p.entries[key]
	if e != nil && e.err != nil && time.Since(e.failedAt) >= mcpRetry {
		delete(p.entries, key)
		e = nil
	}
	if p.shut {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	if e == nil {
		e = &mcpEntry{ready: make(chan struct{}), lastUsed: time.Now()}
		p.entries[key] = e
		p.mu.Unlock()
		srv.Owner = sk.Owner
		tools, release, err := p.conn.Connect(ctx, srv)
		p.mu.Lock()
		if err == nil && p.shut {
			// The pool closed during the connect.
			p.mu.Unlock()
			release()
			p.mu.Lock()
			err = errPoolClosed
		}
		if err != nil {
			e.err, e.failedAt = err, time.Now()
			if ctx.Err() != nil {
				delete(p.entries, key) // the run went away; the next one tries again
			}
			p.log.Warn("skill MCP server not connected", "skill", sk.Canonical(), "server", srv.Name, "err", err)
		} else {
			e.release = release
			for _, t := range tools {
				e.tools = append(e.tools, &pooledTool{pool: p, e: e, inner: t})
			}
		}
		close(e.ready)
	}
	p.mu.Unlock()
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	e.lastUsed = time.Now()
	return e.tools, nil
}

// sweep closes idle connections and forgets old failures.
func (p *mcpPool) sweep(now time.Time) {
	var release []func()
	p.mu.Lock()
	for k, e := range p.entries {
		select {
		case <-e.ready:
		default:
			continue
		}
		switch {
		case e.err != nil && now.Sub(e.failedAt) >= mcpRetry:
			delete(p.entries, k)
		case e.err == nil && e.refs == 0 && now.Sub(e.lastUsed) >= p.idle:
			delete(p.entries, k)
			e.closed = true
			release = append(release, e.release)
		}
	}
	p.mu.Unlock()
	for _, r := range release {
		r()
	}
}

// close disconnects everything; calls in flight get an error result.
func (p *mcpPool) close() {
	var release []func()
	p.mu.Lock()
	p.shut = true
	for k, e := range p.entries {
		delete(p.entries, k)
		select {
		case <-e.ready:
		default:
			continue // its connect is under way; acquire releases it when it ends
		}
		if e.err == nil && !e.closed {
			e.closed = true
			release = append(release, e.release)
		}
	}
	p.mu.Unlock()
	for _, r := range release {
		r()
	}
}

// pooledTool is a tool of a skill's MCP server; a call holds the
// connection.
type pooledTool struct {
	pool  *mcpPool
	e     *mcpEntry
	inner orchestrator.Tool
}

func (t *pooledTool) Spec() orchestrator.ToolSpec { return t.inner.Spec() }

func (t *pooledTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	p := t.pool
	p.mu.Lock()
	if t.e.closed {
		p.mu.Unlock()
		return orchestrator.ErrorResult(fmt.Sprintf("%s: the skill's MCP server was disconnected (idle); load the skill again", t.inner.Spec().Name)), nil
	}
	t.e.refs++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		t.e.refs--
		t.e.lastUsed = time.Now()
		p.mu.Unlock()
	}()
	return t.inner.Call(ctx, inv)
}

var errPoolClosed = errors.New("shutting down")

// errNoConnector explains why a skill's MCP servers are not connected.
var errNoConnector = errors.New("this wunder connects no MCP servers of skills")
