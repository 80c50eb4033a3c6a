package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// grpcurlVersion is the stock gRPC client the Connect API is checked with.
const grpcurlVersion = "v1.9.4"

// installGrpcurl installs grpcurl with `go install` into a temp dir. Without
// it (no module proxy) the test skips loudly, or fails when CI=true.
func installGrpcurl(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "install", "github.com/fullstorydev/grpcurl/cmd/grpcurl@"+grpcurlVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "grpcurl " + grpcurlVersion + " could not be installed with go install: " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING the grpcurl interop test: " + msg)
	}
	return filepath.Join(bin, "grpcurl")
}

// A stock gRPC client against the real server (config -> storage ->
// adapters -> core -> gateway, h2c on the main port, API key on): grpcurl
// lists the services through reflection, describes one, checks health and
// streams a run that writes and reads a file with the fake model; without
// the key it gets Unauthenticated.
func TestGrpcurlAgainstRunningServer(t *testing.T) {
	grpcurl := installGrpcurl(t)
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "grpc-key" })
	addr := strings.TrimPrefix(s.url, "http://")
	call := func(args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), grpcurl, append([]string{"-plaintext"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	auth := []string{"-H", "authorization: Bearer grpc-key"}

	_, stderr, err := call(addr, "list")
	if err == nil || !strings.Contains(stderr, "Unauthenticated") {
		t.Fatalf("list without the key: err %v, stderr %s", err, stderr)
	}

	out, stderr, err := call(append(auth, addr, "list")...)
	if err != nil {
		t.Fatalf("list: %v\n%s", err, stderr)
	}
	for _, svc := range []string{"wunder.v1.RunService", "wunder.v1.SessionService", "wunder.v1.ToolService", "grpc.health.v1.Health", "lf.a2a.v1.A2AService"} {
		if !strings.Contains(out, svc) {
			t.Errorf("list does not show %s:\n%s", svc, out)
		}
	}

	out, stderr, err = call(append(auth, addr, "describe", "wunder.v1.RunService")...)
	if err != nil || !strings.Contains(out, "rpc Run ( .wunder.v1.RunRequest ) returns ( stream .wunder.v1.RunResponse )") {
		t.Fatalf("describe: %v\n%s\n%s", err, out, stderr)
	}

	// A2A's gRPC binding is described as well: a client may find it
	// without the card.
	out, stderr, err = call(append(auth, addr, "describe", "lf.a2a.v1.A2AService")...)
	if err != nil || !strings.Contains(out, "rpc SendMessage ( .lf.a2a.v1.SendMessageRequest ) returns ( .lf.a2a.v1.SendMessageResponse )") {
		t.Fatalf("describe A2A: %v\n%s\n%s", err, out, stderr)
	}

	out, stderr, err = call(append(auth, addr, "grpc.health.v1.Health/Check")...)
	if err != nil || !strings.Contains(out, "SERVING") {
		t.Fatalf("health: %v\n%s\n%s", err, out, stderr)
	}

	req := `{"user_id":"grpcurl","question":"please write a note and read it back","tool_names":["write_file","read_file"]}`
	out, stderr, err = call(append(auth, "-d", req, addr, "wunder.v1.RunService/Run")...)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, `"type": "tool_result"`) || !strings.Contains(out, `"type": "final"`) || !strings.Contains(out, "hello from fakellm") {
		t.Fatalf("Run streamed:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "grpcurl", "notes.txt"))
	if err != nil || string(b) != "hello from fakellm" {
		t.Fatalf("workspace file: %q %v", b, err)
	}

	out, stderr, err = call(append(auth, "-d", `{"user_id":"grpcurl"}`, addr, "wunder.v1.SessionService/ListSessions")...)
	if err != nil || !strings.Contains(out, `"sessionId": "sess_`) {
		t.Fatalf("ListSessions: %v\n%s\n%s", err, out, stderr)
	}
}
