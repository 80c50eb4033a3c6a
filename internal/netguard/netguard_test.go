package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/netguard"
)

func TestBlocked(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true,
		"169.254.169.254": true, "fe80::1": true, "0.0.0.0": true, "::": true, "224.0.0.1": true,
		"100.64.0.1": true, "fd00::1": true,
		"8.8.8.8": false, "1.1.1.1": false, "2606:4700::1111": false, "100.128.0.1": false,
	} {
		if got := netguard.Blocked(net.ParseIP(ip)); got != want {
			t.Errorf("Blocked(%s) = %v, want %v", ip, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		url  string
		want error
	}{
		{"ftp://example.com/x", netguard.ErrNotHTTP},
		{"/relative", netguard.ErrNotHTTP},
		{"http://", netguard.ErrNotHTTP},
		{"::not a url", netguard.ErrNotHTTP},
		{"http://127.0.0.1:9/hook", netguard.ErrBlocked},
		{"http://localhost/x", netguard.ErrBlocked},
		{"http://api.localhost/x", netguard.ErrBlocked},
		{"http://10.1.2.3/x", netguard.ErrBlocked},
		{"http://169.254.169.254/latest", netguard.ErrBlocked},
		{"http://[::1]/x", netguard.ErrBlocked},
		{"https://8.8.8.8/x", nil},
		{"http://no-such-host.invalid/x", netguard.ErrUnresolved},
	}
	for _, c := range cases {
		err := netguard.CheckURL(ctx, c.url, false)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("CheckURL(%q) = %v, want %v", c.url, err, c.want)
		}
	}
	// The opt-out lets private targets through, never other schemes.
	if err := netguard.CheckURL(ctx, "http://127.0.0.1:9/hook", true); err != nil {
		t.Errorf("allowPrivate: %v", err)
	}
	if err := netguard.CheckURL(ctx, "file:///etc/passwd", true); !errors.Is(err, netguard.ErrNotHTTP) {
		t.Errorf("allowPrivate, file URL: %v", err)
	}
}

// TestTransportRefusesAtDialTime: the dial-time check holds even where
// the URL was never checked (a name that rebinds to loopback after the
// check is the case it stands for).
func TestTransportRefusesAtDialTime(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	guarded := &http.Client{Transport: netguard.Transport(2*time.Second, false)}
	_, err := guarded.Get(srv.URL)
	if !errors.Is(err, netguard.ErrBlocked) {
		t.Fatalf("GET %s through the guard: %v, want ErrBlocked", srv.URL, err)
	}
	open := &http.Client{Transport: netguard.Transport(2*time.Second, true)}
	res, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("GET %s with allowPrivate: %v", srv.URL, err)
	}
	res.Body.Close()
}
