package toolconfigtest

import "testing"

func TestMemStore(t *testing.T) {
	RunStoreTests(t, func(*testing.T) Stores { return NewMemStore() })
}
