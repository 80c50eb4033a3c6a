// Package bwrap holds the one rule for tests that need bubblewrap: skip,
// loudly, where it is missing; fail in CI (CI=true), where .ci/run
// installs it, so a sandbox test can never pass by not running.
package bwrap

import (
	"os"
	"os/exec"
	"testing"
)

// Need skips or fails t when bwrap is not on PATH; what names the tests
// that would not run.
func Need(t testing.TB, what string) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("bubblewrap (bwrap) is not installed; CI must run %s (.ci/run installs it)", what)
	}
	t.Skipf("!!! SKIPPED: bubblewrap (bwrap) is not installed; %s did NOT run (apt-get install bubblewrap)", what)
}
