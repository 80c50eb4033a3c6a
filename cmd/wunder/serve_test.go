package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/config"
)

// TestServeProcessHelper is not a test: started by startServe as a child
// process, it is `wunder serve`.
func TestServeProcessHelper(t *testing.T) {
	if os.Getenv("WUNDER_TEST_SERVE_PROCESS") != "1" {
		t.Skip("the body of a child process started by the serve tests")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if code := execute(ctx, append([]string{"serve"}, flag.Args()...), os.Stdout, os.Stderr); code != exitOK {
		os.Exit(code)
	}
	// Exit 0 by returning: the testing package turns os.Exit(0) in a test
	// into a failure.
}

// serveProcess is a `wunder serve` process with no configuration file and
// only the WUNDER_* variables a test gives it.
type serveProcess struct {
	cmd    *exec.Cmd
	lines  chan string // stderr, line by line; closed at EOF
	stderr strings.Builder
}

// startServe starts `wunder serve args...` with env (KEY=value; "" is
// skipped) in an empty directory.
func startServe(t *testing.T, args []string, env ...string) *serveProcess {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestServeProcessHelper$", "--"}, args...)...)
	cmd.Dir = dir // no config/wunder.yaml here
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WUNDER_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "WUNDER_TEST_SERVE_PROCESS=1", "WUNDER_DATA_DIR="+dir, "WUNDER_PORT="+strconv.Itoa(freePort(t)))
	for _, kv := range env {
		if kv != "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProcess{cmd: cmd, lines: make(chan string, 256)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, errp)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// freePort is a TCP port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitFor returns the first stderr line containing s; ok is false when the
// process ended (or 60 s passed) first.
func (p *serveProcess) waitFor(t *testing.T, s string) (line string, ok bool) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, open := <-p.lines:
			if !open {
				return "", false
			}
			p.stderr.WriteString(l + "\n")
			if strings.Contains(l, s) {
				return l, true
			}
		case <-deadline:
			t.Errorf("no %q on stderr within 60 s", s)
			return "", false
		}
	}
}

// exit waits for the process (after SIGTERM when stop) and returns its exit
// code with the rest of its stderr.
func (p *serveProcess) exit(t *testing.T, stop bool) (int, string) {
	t.Helper()
	if stop {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for l := range p.lines {
		p.stderr.WriteString(l + "\n")
	}
	err := p.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), p.stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, p.stderr.String()
}

