package orchestrator_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the orchestrator starts has an owner that waits for it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
