package a2atools_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/a2atools"
)

// Published offers the A2A pass-through the services that publish (and
// read a card), as configured now: its card is read asking for the
// version given, with the service's headers.
func TestPublished(t *testing.T) {
	t.Parallel()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.Header.Get("A2A-Version")+"|"+r.Header.Get("X-Peer-Key"))
		_, _ = w.Write([]byte(`{"name":"p","supportedInterfaces":[{"url":"http://p/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`))
	}))
	t.Cleanup(srv.Close)
	hdr := http.Header{"X-Peer-Key": {"k"}}
	s := newSet(t,
		a2atools.Service{Name: "pub", URL: srv.URL, Header: hdr, Publish: true},
		a2atools.Service{Name: "private", URL: srv.URL},
	)
	if _, ok := s.Published("private"); ok {
		t.Error("a service that does not publish is published")
	}
	if _, ok := s.Published("nobody"); ok {
		t.Error("an unknown service is published")
	}
	p, ok := s.Published("pub")
	if !ok || p.Name != "pub" || p.Timeout <= 0 || p.HTTP == nil {
		t.Fatalf("published pub: %+v %v", p, ok)
	}
	for _, v := range []string{"", "1.0"} {
		if card, err := p.Card(t.Context(), v); err != nil || !strings.Contains(string(card), `"name":"p"`) {
			t.Fatalf("card asking for %q: %s %v", v, card, err)
		}
	}
	if want := []string{"|k", "1.0|k"}; strings.Join(asked, ",") != strings.Join(want, ",") {
		t.Errorf("the peer was asked %q; want %q", asked, want)
	}
	if err := s.Reconfigure([]a2atools.Service{{Name: "pub", URL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Published("pub"); ok {
		t.Error("still published after the service stopped publishing")
	}
}
