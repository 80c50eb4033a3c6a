package gateway

import (
	"net/http"
	"testing"
)

// Limits per address count an IPv6 subscriber's /64 as one address: the
// host half costs nothing to change.
func TestClientAddress(t *testing.T) {
	for remote, want := range map[string]string{
		"192.0.2.7:5000":              "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443":  "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:1":      "2001:db8:1:2::/64",
		"[::ffff:192.0.2.7]:80":       "192.0.2.7",
		"[fe80::1%eth0]:80":           "fe80::/64",
		"not an address":              "not an address",
		"[2001:db8:1:3:3:4:5:6]:443":  "2001:db8:1:3::/64",
		"[2001:db8:1:2::]:443":        "2001:db8:1:2::/64",
		"127.0.0.1:1":                 "127.0.0.1",
		"[::1]:8000":                  "::/64",
		"198.51.100.1":                "198.51.100.1",
		"[2001:db8:0:0:1:0:0:1]:9999": "2001:db8::/64",
	} {
		if got := clientAddress(&http.Request{RemoteAddr: remote}); got != want {
			t.Errorf("clientAddress(%q) = %q; want %q", remote, got, want)
		}
	}
}
