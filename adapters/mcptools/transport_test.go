package mcptools_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

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
