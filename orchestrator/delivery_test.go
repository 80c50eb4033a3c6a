package orchestrator_test

import (
	"errors"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// TestDelivery pins what each delivery means to the core: whether the
// caller reads only the end, takes the answer whole, and learns the ids
// only with the events.
func TestDelivery(t *testing.T) {
	for _, c := range []struct {
		d                     orchestrator.Delivery
		name                  string
		blocking, whole, late bool
	}{
		{orchestrator.DeliverFollowed, "followed", false, false, false},
		{orchestrator.DeliverStreamed, "streamed", false, false, true},
		{orchestrator.DeliverBlocking, "blocking", true, true, false},
		{orchestrator.DeliverTask, "task", false, true, false},
		{orchestrator.DeliverTaskStreamed, "task_streamed", false, true, true},
	} {
		if got := [3]bool{c.d.Blocking(), c.d.WholeAnswer(), c.d.IDsWithEvents()}; got != [3]bool{c.blocking, c.whole, c.late} {
			t.Errorf("%s: blocking, whole, ids with events = %v", c.name, got)
		}
		if c.d.String() != c.name {
			t.Errorf("%d.String() = %q, want %q", int(c.d), c.d.String(), c.name)
		}
	}
}

// TestUnknownDeliveryRefused: a delivery the core does not know is a bad
// request, not a run read some default way.
func TestUnknownDeliveryRefused(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for _, d := range []orchestrator.Delivery{-1, orchestrator.DeliverTaskStreamed + 1} {
		_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "q", Delivery: d})
		if !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("delivery %d: %v, want ErrInvalidArgument", int(d), err)
		}
	}
}
