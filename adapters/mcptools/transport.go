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
	if len(sv.cfg.Headers) == 0 && sv.cfg.BearerToken == "" {
		if base == nil {
			return http.DefaultClient
		}
		return &http.Client{Transport: base}
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &headerTransport{base: base, headers: sv.cfg.Headers, bearer: sv.cfg.BearerToken}}
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
