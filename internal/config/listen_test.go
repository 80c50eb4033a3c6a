package config_test

import (
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// TestListenWithoutKey pins the secure default: with no API key the server
// may listen on loopback only, unless security.allow_unauthenticated says
// otherwise.
func TestListenWithoutKey(t *testing.T) {
	t.Parallel()
	const hint = "set security.api_key (WUNDER_API_KEY), listen on 127.0.0.1, or set security.allow_unauthenticated: true"
	refused := []struct {
		name string
		f    files
		e    env
		want string
	}{
		{"all interfaces", files{basePath: "server:\n  host: 0.0.0.0\n"}, nil,
			`config/wunder.yaml:2: server.host: "0.0.0.0" is reachable from other machines and no API key is set`},
		{"empty host", files{basePath: "server:\n  host: ''\n"}, nil, `server.host: "" (all interfaces) is reachable`},
		{"IPv6 all interfaces", files{basePath: "server:\n  host: '::'\n"}, nil, `server.host: "::" is reachable`},
		{"LAN address", files{basePath: "server:\n  host: 192.168.1.10\n"}, nil, `server.host: "192.168.1.10" is reachable`},
		{"host name", files{basePath: "server:\n  host: wunder.example.com\n"}, nil, `server.host: "wunder.example.com" is reachable`},
		{"WUNDER_HOST", nil, env{"WUNDER_HOST": "0.0.0.0"}, `WUNDER_HOST: server.host: "0.0.0.0" is reachable`},
		{"allow_unauthenticated false", files{basePath: "server:\n  host: 0.0.0.0\nsecurity:\n  allow_unauthenticated: false\n"}, nil,
			`server.host: "0.0.0.0" is reachable`},
		{"empty key", files{basePath: "server:\n  host: 0.0.0.0\nsecurity:\n  api_key: ''\n"}, nil, `server.host: "0.0.0.0" is reachable`},
	}
	for _, tt := range refused {
		t.Run("refused/"+tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := load(t, tt.f, tt.e)
			if err == nil {
				t.Fatal("Load() succeeded, want server.host refused")
			}
			if got := err.Error(); !strings.Contains(got, tt.want) || !strings.Contains(got, hint) {
				t.Errorf("error =\n%s\nwant it to contain\n%s\nand\n%s", got, tt.want, hint)
			}
		})
	}

	accepted := []struct {
		name string
		f    files
		e    env
		addr string
	}{
		{"default", nil, nil, "127.0.0.1:8000"},
		{"127.0.0.1", files{basePath: "server:\n  host: 127.0.0.1\n"}, nil, "127.0.0.1:8000"},
		{"127/8", files{basePath: "server:\n  host: 127.0.0.2\n"}, nil, "127.0.0.2:8000"},
		{"::1", nil, env{"WUNDER_HOST": "::1"}, "[::1]:8000"},
		{"localhost", files{basePath: "server:\n  host: LocalHost\n"}, nil, "LocalHost:8000"},
		{"key in the file", files{basePath: "server:\n  host: 0.0.0.0\nsecurity:\n  api_key: k\n"}, nil, "0.0.0.0:8000"},
		{"key from WUNDER_API_KEY", nil, env{"WUNDER_HOST": "0.0.0.0", "WUNDER_API_KEY": "k"}, "0.0.0.0:8000"},
		{"allow_unauthenticated", files{basePath: "server:\n  host: 0.0.0.0\nsecurity:\n  allow_unauthenticated: true\n"}, nil, "0.0.0.0:8000"},
		{"allow_unauthenticated, empty host", files{basePath: "server:\n  host: ''\nsecurity:\n  allow_unauthenticated: true\n"}, nil, ":8000"},
	}
	for _, tt := range accepted {
		t.Run("accepted/"+tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mustLoad(t, tt.f, tt.e).Addr(); got != tt.addr {
				t.Errorf("Addr() = %q, want %q", got, tt.addr)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST": true, "::ffff:127.0.0.1": true,
		"": false, "0.0.0.0": false, "::": false, "10.0.0.1": false, "fe80::1": false, "example.com": false,
		"localhost.example.com": false, "[::1]": false,
	} {
		if got := config.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
