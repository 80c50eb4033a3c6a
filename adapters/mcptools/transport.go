package mcptools

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// transport builds the server's transport and the function that releases
// what it leaves behind (a stdio child and its process group, stdio.go).
func (sv *server) transport() (mcp.Transport, func(), error) {
	c := sv.cfg
	switch c.Transport {
	case TransportStdio:
		if sv.refused != nil {
			return nil, nil, sv.refused
		}
		t := &stdioTransport{cfg: c, depth: sv.set.opts.StdioDepth, grace: sv.set.opts.TerminateDuration,
			log: func(text string) { sv.set.log.Debug("mcp server stderr", "server", c.Name, "text", text) }}
		return t, func() {
			if err := t.stop(); err != nil {
				sv.set.log.Warn("mcp stdio server not stopped", "server", c.Name, "err", err)
			}
		}, nil
	case TransportSSE:
		return &mcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: sv.httpClient()}, func() {}, nil
	default:
		return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: sv.httpClient(), OAuthHandler: c.OAuth}, func() {}, nil
	}
}

func (sv *server) httpClient() *http.Client {
	base := sv.set.opts.HTTPTransport
	if base == nil {
		base = sv.set.transport
	}
	if wrap := sv.set.opts.WrapTransport; wrap != nil {
		base = wrap(base)
	}
	if len(sv.cfg.Headers) == 0 && sv.cfg.BearerToken == "" {
		return &http.Client{Transport: base}
	}
	return &http.Client{Transport: &headerTransport{base: base, headers: sv.cfg.Headers, bearer: sv.cfg.BearerToken}}
}

// maxIdlePerHost is how many idle connections the Set's own transport keeps
// per upstream host. http.DefaultTransport keeps 2: with one upstream
// session per pass-through session, eight callers at once would open and
// close a TCP connection for almost every forwarded request (thousands of
// sockets in TIME_WAIT under load, docs/benchmarks.md).
const maxIdlePerHost = 256

// newTransport is the Set's transport when Options.HTTPTransport is nil:
// http.DefaultTransport's settings (proxy from the environment, timeouts,
// HTTP/2) with room for the idle connections of concurrent sessions.
func newTransport() *http.Transport {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok { // replaced by the program: start from Go's defaults
		dt = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	t := dt.Clone()
	t.MaxIdleConns = 4 * maxIdlePerHost
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return t
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

// HTTPEndpoint returns the URL and HTTP client (configured headers and
// bearer token included) of the named streamable-http server, for a
// pass-through that forwards requests' bytes on a session opened with
// [Set.Connect]. ok is false for other transports, unknown names and servers
// authorized by OAuth (whose tokens only the SDK transport carries).
func (s *Set) HTTPEndpoint(name string) (url string, client *http.Client, ok bool) {
	sv, found := s.lookup(name)
	if !found || sv.cfg.Transport != TransportStreamableHTTP || sv.cfg.OAuth != nil {
		return "", nil, false
	}
	return sv.cfg.URL, sv.httpClient(), true
}
