package builtin

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/wunder/wunder/internal/sandbox"
)

// TestSandboxEscapeCorpus is the escape corpus of issue 9: through the real
// execute_command and ptc, alice tries to reach bob's workspace, the data
// dir, root-only files, the host's processes and network, to write outside
// her workspace and to outlive her call. Every attempt must fail.
func TestSandboxEscapeCorpus(t *testing.T) {
	t.Setenv("WUNDER_TEST_SECRET", "s3cret-env-9d1")
	f := newSandboxed(t, sandbox.Options{})

	// A refused attempt: whatever it printed, it must not hold these.
	leaks := []string{bobSecret, "DATABASE", "api_key", "s3cret-env-9d1"}
	wantNoLeak := func(t *testing.T, out string) {
		t.Helper()
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("ESCAPE: output holds %q:\n%s", l, out)
			}
		}
	}
	reads := map[string]string{
		"relative":        "cat ../bob/secret.txt",
		"absolute":        "cat " + f.bobSecret,
		"proc 1 root":     "cat /proc/1/root" + f.bobSecret,
		"proc self root":  "cat /proc/self/root/../bob/secret.txt",
		"data dir db":     "cat " + filepath.Join(f.data, "wunder.db"),
		"config file":     "cat " + filepath.Join(f.data, "config", "wunder.yaml"),
		"wunder environ":  fmt.Sprintf("cat /proc/%d/environ", os.Getpid()),
		"every environ":   "sh -c 'cat /proc/*/environ'",
		"shadow":          "cat /etc/shadow",
		"list other root": "ls " + f.root,
	}
	for name, cmd := range reads {
		t.Run("read "+name, func(t *testing.T) {
			out, _ := f.run(t, cmd)
			wantNoLeak(t, out)
		})
	}
	t.Run("read shadow is denied", func(t *testing.T) {
		out, isErr := f.run(t, "cat /etc/shadow")
		if !isErr || strings.Contains(out, "root:") {
			t.Errorf("ESCAPE: /etc/shadow was read:\n%s", out)
		}
	})
	t.Run("host processes are invisible", func(t *testing.T) {
		for _, cmd := range []string{fmt.Sprintf("cat /proc/%d/environ", os.Getpid()), fmt.Sprintf("ls /proc/%d", os.Getpid())} {
			if out, isErr := f.run(t, cmd); !isErr {
				t.Errorf("ESCAPE: %s works inside the sandbox:\n%s", cmd, out)
			}
		}
	})
	t.Run("ls .. lists no user", func(t *testing.T) {
		for _, cmd := range []string{"ls ..", "ls -a /", "ls /proc/1/root/"} {
			out, _ := f.run(t, cmd)
			if strings.Contains(out, "bob") || strings.Contains(out, "alice") {
				t.Errorf("ESCAPE: %s lists user ids:\n%s", cmd, out)
			}
		}
	})
	t.Run("runs unprivileged", func(t *testing.T) {
		out, _ := f.run(t, "id -u")
		if uid := strings.TrimSpace(strings.TrimPrefix(out, "exit code 0\n")); uid == "0" || uid == "" {
			t.Errorf("ESCAPE: the command runs as uid %q", uid)
		}
	})

	t.Run("writes outside the workspace", func(t *testing.T) {
		probe := fmt.Sprintf("wunder-probe-%d", os.Getpid())
		out, isErr := f.run(t, fmt.Sprintf(`sh -c 'echo private > /tmp/%s && cat /tmp/%s'`, probe, probe))
		if isErr || !strings.Contains(out, "private") {
			t.Fatalf("the private /tmp is not writable: %s", out)
		}
		if _, err := os.Stat(filepath.Join("/tmp", probe)); err == nil {
			t.Errorf("ESCAPE: the sandbox's /tmp is the host's")
		}
		if out, isErr := f.run(t, "cat /tmp/"+probe); !isErr {
			t.Errorf("ESCAPE: /tmp outlived its call:\n%s", out)
		}
		for _, p := range []string{"/usr/" + probe, "/etc/" + probe, filepath.Join(f.data, probe), filepath.Join(f.bob, probe)} {
			f.run(t, "touch "+p)
			if _, err := os.Lstat(p); err == nil {
				os.Remove(p)
				t.Errorf("ESCAPE: wrote %s", p)
			}
		}
	})

	t.Run("network", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		connect := fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("127.0.0.1", %d), timeout=5); print("CONNECTED")'`, port)
		out, isErr := f.run(t, connect)
		if !isErr || strings.Contains(out, "CONNECTED") {
			t.Errorf("ESCAPE: reached the host's 127.0.0.1:%d:\n%s", port, out)
		}
		netSet := newSandboxed(t, sandbox.Options{Network: true})
		if out, isErr := netSet.run(t, connect); isErr || !strings.Contains(out, "CONNECTED") {
			t.Errorf("with network: true the host's loopback is unreachable:\n%s", out)
		}
		ln.Close()
		<-done
		if n := accepted.Load(); n != 1 {
			t.Errorf("the listener accepted %d connections, want exactly the one with network: true", n)
		}
	})

	t.Run("fork bomb", func(t *testing.T) {
		bomb := "import os, time\n" +
			"open('bomb_ns', 'w').write(os.readlink('/proc/self/ns/pid'))\n" +
			"while True:\n" +
			"    try:\n" +
			"        os.fork()\n" +
			"    except OSError:\n" +
			"        time.sleep(0.01)\n"
		res := callTool(t, f.set, "ptc", map[string]any{"content": bomb, "timeout_s": 2})
		wantErr(t, res, "timed out")
		wantNamespaceGone(t, readFile(t, filepath.Join(f.alice, "bomb_ns")))
		if out, isErr := f.run(t, "echo survived"); isErr || !strings.Contains(out, "survived") {
			t.Errorf("the next call failed after a fork bomb:\n%s", out)
		}
	})

	t.Run("setsid and nohup grandchildren", func(t *testing.T) {
		script := `readlink /proc/self/ns/pid > late_ns; ` +
			`setsid sh -c "sleep 2; echo late > late_setsid" & ` +
			`nohup sh -c "sleep 2; echo late > late_nohup" >/dev/null 2>&1 & ` +
			`sleep 60`
		out, isErr := f.run(t, "sh -c '"+script+"'", "timeout_s", 1)
		if !isErr || !strings.Contains(out, "timed out") {
			t.Fatalf("want a timeout:\n%s", out)
		}
		// Once no process of the namespace is left, nothing can write the
		// files any more: their absence then is final, not a race.
		wantNamespaceGone(t, readFile(t, filepath.Join(f.alice, "late_ns")))
		for _, p := range []string{"late_setsid", "late_nohup"} {
			if _, err := os.Stat(filepath.Join(f.alice, p)); err == nil {
				t.Errorf("ESCAPE: a grandchild wrote %s after the call's timeout", p)
			}
		}
	})

	t.Run("planted symlinks", func(t *testing.T) {
		plant := fmt.Sprintf(`sh -c 'ln -s /etc/passwd pw; ln -s ../bob bobrel; ln -s %s bobabs; ln -s %s bobsecret; ln -s / rootlink; ln %s hard'`,
			f.bob, f.bobSecret, f.bobSecret)
		f.run(t, plant)
		for _, cmd := range []string{"cat bobrel/secret.txt", "cat bobabs/secret.txt", "cat bobsecret", "cat hard", "ls rootlink/"} {
			out, _ := f.run(t, cmd)
			wantNoLeak(t, out)
		}
		for _, p := range []string{"bobrel/secret.txt", "bobabs/secret.txt", "bobsecret", "pw", "rootlink/etc/passwd"} {
			wantErr(t, callTool(t, f.set, "read_file", map[string]any{"path": p}))
			callTool(t, f.set, "write_file", map[string]any{"path": p, "content": "pwned\n"})
		}
		if got := readFile(t, f.bobSecret); got != bobSecret+"\n" {
			t.Errorf("ESCAPE: bob's file became %q", got)
		}
		// Another call re-owns alice's workspace with the links in it.
		f.run(t, "echo again")
		for _, p := range []string{f.bob, f.bobSecret, "/etc/passwd"} {
			var st syscall.Stat_t
			if err := syscall.Stat(p, &st); err != nil {
				t.Fatal(err)
			}
			if int(st.Uid) != os.Geteuid() {
				t.Errorf("ESCAPE: %s outside the workspace was re-owned to uid %d", p, st.Uid)
			}
		}
	})
}

