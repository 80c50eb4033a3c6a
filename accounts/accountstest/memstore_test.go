package accountstest

import (
	"testing"

	"github.com/wunder/wunder/accounts"
)

func TestMemStore(t *testing.T) {
	RunStoreTests(t, func(*testing.T) accounts.Store { return NewMemStore() })
}
