package mcpsession_test

import (
	"testing"

	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/mcpsession/mcpsessiontest"
)

func TestMemStore(t *testing.T) {
	mcpsessiontest.RunStoreTests(t, func(*testing.T) mcpsession.Store { return mcpsession.NewMemStore() })
}
