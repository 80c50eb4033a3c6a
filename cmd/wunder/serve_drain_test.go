package main

import (
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// On SIGTERM with server.drain_delay_s, the server says not ready at once
// (the balancer takes it out of rotation) while it stays alive and serves,
// then stops cleanly.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "wunder.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  drain_delay_s: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, []string{"--config", cfg})
	line, ok := p.waitFor(t, "wunder listening")
	if !ok {
		code, errs := p.exit(t, false)
		t.Fatalf("serve did not start: exit %d, stderr:\n%s", code, errs)
	}
	base := "http://" + attrs(line)["addr"]
	probe := func(path string) int {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := probe("/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz before the stop: %d", got)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.waitFor(t, "draining"); !ok {
		code, errs := p.exit(t, false)
		t.Fatalf("no drain: exit %d, stderr:\n%s", code, errs)
	}
	if got := probe("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %d, want 503", got)
	}
	if got := probe("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz while draining: %d, want 200 (alive)", got)
	}
	if code, errs := p.exit(t, false); code != exitOK {
		t.Errorf("after the drain: exit %d, stderr:\n%s", code, errs)
	}
}
