package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// `wunder fakellm` serves the fake model with its flags: a streamed
// answer comes in --chunks deltas, and the command ends with its context.
func TestFakeLLMCommand(t *testing.T) {
	errR, errW := io.Pipe()
	root := newRootCmd()
	root.SetArgs([]string{"fakellm", "--addr", "127.0.0.1:0", "--chunks", "3", "--chunk-delay", "0s", "--first-delay", "0s"})
	root.SetErr(errW)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); errW.Close() }()

	line, err := bufio.NewReader(errR).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, errR) }()
	base, _, ok := strings.Cut(strings.TrimPrefix(line, "fake model at "), " ")
	if err != nil || !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q (%v); want the model's address", line, err)
	}
	resp, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hello world"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(body), `"content":"`) - 1; n != 3 || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("stream with %d content deltas, want 3 (and [DONE]):\n%s", n, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("command ended with %v", err)
	}
}
