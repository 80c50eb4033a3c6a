package orchestratortest

import (
	"context"

	"github.com/wunder/wunder/orchestrator"
)

// Instances plays [orchestrator.Instances] for the recovery of work other
// than runs: ID is this instance's, Gone lists the instances that are
// gone (the others are alive), and Err, when set, is what InstanceGone
// answers about another instance (a store that cannot say).
type Instances struct {
	ID   string
	Gone map[string]bool
	Err  error
}

var _ orchestrator.Instances = Instances{}

func (i Instances) InstanceID() string { return i.ID }

func (Instances) HoldLease(context.Context) error { return nil }

func (i Instances) InstanceGone(_ context.Context, id string) (bool, error) {
	if id == i.ID {
		return false, nil
	}
	return i.Gone[id], i.Err
}
