package mcptools_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/wunder/wunder/adapters/mcptools"
)

// countingRT counts the requests it carries.
type countingRT struct{ n atomic.Int64 }

func (c *countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPTransportCarriesRequests: Options.HTTPTransport carries every
// request of an HTTP server, with and without configured headers (the
// headers are added on top of it).
func TestHTTPTransportCarriesRequests(t *testing.T) {
	t.Parallel()
	url := suiteServer(t)
	for _, hdr := range []map[string]string{nil, {"X-Test": "1"}} {
		rt := &countingRT{}
		s, err := mcptools.New([]mcptools.ServerConfig{{Name: "h", Transport: mcptools.TransportStreamableHTTP, URL: url, Headers: hdr}},
			&mcptools.Options{Timeout: 5 * time.Second, HTTPTransport: rt, DropServerLogs: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Refresh(context.Background(), "h"); err != nil {
			t.Fatal(err)
		}
		if res := call(t, toolByName(t, s, "h@ping"), `{}`, nil); res.IsError || res.Content != "pong" {
			t.Errorf("headers %v: ping = %+v", hdr, res)
		}
		_ = s.Close()
		if rt.n.Load() == 0 {
			t.Errorf("headers %v: the configured transport carried no request", hdr)
		}
	}
}

// tokenHandler is an OAuth handler whose Authorize grants the token "good".
type tokenHandler struct {
	token      atomic.Value // string
	authorized atomic.Int64
}

func (h *tokenHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	tok, _ := h.token.Load().(string)
	if tok == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok}), nil
}

func (h *tokenHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	h.authorized.Add(1)
	h.token.Store("good")
	return nil
}

// The pass-through's client of a server authorized by OAuth carries the
// handler's token, and on a 401 asks the handler and sends the request
// again, body and all; once authorized, requests go with the token.
func TestHTTPEndpointAuthorizesWithOAuth(t *testing.T) {
	t.Parallel()
	var bodies []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b)) // one request at a time here
	}))
	t.Cleanup(ts.Close)
	h := &tokenHandler{}
	s, err := mcptools.New([]mcptools.ServerConfig{{Name: "o", Transport: mcptools.TransportStreamableHTTP, URL: ts.URL, OAuth: h}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	url, client, ok := s.HTTPEndpoint("o")
	if !ok || url != ts.URL {
		t.Fatalf("HTTPEndpoint(o) = %q, %v", url, ok)
	}
	for _, body := range []string{"first", "second"} {
		resp, err := client.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", body, resp.StatusCode)
		}
	}
	if got := h.authorized.Load(); got != 1 {
		t.Errorf("Authorize called %d times, want once", got)
	}
	if want := []string{"first", "second"}; !slices.Equal(bodies, want) {
		t.Errorf("the server read %q, want %q", bodies, want)
	}
}
