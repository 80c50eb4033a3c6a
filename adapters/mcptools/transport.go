package mcptools

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds the server's transport and the function that releases
// what it leaves behind (a stdio child's process group).
func (sv *server) transport() (mcp.Transport, func(), error) {
	c := sv.cfg
	switch c.Transport {
	case TransportStdio:
		cmd := exec.Command(c.Command, c.Args...)
		cmd.Dir = c.Dir
		cmd.Env = os.Environ()
		keys := make([]string, 0, len(c.Env))
		for k := range c.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd.Env = append(cmd.Env, k+"="+c.Env[k])
		}
		cmd.Stderr = &logWriter{sv: sv}
		// A process group of its own: shutdown stops the child and whatever
		// it started (npx starts node, node may start more).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		t := &mcp.CommandTransport{Command: cmd, TerminateDuration: sv.set.opts.TerminateDuration}
		var once sync.Once
		return t, func() {
			once.Do(func() {
				if cmd.Process != nil {
					// The SDK has closed stdin and waited for the leader;
					// anything left in the group is killed.
					if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
						sv.set.log.Warn("mcp process group not killed", "server", c.Name, "pgid", cmd.Process.Pid, "err", err)
					}
				}
			})
		}, nil
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: sv.httpClient()}, func() {}, nil
	default:
		return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: sv.httpClient(), OAuthHandler: c.OAuth}, func() {}, nil
	}
}

func (sv *server) httpClient() *http.Client {
	if len(sv.cfg.Headers) == 0 && sv.cfg.BearerToken == "" {
		return http.DefaultClient
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: sv.cfg.Headers, bearer: sv.cfg.BearerToken}}
}

// headerTransport adds configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	bearer  string
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	if h.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+h.bearer)
	}
	return h.base.RoundTrip(r)
}

// logWriter sends a stdio child's stderr to the log, a line per write.
type logWriter struct{ sv *server }

func (w *logWriter) Write(p []byte) (int, error) {
	w.sv.set.log.Debug("mcp server stderr", "server", w.sv.cfg.Name, "text", string(p))
	return len(p), nil
}
