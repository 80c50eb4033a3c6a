package memorytest

import (
	"testing"

	"github.com/wunder/wunder/memory"
)

func TestMemStore(t *testing.T) {
	RunStoreTests(t, func(*testing.T) memory.Store { return NewMemStore() })
}
