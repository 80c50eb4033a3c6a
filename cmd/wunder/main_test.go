package main

import (
	"os"
	"testing"
)

// asWunderEnv makes the test binary run wunder's main instead of the tests,
// so a test can configure the real command as a child process (an MCP
// stdio server of a wunder, for instance). Children get it through the
// env of their configuration: wunder passes nothing else of its own.
const asWunderEnv = "WUNDER_CMD_TEST_AS_WUNDER"

func TestMain(m *testing.M) {
	if os.Getenv(asWunderEnv) == "1" {
		main()
	}
	if os.Getenv(asFakeLSPEnv) == "1" { // console_admin_test.go
		fakeLSP(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	os.Exit(m.Run())
}
