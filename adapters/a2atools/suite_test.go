package a2atools_test

import (
	"testing"

	"github.com/wunder/wunder/adapters/a2atools"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// TestToolsetContract runs the shared toolset suite on a2a@service tools
// against an in-process go-sdk echo peer.
func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		return newSet(t, a2atools.Service{Name: "goecho", URL: startGoEcho(t)})
	})
}
