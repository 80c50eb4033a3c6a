package main

import (
	"os"
	"testing"
)

// TestMain lets a test start this very binary as `wunder` (fault tests kill
// it with SIGKILL): with WUNDER_TEST_EXEC_MAIN=1 it runs the CLI instead of
// the tests.
func TestMain(m *testing.M) {
	if os.Getenv("WUNDER_TEST_EXEC_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}
