// Package a2anpm gives tests the pinned @a2a-js/sdk 1.3.0 peers of
// testdata/a2a-js (a client script and an echo agent), installing them with
// `npm ci` on first use. Without node or npm the tests skip with a loud
// message, except under CI=true, where they fail.
package a2anpm

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

var installMu sync.Mutex

// Dir returns testdata/a2a-js with its node_modules installed.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "a2a-js")
	installMu.Lock()
	defer installMu.Unlock()
	marker := filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not on PATH")
	}
	if _, err := os.Stat(marker); err == nil {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable(t, "npm is not on PATH")
	}
	// A lock so parallel test binaries do not install at once.
	if lock, err := os.OpenFile(filepath.Join(os.TempDir(), "wunder-a2anpm.lock"), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		defer lock.Close()
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	}
	if _, err := os.Stat(marker); err == nil {
		return dir
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, "npm ci in "+dir+" failed: "+err.Error()+"\n"+string(out))
	}
	return dir
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("@a2a-js/sdk peers unavailable under CI=true: %s", why)
	}
	t.Skipf("SKIPPED LOUDLY: @a2a-js/sdk peers unavailable (%s); the A2A JS interop tests did not run", why)
}
