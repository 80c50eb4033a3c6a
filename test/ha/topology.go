package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// topology is what the driver starts: the fake model and the counting
// MCP server (in this process), three wunder replicas and HAProxy (child
// processes), on loopback ports it picked.
type topology struct {
	cfg      options
	dir      string
	replicas []*replica
	lbURL    string
	statsURL string
	haproxy  *exec.Cmd
	socket   string // HAProxy's runtime API
	counter  *counter
	servers  []*http.Server
}

// replica is one wunder process; it can be killed and started again on
// the same port and configuration.
type replica struct {
	name, url, cfgPath, logPath string
	port                        int
	// ownHost runs the replica in a UTS namespace of its own, with its
	// name as host name: to the others it is on another host, so its
	// death is seen when its lease expires, not by its pid.
	ownHost bool

	// mu guards cmd and exited.
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// counter is the tool whose side effect is counted: the MCP tool hit
// records each execution per token (one token per run).
type counter struct {
	mu   sync.Mutex
	hits map[string]int
}

func (c *counter) count(token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[token]
}

type hitArgs struct {
	Token string `json:"token" jsonschema:"the token to count"`
}

func (c *counter) handler() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hit", Description: "counts one execution of token"},
		func(_ context.Context, _ *mcp.CallToolRequest, in hitArgs) (*mcp.CallToolResult, any, error) {
			c.mu.Lock()
			c.hits[in.Token]++
			n := c.hits[in.Token]
			c.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("counted %s %d", in.Token, n)}}}, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// listen serves h on a free loopback port and returns its URL.
func (t *topology) listen(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	t.servers = append(t.servers, srv)
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start brings the whole topology up and returns once HAProxy sees every
// replica up.
func start(ctx context.Context, o options) (*topology, error) {
	dir, err := os.MkdirTemp("", "wunder-ha-")
	if err != nil {
		return nil, err
	}
	t := &topology{cfg: o, dir: dir, counter: &counter{hits: map[string]int{}}}
	if o.hosts && exec.Command("unshare", "--uts", "true").Run() != nil {
		o.hosts, t.cfg.hosts = false, false
		fmt.Println("unshare --uts is refused here: the replicas share this host")
	}
	model := &fakellm.Server{Chunks: 4, FirstDelay: o.modelFirst, ChunkDelay: o.modelChunk}
	modelURL, err := t.listen(model)
	if err != nil {
		return t, err
	}
	fastURL, err := t.listen(&fakellm.Server{Chunks: 4}) // no delays: the throughput phase
	if err != nil {
		return t, err
	}
	counterURL, err := t.listen(t.counter.handler())
	if err != nil {
		return t, err
	}
	data := filepath.Join(dir, "data") // shared by the replicas, as operations.md says
	for i := range 3 {
		port, err := freePort()
		if err != nil {
			return t, err
		}
		r := &replica{name: fmt.Sprintf("w%d", i+1), port: port, ownHost: o.hosts, url: fmt.Sprintf("http://127.0.0.1:%d", port),
			cfgPath: filepath.Join(dir, fmt.Sprintf("w%d.yaml", i+1)), logPath: filepath.Join(dir, fmt.Sprintf("w%d.log", i+1))}
		cfg := fmt.Sprintf(`data_dir: %q
server:
  host: 127.0.0.1
  port: %d
  drain_delay_s: %d
  shutdown_timeout_s: 15
observability:
  log_level: warn
storage:
  backend: postgres
  postgres:
    dsn: %q
llm:
  default: fake
  models:
    fake:
      provider: local
      base_url: %q
      model: fake
    fast:
      provider: local
      base_url: %q
      model: fake
mcp:
  servers:
    - name: counter
      transport: streamable-http
      url: %q
`, data, port, o.drainDelay, o.dsn, modelURL+"/v1", fastURL+"/v1", counterURL)
		if err := os.WriteFile(r.cfgPath, []byte(cfg), 0o600); err != nil {
			return t, err
		}
		t.replicas = append(t.replicas, r)
	}
	for _, r := range t.replicas {
		if err := r.start(o.bin); err != nil {
			return t, err
		}
	}
	for _, r := range t.replicas {
		if err := r.waitReady(ctx, time.Minute); err != nil {
			return t, err
		}
	}
	if err := t.startHAProxy(); err != nil {
		return t, err
	}
	for _, r := range t.replicas {
		if err := t.waitBalanced(ctx, r, true, time.Minute); err != nil {
			return t, err
		}
	}
	return t, nil
}

// haproxyConfig is the balancer: round-robin over the replicas, each
// checked on /readyz every 500 ms (down after 2 failures, up after 2
// passes), so a draining replica leaves rotation within about 1 s —
// below server.drain_delay_s. Streams may stay open for minutes.
const haproxyConfig = `global
  maxconn 4096
  stats socket %s level admin
defaults
  mode http
  timeout connect 2s
  timeout client 5m
  timeout server 5m
  timeout tunnel 5m
  timeout http-request 10s
  # a replica slow to answer a check on a busy machine is not taken down
  timeout check 2s
  retries 2
  option redispatch
  option http-server-close
frontend wunder
  bind 127.0.0.1:%d
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2
%s
listen stats
  bind 127.0.0.1:%d
  stats enable
  stats uri /stats
`

func (t *topology) startHAProxy() error {
	lb, err := freePort()
	if err != nil {
		return err
	}
	stats, err := freePort()
	if err != nil {
		return err
	}
	var servers strings.Builder
	for _, r := range t.replicas {
		fmt.Fprintf(&servers, "  server %s 127.0.0.1:%d check\n", r.name, r.port)
	}
	path := filepath.Join(t.dir, "haproxy.cfg")
	t.socket = filepath.Join(t.dir, "haproxy.sock")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(haproxyConfig, t.socket, lb, servers.String(), stats)), 0o600); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(t.dir, "haproxy.log"))
	if err != nil {
		return err
	}
	t.haproxy = exec.Command(t.cfg.haproxy, "-db", "-f", path)
	t.haproxy.Stdout, t.haproxy.Stderr = log, log
	t.haproxy.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	t.lbURL = fmt.Sprintf("http://127.0.0.1:%d", lb)
	t.statsURL = fmt.Sprintf("http://127.0.0.1:%d/stats;csv", stats)
	return t.haproxy.Start()
}

