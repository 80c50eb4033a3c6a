package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// fillForever writes 256 KiB files until something stops it.
const fillForever = `import itertools, os
os.makedirs("junk", exist_ok=True)
for i in itertools.count():
    with open("junk/%d" % i, "wb") as f:
        f.write(b"x" * 262144)
`

// TestCommandOverQuotaIsStopped: a command that writes file after file,
// each small, is stopped once the workspace is over its quota; what was
// there before stays; the workspace then refuses writes, yet a command may
// still delete, after which writes succeed again. With and without the
// sandbox.
func TestCommandOverQuotaIsStopped(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		name := map[bool]string{true: "sandbox", false: "unconfined"}[sandboxed]
		t.Run(name, func(t *testing.T) {
			opts := Options{AllowCommands: []string{"python3", "rm"}}
			if sandboxed {
				needBwrap(t)
				opts.Sandbox = sandbox.New(nil)
			}
			const limit = 4 << 20
			s, dir := quotaSet(t, limit, opts)
			keep := strings.Repeat("k", 1<<20-1) + "\n"
			wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "keep.txt", "content": keep}))

			// The script never ends by itself: only the quota (or the
			// test's guard, a timeout that fails) stops it.
			res := callTool(t, s, "ptc", map[string]any{"content": fillForever, "timeout_s": 60})
			wantErr(t, res, "stopped: workspace quota exceeded", quotaKey)
			if strings.Contains(res.Content, "timed out") {
				t.Fatalf("the command ran into its timeout instead:\n%s", res.Content)
			}
			if got := readFile(t, filepath.Join(dir, "keep.txt")); got != keep {
				t.Errorf("keep.txt changed (%d bytes)", len(got))
			}
			n, err := measureDir(t.Context(), dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: stopped at %d bytes, %d over the %d-byte quota", name, n, n-limit, limit)
			if n <= limit {
				t.Errorf("stopped at %d bytes, not over the quota of %d", n, limit)
			}

			wantErr(t, callTool(t, s, "write_file", map[string]any{"path": "more.txt", "content": "m"}), quotaKey)
			// A command in a workspace over its quota runs (and is not
			// stopped for the excess it did not make): it may delete.
			wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": "python3 -c \"import time; time.sleep(0.3)\""}))
			wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": "rm -r junk"}))
			wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "more.txt", "content": "m"}))
		})
	}
}

// TestCommandFileIsBoundedByTheHeadroom: in the sandbox no file can grow
// past what is left of the quota; the result says why the program died.
func TestCommandFileIsBoundedByTheHeadroom(t *testing.T) {
	needBwrap(t)
	const limit = 4 << 20
	s, dir := quotaSet(t, limit, Options{Sandbox: sandbox.New(nil), AllowCommands: []string{"python3"}})
	wantOK(t, callTool(t, s, "write_file", map[string]any{"path": "keep.txt", "content": strings.Repeat("k", 1<<20)}))
	res := callTool(t, s, "execute_command", map[string]any{"command": `python3 -c "open('big', 'wb').write(b'x' * 8000000)"`})
	wantErr(t, res, "File too large", "3.0 MiB, what was left of the workspace quota", quotaKey)
	info, err := os.Stat(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > limit-1<<20 {
		t.Errorf("big grew to %d bytes, past the %d left", info.Size(), limit-1<<20)
	}
}

// TestCommandHeadroomIsMeasuredWhenStale: files deleted behind the
// account's back (the janitor's) do not shrink a command's headroom once
// its figure is older than quotaRecheck.
func TestCommandHeadroomIsMeasuredWhenStale(t *testing.T) {
	needBwrap(t)
	const limit = 4 << 20
	s, dir := quotaSet(t, limit, Options{Sandbox: sandbox.New(nil), AllowCommands: []string{"python3"}})
	if _, err := s.WriteFile(t.Context(), testUser, "old.bin", strings.NewReader(strings.Repeat("o", 4<<20)), true); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "old.bin")); err != nil {
		t.Fatal(err)
	}
	s.quota.account(dir).at = s.quota.account(dir).at.Add(-2 * quotaRecheck)
	wantOK(t, callTool(t, s, "execute_command", map[string]any{"command": `python3 -c "open('new', 'wb').write(b'x' * 1000000)"`}))
}
