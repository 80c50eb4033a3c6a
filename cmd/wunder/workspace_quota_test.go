package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The workspace quota (workspace.max_bytes_per_user) on the real wired
// server: the REST routes answer 413 quota_exceeded naming the key, the
// tools answer an error the model reads, a command that writes past it is
// stopped, and nothing stored before is lost.

const quotaTestBytes = 64 << 10

func newQuotaFixture(t *testing.T) *wsFixture {
	t.Helper()
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.Workspace.MaxBytesPerUser = quotaTestBytes
		c.Security.AllowCommands = []string{"python3", "rm"}
	})
	w := &wsFixture{f: &fixture{s: s}, dir: filepath.Join(s.dir, "workspaces", "alice"), admin: map[string]string{"X-API-Key": "admin-key"}}
	writeFile(t, filepath.Join(w.dir, "keep.txt"), "kept\n")
	return w
}

// wantQuotaProblem asserts a 413 quota_exceeded problem that names the key.
func wantQuotaProblem(t *testing.T, what string, status int, b []byte) {
	t.Helper()
	var p struct{ Code, Detail string }
	_ = json.Unmarshal(b, &p)
	if status != 413 || p.Code != "quota_exceeded" || !strings.Contains(p.Detail, "workspace.max_bytes_per_user") {
		t.Errorf("%s = %d %s; want 413 quota_exceeded naming workspace.max_bytes_per_user", what, status, b)
	}
}

func TestWorkspaceQuotaREST(t *testing.T) {
	w := newQuotaFixture(t)
	k40 := strings.Repeat("a", 40<<10)
	if r, b := w.upload(t, "", []string{"big.bin"}, []string{k40}); r.StatusCode != 200 {
		t.Fatalf("upload within the quota = %d %s", r.StatusCode, b)
	}
	r, b := w.upload(t, "", []string{"big2.bin"}, []string{k40})
	wantQuotaProblem(t, "upload over the quota", r.StatusCode, b)
	if _, err := os.Stat(filepath.Join(w.dir, "big2.bin")); err == nil {
		t.Error("the refused upload was written")
	}
	r, b = w.upload(t, "", []string{"big.bin"}, []string{strings.Repeat("b", 70<<10)})
	wantQuotaProblem(t, "an overwrite over the quota", r.StatusCode, b)
	if got := readFileT(t, filepath.Join(w.dir, "big.bin")); got != k40 {
		t.Errorf("the refused overwrite changed big.bin (%d bytes)", len(got))
	}
	r, b = w.do(t, "POST", "/wunder/workspace/file", nil, `{"path":"note.txt","content":"`+strings.Repeat("n", 30<<10)+`","create_if_missing":true}`)
	wantQuotaProblem(t, "POST /file over the quota", r.StatusCode, b)
	r, b = w.do(t, "POST", "/wunder/workspace/copy", nil, `{"source":"big.bin","destination":"big3.bin"}`)
	wantQuotaProblem(t, "copy over the quota", r.StatusCode, b)
	m := w.json(t, "POST", "/wunder/workspace/batch", nil, `{"action":"copy","paths":["big.bin"],"destination":"copies"}`, 200)
	if f := m["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["code"] != "quota_exceeded" {
		t.Errorf("batch copy over the quota: %v", m)
	}
	if got := readFileT(t, filepath.Join(w.dir, "keep.txt")); got != "kept\n" {
		t.Errorf("keep.txt = %q", got)
	}

	// The listing of the root shows the quota and what counts against it.
	sum := w.json(t, "GET", "/wunder/workspace", nil, "", 200)["summary"].(map[string]any)
	if sum["quota_bytes"] != float64(quotaTestBytes) || sum["quota_used_bytes"] != float64(40<<10+5) {
		t.Errorf("summary = %v; want quota_bytes %d, quota_used_bytes %d", sum, quotaTestBytes, 40<<10+5)
	}
	// Deleting makes room again.
	w.json(t, "DELETE", "/wunder/workspace", url.Values{"path": {"big.bin"}}, "", 200)
	if r, b := w.upload(t, "", []string{"big2.bin"}, []string{k40}); r.StatusCode != 200 {
		t.Errorf("upload after a delete = %d %s", r.StatusCode, b)
	}
}

// TestWorkspaceQuotaTools: through runs, write_file over the quota is an
// error result naming the key (the fake model answers with the tool's
// result), and a command that writes file after file is stopped.
func TestWorkspaceQuotaTools(t *testing.T) {
	w := newQuotaFixture(t)
	ask := func(question, tool string) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"user_id": "alice", "question": question, "tool_names": []string{tool}, "stream": false})
		m := w.json(t, "POST", "/wunder", nil, string(body), 200)
		answer, _ := m["answer"].(string)
		return answer
	}
	args, _ := json.Marshal(map[string]string{"path": "huge.txt", "content": strings.Repeat("h", 70<<10)})
	if a := ask("call write_file "+string(args), "write_file"); !strings.Contains(a, "workspace quota exceeded") || !strings.Contains(a, "workspace.max_bytes_per_user") {
		t.Errorf("write_file over the quota answered %q", a)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "huge.txt")); err == nil {
		t.Error("the refused huge.txt was written")
	}
	// Files of 8 KiB, each under what is left, forever: only the quota
	// stops it (or the command timeout, which fails the test).
	fill := `run: python3 -c "import itertools; [open('junk%d' % i, 'wb').write(b'x' * 8192) for i in itertools.count()]"`
	a := ask(fill, "execute_command")
	if !strings.Contains(a, "stopped: workspace quota exceeded") || !strings.Contains(a, "workspace.max_bytes_per_user") {
		t.Errorf("a command writing past the quota answered %q", a)
	}
	if got := readFileT(t, filepath.Join(w.dir, "keep.txt")); got != "kept\n" {
		t.Errorf("keep.txt = %q after the command", got)
	}
	if a := ask(`call write_file {"path":"after.txt","content":"x"}`, "write_file"); !strings.Contains(a, "workspace.max_bytes_per_user") {
		t.Errorf("a write after the workspace went over answered %q", a)
	}
}

func readFileT(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