var logAttr = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S+)`)

// attrs parses the key=value pairs of a slog text line.
func attrs(line string) map[string]string {
	out := map[string]string{}
	for _, m := range logAttr.FindAllStringSubmatch(line, -1) {
		v := m[2]
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		out[m[1]] = v
	}
	return out
}

// listeners returns the local addresses of the TCP sockets listening on
// port, read from /proc/net/tcp{,6}: the kernel's own account of what is
// bound, checked without sending traffic to any address but loopback.
func listeners(t *testing.T, port string) []string {
	t.Helper()
	want, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			hexIP, hexPort, ok := strings.Cut(f[1], ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if !ok || err != nil || int(p) != want {
				continue
			}
			raw, err := hex.DecodeString(hexIP)
			if err != nil {
				continue
			}
			// /proc prints each 32-bit word in host (little-endian) order.
			for i := 0; i+4 <= len(raw); i += 4 {
				raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
			}
			out = append(out, net.IP(raw).String())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no listening socket on port %s in /proc/net/tcp", port)
	}
	return out
}

// TestServeFreshStartListensOnLoopbackOnly starts `wunder serve` as a fresh
// `make run` would: no configuration, no key.
func TestServeFreshStartListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	p := startServe(t, nil)
	line, ok := p.waitFor(t, "wunder listening")
	if !ok {
		code, errs := p.exit(t, false)
		t.Fatalf("serve did not start: exit %d, stderr:\n%s", code, errs)
	}
	a := attrs(line)
	host, port, err := net.SplitHostPort(a["addr"])
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("listening on %q, want 127.0.0.1:<port>: %s", a["addr"], line)
	}
	if !strings.HasPrefix(a["auth"], "off") || !strings.Contains(a["auth"], "loopback only") {
		t.Errorf("start-up line does not say auth is off and loopback only: %s", line)
	}
	res, err := http.Get("http://127.0.0.1:" + port + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz on loopback: %s", res.Status)
	}
	for _, ip := range listeners(t, port) {
		if !net.ParseIP(ip).IsLoopback() {
			t.Errorf("a socket listens on %s:%s; the server must listen on loopback only", ip, port)
		}
	}
	// `wunder health`, the image's HEALTHCHECK: 0 while it is ready.
	if code, out, errs := runCLI(t, t.Context(), "health", "--server", "http://127.0.0.1:"+port); code != exitOK || !strings.Contains(out, `"ready"`) {
		t.Errorf("wunder health on a ready server: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Ctrl-C under `make run` is SIGINT: a clean shutdown, exit 0.
	_ = p.cmd.Process.Signal(os.Interrupt)
	if code, errs := p.exit(t, false); code != exitOK {
		t.Errorf("after SIGINT: exit %d, stderr:\n%s", code, errs)
	}
	if code, _, errs := runCLI(t, t.Context(), "health", "--server", "http://127.0.0.1:"+port, "--timeout", "2s"); code != exitFailure {
		t.Errorf("wunder health on a stopped server: exit %d, want %d; stderr %q", code, exitFailure, errs)
	}
}

// TestServeRefusesOpenHostWithoutKey: all interfaces and no API key is a
// configuration error that names the key and the way out.
func TestServeRefusesOpenHostWithoutKey(t *testing.T) {
	t.Parallel()
	p := startServe(t, nil, "WUNDER_HOST=0.0.0.0")
	code, errs := p.exit(t, false)
	if code != exitConfig {
		t.Fatalf("exit %d, want %d (invalid configuration); stderr:\n%s", code, exitConfig, errs)
	}
	for _, want := range []string{"WUNDER_HOST: server.host", `"0.0.0.0" is reachable from other machines and no API key is set`,
		"security.api_key", "security.allow_unauthenticated: true"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "wunder listening") {
		t.Errorf("it listened anyway:\n%s", errs)
	}
}

// TestServeOpenHost: all interfaces start with a key, or without one when
// security.allow_unauthenticated says so (with a warning).
func TestServeOpenHost(t *testing.T) {
	t.Parallel()
	allow := filepath.Join(t.TempDir(), "wunder.yaml")
	if err := os.WriteFile(allow, []byte("security:\n  allow_unauthenticated: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		env  string
		auth string
		warn string
	}{
		{name: "api key", env: "WUNDER_API_KEY=k", auth: "api key required"},
		{name: "allow_unauthenticated", args: []string{"--config", allow}, auth: "off (no API key, allow_unauthenticated)",
			warn: "anyone who reaches this port can run tasks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startServe(t, tt.args, "WUNDER_HOST=0.0.0.0", tt.env)
			line, ok := p.waitFor(t, "wunder listening")
			if !ok {
				code, errs := p.exit(t, false)
				t.Fatalf("serve did not start: exit %d, stderr:\n%s", code, errs)
			}
			a := attrs(line)
			if host, _, _ := net.SplitHostPort(a["addr"]); config.IsLoopback(host) {
				t.Errorf("listening on %s, want all interfaces", a["addr"])
			}
			if !strings.HasPrefix(a["auth"], tt.auth) {
				t.Errorf("auth=%q, want %q: %s", a["auth"], tt.auth, line)
			}
			code, errs := p.exit(t, true)
			if code != exitOK {
				t.Errorf("after SIGTERM: exit %d, stderr:\n%s", code, errs)
			}
			if got := strings.Contains(errs, "level=WARN") && strings.Contains(errs, tt.warn); tt.warn != "" && !got {
				t.Errorf("no warning %q:\n%s", tt.warn, errs)
			}
		})
	}
}

// TestExposureChecksTheBoundAddress: the start-up check looks at the address
// actually bound, so a "localhost" that resolved to another address, or a
// listener made by hand, cannot serve without a key either.
func TestExposureChecksTheBoundAddress(t *testing.T) {
	t.Parallel()
	lan := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 8000}
	loop := &net.TCPAddr{IP: net.IPv6loopback, Port: 8000}
	for _, tt := range []struct {
		name    string
		sec     config.Security
		addr    net.Addr
		auth    string
		refused bool
	}{
		{"loopback, no key", config.Security{}, loop, "off (no API key): loopback only", false},
		{"LAN, no key", config.Security{}, lan, "", true},
		{"LAN, key", config.Security{APIKey: "k"}, lan, "api key required", false},
		{"LAN, allowed", config.Security{AllowUnauthenticated: true}, lan, "off (no API key, allow_unauthenticated)", false},
	} {
		cfg := config.Default()
		cfg.Security = tt.sec
		a := &app{cfg: cfg, log: slog.New(slog.DiscardHandler)}
		auth, err := a.exposure(tt.addr)
		if tt.refused {
			if err == nil || !strings.Contains(err.Error(), "refusing to listen on 192.0.2.1:8000 without an API key") {
				t.Errorf("%s: err = %v, want a refusal", tt.name, err)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(auth, tt.auth) {
			t.Errorf("%s: auth %q, err %v; want %q", tt.name, auth, err, tt.auth)
		}
	}
}
