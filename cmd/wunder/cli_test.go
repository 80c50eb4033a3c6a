package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = execute(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunCommandRendersARun(t *testing.T) {
	s := startServer(t, nil)
	code, out, errs := runCLI(t, t.Context(), "run", "--server", s.url, "--user", "erin", "--tools", "write_file,read_file",
		"please write a note and read it back")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "hello from fakellm") {
		t.Errorf("the answer is not on stdout:\n%s", out)
	}
	for _, want := range []string{"→ write_file", "✓ write_file", "→ read_file", "✓ read_file", "finished (model_response)"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// --json: one event per line, seqs in order.
	code, out, _ = runCLI(t, t.Context(), "run", "--server", s.url, "--user", "erin", "--json", "hello")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) < 3 || !strings.Contains(lines[len(lines)-1], `"type":"final"`) {
		t.Fatalf("exit %d, json lines:\n%s", code, out)
	}
}

func TestRunCommandExitCodes(t *testing.T) {
	s := startServer(t, nil)
	// Unknown tool: the server's problem is shown, exit 1.
	code, _, errs := runCLI(t, t.Context(), "run", "--server", s.url, "--tools", "nope", "hi")
	if code != exitFailure || !strings.Contains(errs, "tool_not_found") {
		t.Fatalf("unknown tool: exit %d, stderr %s", code, errs)
	}
	// No server.
	code, _, errs = runCLI(t, t.Context(), "run", "--server", "http://127.0.0.1:1", "hi")
	if code != exitFailure || !strings.Contains(errs, "no wunder server") {
		t.Fatalf("no server: exit %d, stderr %s", code, errs)
	}
	// Usage errors.
	if code, _, _ := runCLI(t, t.Context(), "run"); code != exitUsage {
		t.Fatalf("run without a question: exit %d", code)
	}
	if code, _, _ := runCLI(t, t.Context(), "serve", "--no-such-flag"); code != exitUsage {
		t.Fatalf("bad flag: exit %d", code)
	}
	// Interrupting the client cancels the run: exit 3 once the run ends
	// cancelled, as the server reports it.
	ctx, cancel := context.WithCancel(t.Context())
	s2 := startServer(t, nil)
	done := make(chan struct{})
	var out, errb bytes.Buffer
	go func() {
		defer close(done)
		code = execute(ctx, []string{"run", "--server", s2.url, "--user", "fred", "--tools", "execute_command",
			`run: python3 -c "import time; print('started', flush=True); time.sleep(300)"`}, &out, &syncWriter{w: &errb, onWrite: func(s string) {
			if strings.Contains(s, "started") {
				cancel()
			}
		}})
	}()
	<-done
	cancel()
	if code != exitCancelled {
		t.Fatalf("interrupted run: exit %d\n%s", code, errb.String())
	}
}

// syncWriter calls onWrite with each write (the CLI writes whole lines).
type syncWriter struct {
	w       *bytes.Buffer
	onWrite func(string)
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.onWrite(string(p))
	return s.w.Write(p)
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(good, []byte("server:\n  port: 9000\n"), 0o600)
	_ = os.WriteFile(bad, []byte("server:\n  port: 70000\n  hots: x\n"), 0o600)
	t.Setenv("WUNDER_DATA_DIR", dir)
	if code, out, errs := runCLI(t, t.Context(), "config", "validate", "--config", good); code != exitOK || !strings.Contains(out, "valid") {
		t.Fatalf("good: exit %d %s %s", code, out, errs)
	}
	code, _, errs := runCLI(t, t.Context(), "config", "validate", "--config", bad)
	if code != exitConfig || !strings.Contains(errs, "server.port") || !strings.Contains(errs, "server.hots") {
		t.Fatalf("bad: exit %d, stderr:\n%s", code, errs)
	}
	t.Setenv("WUNDER_API_KEY", "top-secret")
	code, out, _ := runCLI(t, t.Context(), "config", "validate", "--print", "--config", good)
	if code != exitOK || strings.Contains(out, "top-secret") || !strings.Contains(out, "port: 9000") {
		t.Fatalf("--print: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, t.Context(), "version"); code != exitOK || !strings.HasPrefix(out, "wunder ") {
		t.Fatalf("version: %d %q", code, out)
	}
}
