package mcptools

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

// HTTPEndpoint returns the URL and HTTP client (configured headers, bearer
// token and OAuth handler included) of the named streamable-http server, for
// the pass-through, which forwards a downstream session's messages to it as
// bytes. ok is false for other transports (reached with [Set.Dial]) and
// unknown names.
func (s *Set) HTTPEndpoint(name string) (url string, client *http.Client, ok bool) {
	sv, found := s.lookup(name)
	if !found || sv.cfg.Transport != TransportStreamableHTTP {
		return "", nil, false
	}
	client = sv.httpClient()
	if sv.cfg.OAuth != nil {
		client = &http.Client{Transport: &oauthTransport{base: client.Transport, h: sv.cfg.OAuth}}
	}
	return sv.cfg.URL, client, true
}

// oauthTransport authorizes requests as the SDK's streamable transport does
// with an OAuth handler: the handler's token on each request, and on 401 or
// 403 its Authorize, then the request once more.
type oauthTransport struct {
	base http.RoundTripper
	h    auth.OAuthHandler
}

func (t *oauthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.send(r)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if r.Body != nil && r.GetBody == nil {
		return resp, nil // the body cannot be sent again
	}
	if err := t.h.Authorize(r.Context(), r, resp); err != nil { // Authorize closes resp.Body
		return nil, err
	}
	r = r.Clone(r.Context())
	if r.GetBody != nil {
		if r.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.send(r)
}

func (t *oauthTransport) send(r *http.Request) (*http.Response, error) {
	ts, err := t.h.TokenSource(r.Context())
	if err != nil {
		return nil, err
	}
	if ts != nil {
		// A token that cannot be had (say, an expired grant) is left out:
		// the 401 that follows asks the handler to authorize.
		if tok, err := ts.Token(); err == nil {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	return t.base.RoundTrip(r)
}
