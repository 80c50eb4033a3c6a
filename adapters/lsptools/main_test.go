package lsptools_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every worker, reader and watcher goroutine ends with its pool.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