// TestSandboxSharesFilesWithTheFileTools checks that files move both ways:
// what a command writes, the file tools read and overwrite, and what they
// write, the next command reads and overwrites.
func TestSandboxSharesFilesWithTheFileTools(t *testing.T) {
	f := newSandboxed(t, sandbox.Options{})
	if out, isErr := f.run(t, `sh -c 'mkdir -p made && echo from-sandbox > made/f.txt'`); isErr {
		t.Fatal(out)
	}
	wantOK(t, callTool(t, f.set, "read_file", map[string]any{"path": "made/f.txt"}), "from-sandbox")
	wantOK(t, callTool(t, f.set, "write_file", map[string]any{"path": "made/f.txt", "content": "from-tools\n"}))
	wantOK(t, callTool(t, f.set, "write_file", map[string]any{"path": "made/new.txt", "content": "new\n"}))
	out, isErr := f.run(t, `sh -c 'cat made/f.txt made/new.txt && echo more >> made/new.txt && rm made/f.txt'`)
	if isErr || !strings.Contains(out, "from-tools\nnew\n") {
		t.Fatalf("the sandbox cannot use files of the file tools:\n%s", out)
	}
	if got := readFile(t, filepath.Join(f.alice, "made", "new.txt")); got != "new\nmore\n" {
		t.Errorf("new.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.alice, "made", "f.txt")); err == nil {
		t.Error("the sandbox could not remove a file the tools wrote")
	}
}
