// Package npmpeers gives tests the pinned npm peers of a directory under
// testdata/ (its package.json and package-lock.json), installing them with
// `npm ci` on first use. Peers nobody here wrote — the MCP conformance suite
// and reference servers, the A2A JS SDK — are how wunder's protocols are
// tested. Without npm (or node) the tests skip with a loud message, except
// under CI=true, where they fail.
package npmpeers

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// installMu serialises installs within a test binary; a file lock does it
// across the test binaries go test runs in parallel.
var installMu sync.Mutex

// Dir returns testdata/<name> with its node_modules installed. markers are
// paths under node_modules that exist once the install is complete; what
// names the peers in skip and failure messages.
func Dir(t testing.TB, name, what string, markers ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", name)
	installed := func() bool {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
				return false
			}
		}
		return true
	}
	installMu.Lock()
	defer installMu.Unlock()
	if installed() {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable(t, what, "npm is not on PATH")
	}
	if lock, err := os.OpenFile(filepath.Join(os.TempDir(), "wunder-npmpeers-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
		defer lock.Close()
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	}
	if installed() {
		return dir
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, what, "npm ci in "+dir+" failed: "+err.Error()+"\n"+string(out))
	}
	if !installed() {
		unavailable(t, what, "npm ci in "+dir+" did not install "+filepath.Join(markers...))
	}
	return dir
}

// Require fails (CI=true) or skips the test loudly when program is not on
// PATH.
func Require(t testing.TB, program, what string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		unavailable(t, what, program+" is not on PATH")
	}
}

func unavailable(t testing.TB, what, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s unavailable under CI=true: %s", what, why)
	}
	t.Skipf("SKIPPED LOUDLY: %s unavailable (%s); these interop tests did not run", what, why)
}
