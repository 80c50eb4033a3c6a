package lsptools_test

import (
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// TestToolsetContract runs the shared toolset suite on the lsp tools over
// a pool whose server is never started: the contract is about specs and
// argument handling, which come before any server is needed (the gopls
// tests cover real answers).
func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		return newOffline(t, t.TempDir()).lsp
	})
}
