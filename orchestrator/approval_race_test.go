package orchestrator_test

import (
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// A cancel that comes while the run is still suspending (right after its
// approval_required event, before it is stored as waiting) is not lost:
// the run ends cancelled. `wunder run` does exactly this when Ctrl-C
// interrupts its question.
func TestCancelWhileSuspending(t *testing.T) {
	for range 20 {
		d := &deployTool{}
		h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
		run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
		untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
		if _, err := h.o.Cancel(t.Context(), "u", run.ID); err != nil {
			t.Fatal(err)
		}
		if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunCancelled {
			t.Fatalf("final = %+v", f)
		}
		if c := d.called(); len(c) != 0 {
			t.Fatalf("a cancelled run's call ran: %v", c)
		}
	}
}
