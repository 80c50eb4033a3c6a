package mcptools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/proc"
)

// StdioDepthEnv names the variable wunder sets, on purpose and alone among
// its WUNDER_* variables, in the environment of every MCP stdio server it
// starts: the depth of that child in a chain of stdio servers (1 for a child
// of a wunder nobody started that way). A wunder reads it at start
// (Options.StdioDepth), so one started as a stdio server of a wunder knows it.
const StdioDepthEnv = "WUNDER_MCP_STDIO_DEPTH"

// MaxStdioDepth is the depth from which a wunder starts no stdio upstreams:
// a wunder that is itself the stdio server of a wunder (depth 1) offers its
// other upstreams but not its stdio ones, so a configuration that names
// wunder as its own stdio server cannot spawn wunders without end.
const MaxStdioDepth = 1

// ParseStdioDepth reads a value of [StdioDepthEnv]; "" and anything that
// is not a non-negative integer is depth 0 (a malformed marker must not turn
// the guard off, but nor can it come from a wunder, which writes integers).
func ParseStdioDepth(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// errStdioRefused is why a stdio server is not started at depth >=
// [MaxStdioDepth]; the error of its tools and its discovery.
func errStdioRefused(depth int) error {
	return fmt.Errorf("stdio server not started: this wunder is itself an MCP stdio server of another wunder (%s=%d), "+
		"and stdio upstreams are started only below depth %d, to prevent recursive spawning", StdioDepthEnv, depth, MaxStdioDepth)
}

// stdioTransport starts a stdio server under wunder's one subprocess
// policy ([proc.Start]: a process group of its own, SIGKILL when wunder
// dies, a bounded stop that sweeps the group) with a built environment
// ([stdioEnv]). It is an [mcp.Transport] for one connection.
type stdioTransport struct {
	cfg   ServerConfig
	depth int // wunder's own depth; the child gets depth+1
	grace time.Duration
	log   func(text string)

	// mu guards p.
	mu sync.Mutex
	p  *proc.Process
}

// stdioEnv is the whole environment of a stdio server: PATH, HOME and LANG
// of wunder ([proc.Env]), the server's configured env (sorted, so the order
// is stable), and the depth marker, which the configuration cannot
// override. Nothing else of wunder's environment — its WUNDER_* variables,
// API keys, tokens — reaches the child.
func stdioEnv(env map[string]string, depth int) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	extra := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		extra = append(extra, k+"="+env[k])
	}
	extra = append(extra, StdioDepthEnv+"="+strconv.Itoa(depth+1))
	return proc.Env("", extra...)
}

// Connect implements [mcp.Transport]: it starts the child and speaks
// newline-delimited JSON over its stdin and stdout.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := exec.Command(t.cfg.Command, t.cfg.Args...)
	cmd.Dir = t.cfg.Dir
	cmd.Env = stdioEnv(t.cfg.Env, t.depth)
	cmd.Stderr = logWriter(t.log)
	p, inW, outR, err := proc.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.p = p
	t.mu.Unlock()
	conn := &stdioConn{r: outR, w: inW, stop: t.stop}
	return (&mcp.IOTransport{Reader: conn, Writer: conn}).Connect(ctx)
}

// stop ends the child, if one was started, in proc's bounded steps. It is
// safe to call more than once and from any goroutine.
func (t *stdioTransport) stop() error {
	t.mu.Lock()
	p := t.p
	t.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Stop(t.grace)
}

// stdioConn is the child's stdout and stdin as the reader and writer of
// an IOTransport. Closing either stops the child (stdin closed, then
// SIGTERM and SIGKILL to its group, each after grace) and then closes
// stdout, which the reader drained until the child exited.
type stdioConn struct {
	r, w *os.File
	stop func() error

	once sync.Once
	err  error
}

func (c *stdioConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *stdioConn) Write(p []byte) (int, error) { return c.w.Write(p) }

func (c *stdioConn) Close() error {
	c.once.Do(func() {
		c.err = c.stop()
		_ = c.w.Close() // already closed by the stop; a second close is harmless
		_ = c.r.Close()
		if errors.Is(c.err, proc.ErrUnresponsive) {
			c.err = fmt.Errorf("mcp stdio server: %w", c.err)
		}
	})
	return c.err
}

// logWriter sends a stdio child's stderr to the log, a line per write.
type logWriter func(text string)

func (w logWriter) Write(p []byte) (int, error) {
	w(string(p))
	return len(p), nil
}
