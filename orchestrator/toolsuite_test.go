package orchestrator_test

import (
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// TestFinalResponseToolsetContract runs the core's own tool through the
// shared toolset suite.
func TestFinalResponseToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(*testing.T) orchestrator.Toolset {
		return orchestrator.StaticToolset{SetName: "core", List: []orchestrator.Tool{orchestrator.FinalResponseToolForTest}}
	}, orchestratortest.WithBareString(orchestrator.FinalResponseTool))
}