// balanced reports whether HAProxy has replica r up (its stats).
func (t *topology) balanced(ctx context.Context, r *replica) (bool, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.statsURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		return false, err
	}
	for _, row := range rows {
		if len(row) > 17 && row[0] == "replicas" && row[1] == r.name {
			return strings.HasPrefix(row[17], "UP"), nil
		}
	}
	return false, fmt.Errorf("haproxy stats have no server %s", r.name)
}

// waitBalanced polls HAProxy's stats until r is up (or down), within limit.
func (t *topology) waitBalanced(ctx context.Context, r *replica, up bool, limit time.Duration) error {
	return poll(ctx, limit, fmt.Sprintf("haproxy to see %s up=%v", r.name, up), func() bool {
		ok, err := t.balanced(ctx, r)
		return err == nil && ok == up
	})
}

func (t *topology) stop() {
	for _, r := range t.replicas {
		r.kill()
	}
	if t.haproxy != nil && t.haproxy.Process != nil {
		_ = t.haproxy.Process.Kill()
		_ = t.haproxy.Wait()
	}
	for _, s := range t.servers {
		_ = s.Close()
	}
}

// poll checks cond every 20 ms until it holds, failing after limit.
func poll(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	return pollEvery(ctx, limit, 20*time.Millisecond, what, cond)
}

// pollEvery checks cond every every until it holds, failing after limit.
func pollEvery(ctx context.Context, limit, every time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", limit, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
	}
	return nil
}

func (r *replica) start(bin string) error {
	log, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--config", r.cfgPath)
	if r.ownHost {
		cmd = exec.Command("unshare", "--uts", "--", "sh", "-c", `hostname "$0" && exec "$1" serve --config "$2"`, r.name, bin, r.cfgPath)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); log.Close(); close(exited) }()
	r.mu.Lock()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	return nil
}

// waitReady polls the replica's own /readyz.
func (r *replica) waitReady(ctx context.Context, limit time.Duration) error {
	return poll(ctx, limit, r.name+" /readyz", func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// kill9 kills the replica's process group with SIGKILL (its children
// too: nothing of it lives on) and waits for it to be gone.
func (r *replica) kill9() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// term sends SIGTERM and returns how long the process took to exit.
func (r *replica) term(limit time.Duration) (time.Duration, error) {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.mu.Unlock()
	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-exited:
		return time.Since(began), nil
	case <-time.After(limit):
		r.kill9()
		return time.Since(began), errors.New(r.name + " did not stop within " + limit.String() + " of SIGTERM; killed")
	}
}

// kill kills the replica if it still runs.
func (r *replica) kill() {
	r.mu.Lock()
	exited := r.exited
	r.mu.Unlock()
	if exited == nil {
		return
	}
	select {
	case <-exited:
	default:
		r.kill9()
	}
}
